#include "rdma_webhook/rules/suppression.h"

#include <algorithm>
#include <iterator>

namespace rw::rules {
namespace {

// The annotation that suppresses `rule` in `annotations`, if any.
const std::string* IgnoreCheck(const std::map<std::string, std::string>& annotations,
                               std::string_view rule) {
  const auto it = annotations.find(std::string(kIgnoreCheckPrefix) + std::string(rule));
  return it == annotations.end() ? nullptr : &it->second;
}

std::string AnnotationPointer(const std::string& metadata, std::string_view rule) {
  return metadata + "/annotations/" +
         workload::EscapePointerToken(std::string(kIgnoreCheckPrefix) + std::string(rule));
}

// Whether `pointer` is `within` or below it (at a token boundary).
bool Inside(const std::string& pointer, const std::string& within) {
  return pointer.compare(0, within.size(), within) == 0 &&
         (pointer.size() == within.size() || pointer[within.size()] == '/');
}

}  // namespace

bool Suppressible(std::string_view rule) {
  return rule != "path-not-allowed" && rule != "policy-conflict";
}

void Suppress(const workload::Workload& w, std::vector<Finding>& findings,
              std::vector<Suppressed>& suppressed) {
  std::vector<Finding> kept;
  for (auto& f : findings) {
    const std::string* reason = nullptr;
    std::string annotation;
    if (Suppressible(f.rule)) {
      if ((reason = IgnoreCheck(w.annotations, f.rule)) != nullptr) {
        annotation = AnnotationPointer("/metadata", f.rule);
      } else {
        // A Pod is its own template (pointer ""): its metadata was looked at above.
        for (const auto& t : w.templates) {
          if (t.pointer.empty() || !Inside(f.pointer, t.pointer)) continue;
          if ((reason = IgnoreCheck(t.annotations, f.rule)) != nullptr) {
            annotation = AnnotationPointer(t.MetadataPointer(), f.rule);
            break;
          }
        }
      }
    }
    if (reason == nullptr) {
      kept.push_back(std::move(f));
    } else {
      suppressed.push_back({std::move(f), *reason, std::move(annotation)});
    }
  }
  findings = std::move(kept);
}

}  // namespace rw::rules
