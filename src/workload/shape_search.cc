// Pod templates of kinds the kinds table does not know, found by what they look like. Operators
// keep pod templates under their own field names (a Ray cluster's head group, a role of a role
// group, a serving runtime's own spec), and a new operator appears faster than a row for it.
#include <string>

#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::workload {
namespace {

namespace bj = boost::json;

bool IsPodTemplateShape(const bj::value& node) {
  if (!node.is_object()) return false;
  const bj::value* spec = node.get_object().if_contains("spec");
  if (spec == nullptr || !spec->is_object()) return false;
  const bj::value* containers = spec->get_object().if_contains("containers");
  if (containers == nullptr || !containers->is_array() || containers->get_array().empty())
    return false;
  for (const auto& c : containers->get_array()) {
    if (!c.is_object()) return false;
    const bj::value* name = c.get_object().if_contains("name");
    if (name == nullptr || !name->is_string() || name->get_string().empty()) return false;
  }
  return true;
}

bool Structured(const bj::value& v) { return v.is_object() || v.is_array(); }

class Search {
 public:
  explicit Search(ShapeSearch& out) : out_(out) {}

  void Visit(const bj::value& node, const std::string& pointer, std::size_t depth) {
    if (out_.truncated) return;
    if (++visits_ > kMaxShapeVisits || depth > kMaxShapeDepth) {
      out_.truncated = true;
      return;
    }
    if (IsPodTemplateShape(node)) {
      if (out_.pointers.size() == kMaxShapeTemplates) {
        out_.truncated = true;
        return;
      }
      out_.pointers.push_back(pointer);
      return;  // a pod template holds no pod templates
    }
    if (node.is_object()) {
      for (const auto* m : codec::SortedMembers(node.get_object())) {
        // The object's metadata and status are not what runs.
        if (depth == 0 && (m->key() == "metadata" || m->key() == "status")) continue;
        if (!Structured(m->value())) continue;
        Visit(m->value(), pointer + "/" + EscapePointerToken(m->key()), depth + 1);
      }
    } else if (node.is_array()) {
      const auto& items = node.get_array();
      for (std::size_t i = 0; i < items.size(); ++i)
        if (Structured(items[i])) Visit(items[i], pointer + "/" + std::to_string(i), depth + 1);
    }
  }

 private:
  ShapeSearch& out_;
  std::size_t visits_ = 0;
};

}  // namespace

ShapeSearch FindPodTemplatesByShape(const bj::value& object) {
  ShapeSearch out;
  if (object.is_object()) Search(out).Visit(object, "", 0);
  return out;
}

ShapeSearch FindPodTemplatesByShape(const nlohmann::json& object) {
  return FindPodTemplatesByShape(codec::ToDom(object));
}

}  // namespace rw::workload
