#pragma once
// A Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1) carries no pod template: Trainer
// builds a JobSet from the runtime it names (ClusterTrainingRuntime or TrainingRuntime) and the
// TrainJob's own fields. EffectiveTemplates builds that JobSet as Trainer v2.0 to v2.3 does
// (docs/trainer.md#how-trainer-builds-the-pods), so that the rules judge the pods that will run,
// and remembers where each value came from, so that a finding points at the field to change.
// Pure: no I/O; the caller finds the runtime.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::workload {

inline constexpr std::string_view kTrainerGroup = "trainer.kubeflow.org";
// The label on a runtime's replicated job that marks the one the TrainJob's spec.trainer feeds,
// and the name of its container that takes image, command, args, env and resourcesPerNode.
inline constexpr std::string_view kAncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step";
inline constexpr std::string_view kAncestorTrainer = "trainer";
inline constexpr std::string_view kNodeContainer = "node";
// The replicated jobs Trainer's MPI plugin knows by name (pkg/constants): the workers and the
// launcher, which `mlPolicy.mpi.runLauncherAsNode` makes one of the nodes.
inline constexpr std::string_view kNodeJob = "node";
inline constexpr std::string_view kLauncherJob = "launcher";

bool IsTrainJob(const nlohmann::json& object);

// What the TrainJob's spec.runtimeRef names; kind defaults to ClusterTrainingRuntime and the
// group to trainer.kubeflow.org, as Trainer's CRD defaults them.
struct RuntimeRef {
  std::string group;
  std::string kind;
  std::string name;
  std::string ns;  // "" for a ClusterTrainingRuntime
  bool IsTrainerRuntime() const {
    return group == kTrainerGroup &&
           (kind == "ClusterTrainingRuntime" || kind == "TrainingRuntime");
  }
  std::string Describe() const;  // "ClusterTrainingRuntime 'torch-distributed'"
};
// Throws ManifestError when runtimeRef is missing or has the wrong types.
RuntimeRef ReadRuntimeRef(const nlohmann::json& trainjob, std::string_view default_ns);

// How spec.trainer.resourcesPerNode lands on the runtime's `node` container. Trainer v2.0 to
// v2.2 replace the container's whole resources with it; v2.3.0 merges limits and requests per
// resource name. Both drop the container's resources.claims.
enum class ResourcesPerNode { kReplace, kMerge };

// Where a value of the effective JobSet was written.
struct Origin {
  enum Document { kTrainJob, kRuntime };
  Document document = kRuntime;
  std::string pointer;  // RFC 6901, into that document
};

// A resource the runtime's `node` container requests that Trainer v2.0 to v2.2 erase because
// the TrainJob's resourcesPerNode replaces the container's resources without naming it.
struct ReplacedResource {
  std::string resource;
  long long count = 0;
  std::string runtime_pointer;  // e.g. /spec/template/spec/replicatedJobs/0/.../limits/rdma~1ib
};

// What the Trainer rules need beyond the pod templates.
struct TrainJobFacts {
  RuntimeRef runtime;
  // Effective pointer of the pod template whose `node` container spec.trainer feeds ("" when
  // the runtime has no replicated job marked for the trainer).
  std::string node_template;
  std::string node_container;  // effective pointer of that container ("" when absent)
  // Effective pointers of every container spec.trainer's env and resourcesPerNode reach: the
  // `node` container of the trainer job and, for an MPI runtime with runLauncherAsNode, of the
  // job named `node` too (v2.1 on).
  std::vector<std::string> trainer_containers;
  // The training nodes: the trainer job's pods; for MPI the `node` job's, plus the launcher's
  // when it runs as a node (runLauncherAsNode: numNodes - 1 workers and the launcher).
  long long num_nodes = 1;
  std::string num_nodes_pointer;               // /spec/trainer/numNodes, or "" when the runtime's
  std::optional<long long> num_proc_per_node;  // an integer from the TrainJob or the runtime
  std::string num_proc_per_node_pointer;       // where it is written (TrainJob), "" for runtime
  // spec.trainer.resourcesPerNode is set at all: v2.3.0 then writes the `node` container's
  // resources from limits and requests alone, dropping its resources.claims.
  bool resources_per_node = false;
  // resourcesPerNode holds limits or requests: only then do v2.0 to v2.2 replace the container's
  // resources with it (builder.go tests Limits != nil || Requests != nil).
  bool resources_per_node_replaces = false;
  // What v2.0 to v2.2 erase (whatever `rule` the templates were built with); only when
  // resources_per_node_replaces.
  std::vector<ReplacedResource> replaced;
  std::vector<std::string> dropped_claims;  // node container resources.claims names dropped
};

// The JobSet Trainer would create for a TrainJob, with the origin of its values.
struct TrainJobTemplates {
  // apiVersion jobset.x-k8s.io/v1alpha2, kind JobSet, the TrainJob's metadata, the effective
  // spec. Held by pointer: the Workload read from it points into it and survives moves.
  std::unique_ptr<nlohmann::json> jobset;
  std::string api_version, kind;  // the TrainJob's
  TrainJobFacts facts;
  struct Recorded {
    std::string prefix;  // effective pointer
    Origin origin;
    bool same_shape = true;  // what lies below the prefix lies below origin.pointer the same way
  };
  std::vector<Recorded> origins;

  // Where the value at an effective pointer came from: the longest recorded prefix.
  Origin OriginOf(std::string_view effective_pointer) const;
};

// Builds the effective JobSet of `trainjob` on `runtime` (the object runtimeRef names). Applies,
// in Trainer's order: the runtime's template; podSpecOverrides (v2.0), podTemplateOverrides
// (v2.1) and runtimePatches (v2.2 on, in list order) as strategic merge patches; then, on the
// `node` container of every replicated job labelled for the trainer, resourcesPerNode (`rule`),
// image, command and args (replaced) and env (upserted by name); and numNodes (the TrainJob's,
// else the runtime's mlPolicy.numNodes, else 1) as that job's parallelism and completions. An
// MPI runtime follows Trainer's MPI plugin instead: numNodes goes to the job named `node`, and
// with mlPolicy.mpi.runLauncherAsNode the launcher is one of the nodes (the `node` job gets
// numNodes - 1, at least 1, and spec.trainer's env and resourcesPerNode as well).
// `skip_manager`: a runtimePatches entry of this manager is left out (the webhook's own, which
// its mutation writes anew). Throws ManifestError naming the TrainJob's field, or
// /spec/runtimeRef and the runtime's field when the runtime has the wrong types.
TrainJobTemplates EffectiveTemplates(const nlohmann::json& trainjob, const nlohmann::json& runtime,
                                     const RuntimeRef& ref, ResourcesPerNode rule,
                                     std::string_view skip_manager = {});

// The effective JobSet read as a workload: its pod templates, kind and name the TrainJob's, the
// JobSet row's multi-node reading, and `facts` for the Trainer rules. Points into `t`.
Workload ReadTrainJob(const TrainJobTemplates& t, const policy::Policy& policy,
                      std::string_view default_ns);

}  // namespace rw::workload
