#include "patch_builder.h"

#include <vector>

#include "rdma_webhook/workload/workload.h"

namespace rw::mutate {
namespace {

using nlohmann::json;

// One operation, built member by member: json's initializer-list constructor would copy the
// value twice (its elements are const), and a review's patch is built once per request.
json Operation(const char* op, std::string path, const json& value) {
  json operation(json::value_t::object);
  auto& members = operation.get_ref<json::object_t&>();
  members.emplace("op", op);
  members.emplace("path", std::move(path));
  members.emplace("value", value);
  return operation;
}

}  // namespace

void PatchBuilder::Set(const std::string& pointer, json value) {
  const auto tokens = workload::PointerTokens(pointer);
  json* node = &doc_;
  std::string path;
  path.reserve(pointer.size() + 8);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    path += '/';
    path += workload::EscapePointerToken(token);  // now the pointer of the child
    const bool last = i + 1 == tokens.size();
    if (node->is_array()) {
      const std::size_t index = std::stoul(token);
      json& child = node->at(index);
      if (last) {
        if (child == value) return;
        ops_.push_back(Operation("replace", std::move(path), value));
        child = std::move(value);
        return;
      }
      node = &child;
      continue;
    }
    auto it = node->find(token);
    if (it == node->end() || it->is_null()) {
      // Build the missing subtree and add it in one operation.
      json nested = std::move(value);
      for (std::size_t j = tokens.size() - 1; j > i; --j) {
        json parent(json::value_t::object);
        parent.get_ref<json::object_t&>().emplace(tokens[j], std::move(nested));
        nested = std::move(parent);
      }
      const bool existed = it != node->end();
      ops_.push_back(Operation(existed ? "replace" : "add", std::move(path), nested));
      (*node)[token] = std::move(nested);
      return;
    }
    if (last) {
      if (*it == value) return;
      ops_.push_back(Operation("replace", std::move(path), value));
      *it = std::move(value);
      return;
    }
    node = &*it;
  }
}

void PatchBuilder::Append(const std::string& pointer, json value) {
  // One walk down the pointer: the array, or nullptr when a member on the way is missing.
  json* array = &doc_;
  for (const auto& token : workload::PointerTokens(pointer)) {
    if (array->is_array()) {
      const std::size_t index = std::stoul(token);
      array = index < array->size() ? &(*array)[index] : nullptr;
    } else if (array->is_object()) {
      auto it = array->find(token);
      array = it != array->end() ? &*it : nullptr;
    } else {
      array = nullptr;
    }
    if (array == nullptr) break;
  }
  if (array == nullptr || array->is_null()) {
    Set(pointer, json::array({std::move(value)}));
    return;
  }
  ops_.push_back(Operation("add", pointer + "/" + std::to_string(array->size()), value));
  array->push_back(std::move(value));
}

void PatchBuilder::Remove(const std::string& pointer) {
  const json::json_pointer p(pointer);
  json& parent = doc_.at(p.parent_pointer());
  if (parent.is_array())
    parent.erase(std::stoul(p.back()));
  else
    parent.erase(p.back());
  json operation(json::value_t::object);
  operation.get_ref<json::object_t&>().emplace("op", "remove");
  operation.get_ref<json::object_t&>().emplace("path", pointer);
  ops_.push_back(std::move(operation));
}

}  // namespace rw::mutate
