#include "strategic_merge.h"

#include <string_view>

namespace rw::workload::trainjob {
namespace {

using nlohmann::json;

struct Field {
  Shape child = Shape::kOther;
  std::string_view merge_key{};  // "" for an object or a list replaced whole
};

// The fields whose type matters to the merge: k8s.io/api core/v1 and batch/v1
// (patchMergeKey tags), and JobSet's replicatedJobs, which Trainer merges by name.
Field FieldOf(Shape shape, std::string_view name) {
  switch (shape) {
    case Shape::kJobSetSpec:
      if (name == "replicatedJobs") return {Shape::kReplicatedJob, "name"};
      break;
    case Shape::kReplicatedJob:
      if (name == "template") return {Shape::kJobTemplate};
      break;
    case Shape::kJobTemplate:
      if (name == "spec") return {Shape::kJobSpec};
      break;
    case Shape::kJobSpec:
      if (name == "template") return {Shape::kPodTemplate};
      break;
    case Shape::kPodTemplate:
      if (name == "spec") return {Shape::kPodSpec};
      break;
    case Shape::kPodSpec:
      if (name == "containers" || name == "initContainers" || name == "ephemeralContainers")
        return {Shape::kContainer, "name"};
      if (name == "volumes" || name == "imagePullSecrets" || name == "schedulingGates" ||
          name == "resourceClaims")
        return {Shape::kOther, "name"};
      if (name == "hostAliases") return {Shape::kOther, "ip"};
      if (name == "topologySpreadConstraints") return {Shape::kOther, "topologyKey"};
      break;
    case Shape::kContainer:
      if (name == "env") return {Shape::kOther, "name"};
      if (name == "volumeMounts") return {Shape::kOther, "mountPath"};
      if (name == "ports") return {Shape::kOther, "containerPort"};
      if (name == "volumeDevices") return {Shape::kOther, "devicePath"};
      if (name == "resources") return {Shape::kResources};
      break;
    case Shape::kResources:
      if (name == "claims") return {Shape::kOther, "name"};
      break;
    case Shape::kOther:
      break;
  }
  return {};
}

void MergeList(json& target, const json& patch, const Field& f) {
  if (!target.is_array()) target = json::array();
  for (const auto& item : patch) {
    if (!item.is_object() || !item.contains(f.merge_key)) {
      target.push_back(item);  // the API server refuses an item without its key; keep it visible
      continue;
    }
    const json& key = item[std::string(f.merge_key)];
    json* match = nullptr;
    for (auto& existing : target)
      if (existing.is_object() && existing.contains(f.merge_key) &&
          existing[std::string(f.merge_key)] == key) {
        match = &existing;
        break;
      }
    if (match)
      StrategicMerge(*match, item, f.child);
    else
      target.push_back(item);
  }
}

}  // namespace

void StrategicMerge(json& target, const json& patch, Shape shape) {
  if (!patch.is_object() || !target.is_object()) {
    if (!patch.is_null()) target = patch;
    return;
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it->is_null()) continue;
    const Field f = FieldOf(shape, it.key());
    auto existing = target.find(it.key());
    if (existing == target.end()) {
      target[it.key()] = *it;
    } else if (it->is_array() && !f.merge_key.empty()) {
      MergeList(*existing, *it, f);
    } else if (it->is_object() && existing->is_object()) {
      StrategicMerge(*existing, *it, f.child);
    } else {
      *existing = *it;
    }
  }
}

}  // namespace rw::workload::trainjob
