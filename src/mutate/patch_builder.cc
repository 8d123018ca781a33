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
    const auto path = [&pointer, end] { return std::string_view(pointer).substr(0, end); };
    const bool last = end == pointer.size();
    if (node->is_array()) {
      auto& items = node->get_array();
      bj::value& child = items[Index(token, items)];
      if (last) {
        bj::value next = codec::ToDom(value, doc_.storage());
        if (codec::SameValue(child, next)) return;
        ops_.Record("replace", path(), &value);
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
      bj::value made = codec::ToDom(nested, doc_.storage());
      ops_.Record(child != nullptr ? "replace" : "add", path(), &nested);
      members[token] = std::move(made);
      return;
    }
    if (last) {
      bj::value next = codec::ToDom(value, doc_.storage());
      if (codec::SameValue(*child, next)) return;
      ops_.Record("replace", path(), &value);
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
  bj::value made = codec::ToDom(value, doc_.storage());
  ops_.Record("add", pointer + "/" + std::to_string(items.size()), &value);
  items.push_back(std::move(made));
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
    const auto at = items.begin() + static_cast<std::ptrdiff_t>(Index(last, items));
    ops_.Record("remove", pointer, nullptr);
    items.erase(at);
  } else {
    auto& members = parent->as_object();
    const auto at = members.find(last);
    if (at == members.end()) throw std::out_of_range("no value at " + pointer + " to remove");
    ops_.Record("remove", pointer, nullptr);
    members.erase(at);
  }
}

}  // namespace rw::mutate
