#pragma once
// Kubernetes' strategic merge patch, as far as Trainer applies it to a runtime's JobSet spec:
// objects merge field by field, lists the Kubernetes types mark with a merge key (containers and
// volumes by name, volumeMounts by mountPath, ...) merge item by item (patch-only items appended
// in the patch's order), every other list and every scalar is replaced. Trainer marshals its
// typed patch structs first, so a patch never holds nulls or `$patch` directives: nulls are
// skipped, directives are not read.
#include <nlohmann/json.hpp>

namespace rw::workload::trainjob {

// Which Kubernetes type a JSON value is, where the merge keys of its lists depend on it.
enum class Shape {
  kOther,
  kJobSetSpec,
  kReplicatedJob,
  kJobTemplate,
  kJobSpec,
  kPodTemplate,
  kPodSpec,
  kContainer,
  kResources,
};

// Merges `patch` into `target`, both of type `shape`.
void StrategicMerge(nlohmann::json& target, const nlohmann::json& patch, Shape shape);

}  // namespace rw::workload::trainjob
