#include "patch_builder.h"

#include <vector>

#include "rdma_webhook/workload/workload.h"

namespace rw::mutate {
namespace {

using nlohmann::json;

std::vector<std::string> Tokens(const std::string& pointer) {
  return workload::PointerTokens(pointer);
}
std::string Escape(const std::string& token) { return workload::EscapePointerToken(token); }

}  // namespace

void PatchBuilder::Set(const std::string& pointer, json value) {
  const auto tokens = Tokens(pointer);
  json* node = &doc_;
  std::string path;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    const std::string child_path = path + "/" + Escape(token);
    const bool last = i + 1 == tokens.size();
    if (node->is_array()) {
      const std::size_t index = std::stoul(token);
      json& child = node->at(index);
      if (last) {
        if (child == value) return;
        ops_.push_back({{"op", "replace"}, {"path", child_path}, {"value", value}});
        child = std::move(value);
        return;
      }
      node = &child;
      path = child_path;
      continue;
    }
    auto it = node->find(token);
    if (it == node->end() || it->is_null()) {
      // Build the missing subtree and add it in one operation.
      json nested = std::move(value);
      for (std::size_t j = tokens.size() - 1; j > i; --j)
        nested = json{{tokens[j], std::move(nested)}};
      const bool existed = it != node->end();
      ops_.push_back(
          {{"op", existed ? "replace" : "add"}, {"path", child_path}, {"value", nested}});
      (*node)[token] = std::move(nested);
      return;
    }
    if (last) {
      if (*it == value) return;
      ops_.push_back({{"op", "replace"}, {"path", child_path}, {"value", value}});
      *it = std::move(value);
      return;
    }
    node = &*it;
    path = child_path;
  }
}

void PatchBuilder::Append(const std::string& pointer, json value) {
  const json::json_pointer ptr(pointer);
  if (!doc_.contains(ptr) || doc_.at(ptr).is_null()) {
    Set(pointer, json::array({std::move(value)}));
    return;
  }
  json& array = doc_.at(ptr);
  ops_.push_back(
      {{"op", "add"}, {"path", pointer + "/" + std::to_string(array.size())}, {"value", value}});
  array.push_back(std::move(value));
}

}  // namespace rw::mutate
