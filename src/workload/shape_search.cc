// Pod templates of kinds the kinds table does not know, found by what they look like. Operators
// keep pod templates under their own field names (a Ray cluster's head group, a role of a role
// group, a serving runtime's own spec), and a new operator appears faster than a row for it.
#include <string>

#include "rdma_webhook/workload/workload.h"

namespace rw::workload {
namespace {

using nlohmann::json;

bool IsPodTemplateShape(const json& node) {
  if (!node.is_object()) return false;
  const auto spec = node.find("spec");
  if (spec == node.end() || !spec->is_object()) return false;
  const auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array() || containers->empty()) return false;
  for (const auto& c : *containers) {
    if (!c.is_object()) return false;
    const auto name = c.find("name");
    if (name == c.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
      return false;
  }
  return true;
}

class Search {
 public:
  explicit Search(ShapeSearch& out) : out_(out) {}

  void Visit(const json& node, const std::string& pointer, std::size_t depth) {
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
      for (auto it = node.begin(); it != node.end(); ++it) {
        // The object's metadata and status are not what runs.
        if (depth == 0 && (it.key() == "metadata" || it.key() == "status")) continue;
        if (!it->is_structured()) continue;
        Visit(*it, pointer + "/" + EscapePointerToken(it.key()), depth + 1);
      }
    } else if (node.is_array()) {
      for (std::size_t i = 0; i < node.size(); ++i)
        if (node[i].is_structured()) Visit(node[i], pointer + "/" + std::to_string(i), depth + 1);
    }
  }

 private:
  ShapeSearch& out_;
  std::size_t visits_ = 0;
};

}  // namespace

ShapeSearch FindPodTemplatesByShape(const json& object) {
  ShapeSearch out;
  if (object.is_object()) Search(out).Visit(object, "", 0);
  return out;
}

}  // namespace rw::workload
