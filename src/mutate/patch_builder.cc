#include "patch_builder.h"

#include <charconv>
#include <stdexcept>
#include <vector>

#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::mutate {
namespace {

namespace bj = boost::json;
using nlohmann::json;

// One operation, built member by member: json's initializer-list constructor would copy the
// value twice (its elements are const), and a review's patch is built once per request.
json Operation(const char* op, std::string path, json value) {
  json operation(json::value_t::object);
  auto& members = operation.get_ref<json::object_t&>();
  members.emplace("op", op);
  members.emplace("path", std::move(path));
  members.emplace("value", std::move(value));
  return operation;
}

std::size_t Index(std::string_view token, const bj::array& items) {
  std::size_t index = 0;
  const auto [at, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  if (ec != std::errc() || at != token.data() + token.size())
    throw std::invalid_argument("array index '" + std::string(token) + "' is not a number");
  if (index >= items.size())
    throw std::out_of_range("array index " + std::string(token) + " is out of range");
  return index;
}

// The object a member is set in; a null one becomes an object, as nlohmann's operator[] makes it.
bj::object& Members(bj::value& node) {
  if (node.is_null()) node.emplace_object();
  return node.as_object();  // throws on another type: the plan never edits through one
}

}  // namespace

void PatchBuilder::Set(const std::string& pointer, json value) {
  bj::value* node = &doc_;
  std::string scratch;
  // The plan's pointers are written escaped token by token (EscapePointerToken), so the pointer
  // of the i-th child is the pointer's own text up to the i-th token's end: tokens are read as
  // views, none is escaped again, and the path is copied only for the operation recorded.
  std::size_t pos = 1;
  while (!pointer.empty() && pos <= pointer.size()) {
    const std::string_view token = codec::NextPointerToken(pointer, pos, scratch);
    const std::size_t end = pos - 1;  // the token's end in `pointer`
    const auto path = [&pointer, end] { return pointer.substr(0, end); };
    const bool last = end == pointer.size();
    if (node->is_array()) {
      auto& items = node->get_array();
      bj::value& child = items[Index(token, items)];
      if (last) {
        bj::value next = codec::ToDom(value, doc_.storage());
        if (codec::SameValue(child, next)) return;
        ops_.push_back(Operation("replace", path(), std::move(value)));
        child = std::move(next);
        return;
      }
      node = &child;
      continue;
    }
    bj::object& members = Members(*node);
    bj::value* child = members.if_contains(token);
    if (child == nullptr || child->is_null()) {
      // Build the missing subtree and add it in one operation.
      json nested = std::move(value);
      const auto below = workload::PointerTokens(std::string_view(pointer).substr(end));
      for (auto it = below.rbegin(); it != below.rend(); ++it) {
        json parent(json::value_t::object);
        parent.get_ref<json::object_t&>().emplace(*it, std::move(nested));
        nested = std::move(parent);
      }
      const bool existed = child != nullptr;
      members[token] = codec::ToDom(nested, doc_.storage());
      ops_.push_back(Operation(existed ? "replace" : "add", path(), std::move(nested)));
      return;
    }
    if (last) {
      bj::value next = codec::ToDom(value, doc_.storage());
      if (codec::SameValue(*child, next)) return;
      ops_.push_back(Operation("replace", path(), std::move(value)));
      *child = std::move(next);
      return;
    }
    node = child;
  }
}

void PatchBuilder::Append(const std::string& pointer, json value) {
  bj::value* array = codec::Find(doc_, pointer);
  if (array == nullptr || array->is_null()) {
    json items(json::value_t::array);
    items.push_back(std::move(value));
    Set(pointer, std::move(items));
    return;
  }
  auto& items = array->as_array();  // throws on another type: the plan appends to lists only
  const std::size_t index = items.size();
  items.push_back(codec::ToDom(value, doc_.storage()));
  ops_.push_back(Operation("add", pointer + "/" + std::to_string(index), std::move(value)));
}

void PatchBuilder::Remove(const std::string& pointer) {
  const std::size_t cut = pointer.rfind('/');
  if (cut == std::string::npos) throw std::out_of_range("cannot remove the document itself");
  bj::value* parent = codec::Find(doc_, pointer.substr(0, cut));
  const auto tokens = workload::PointerTokens(pointer);
  if (parent == nullptr || tokens.empty())
    throw std::out_of_range("no value at " + pointer + " to remove");
  const std::string& last = tokens.back();
  if (parent->is_array()) {
    auto& items = parent->get_array();
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(Index(last, items)));
  } else if (parent->as_object().erase(last) == 0) {
    throw std::out_of_range("no value at " + pointer + " to remove");
  }
  json operation(json::value_t::object);
  operation.get_ref<json::object_t&>().emplace("op", "remove");
  operation.get_ref<json::object_t&>().emplace("path", pointer);
  ops_.push_back(std::move(operation));
}

}  // namespace rw::mutate
