#include "rdma_webhook/policy/policy.h"

namespace rw::policy {

// Where each workload kind keeps its pod templates, whether its pods can make one job across
// nodes, and the DNS default its controller gives hostNetwork pods (docs/policy.md#kinds lists
// them). One row per kind; a new kind is a new row (or a `kinds:` entry in the policy), never a new
// code path.
const std::vector<WorkloadKind>& BuiltinKinds() {
  static const std::vector<WorkloadKind> kKinds = {
      {"", "Pod", {""}, false},
      {"batch", "Job", {"/spec/template"}},
      {"batch", "CronJob", {"/spec/jobTemplate/spec/template"}},
      {"apps", "Deployment", {"/spec/template"}, false},
      {"apps", "StatefulSet", {"/spec/template"}, false},
      {"apps", "ReplicaSet", {"/spec/template"}, false},
      {"apps", "DaemonSet", {"/spec/template"}, false},
      {"kubeflow.org", "PyTorchJob", {"/spec/pytorchReplicaSpecs/*/template"}},
      {"kubeflow.org", "TFJob", {"/spec/tfReplicaSpecs/*/template"}},
      {"kubeflow.org", "PaddleJob", {"/spec/paddleReplicaSpecs/*/template"}},
      {"kubeflow.org", "XGBoostJob", {"/spec/xgbReplicaSpecs/*/template"}},
      {"kubeflow.org", "MPIJob", {"/spec/mpiReplicaSpecs/*/template"}},
      {"batch.volcano.sh", "Job", {"/spec/tasks/*/template"}, true, "ClusterFirstWithHostNet"},
      {"jobset.x-k8s.io", "JobSet", {"/spec/replicatedJobs/*/template/spec/template"}},
      {"leaderworkerset.x-k8s.io",
       "LeaderWorkerSet",
       {"/spec/leaderWorkerTemplate/leaderTemplate", "/spec/leaderWorkerTemplate/workerTemplate"}},
      {"ray.io",
       "RayJob",
       {"/spec/rayClusterSpec/headGroupSpec/template",
        "/spec/rayClusterSpec/workerGroupSpecs/*/template"}},
      {"ray.io",
       "RayCluster",
       {"/spec/headGroupSpec/template", "/spec/workerGroupSpecs/*/template"}},
      // KubeRay's RayService keeps a whole RayCluster spec under rayClusterConfig.
      {"ray.io",
       "RayService",
       {"/spec/rayClusterConfig/headGroupSpec/template",
        "/spec/rayClusterConfig/workerGroupSpecs/*/template"}},
      // AIBrix: a fleet of Ray clusters, each made from spec.template (a RayCluster spec).
      {"orchestration.aibrix.ai",
       "RayClusterFleet",
       {"/spec/template/spec/headGroupSpec/template",
        "/spec/template/spec/workerGroupSpecs/*/template"}},
      // sgl-project/rbg: each role's full pod template. A role on a LeaderWorkerSet carries only
      // patches of the leader and worker templates (not templates), and a role's replicas may
      // be independent StatefulSet pods, so the kind is not read as one multi-node job.
      {"workloads.x-k8s.io", "RoleBasedGroup", {"/spec/roles/*/template"}, false},
      // NVIDIA Dynamo (ai-dynamo/dynamo, deploy/operator/api/v1beta1): each component's
      // podTemplate is a full pod template whose `main` container the operator merges its
      // defaults into. v1alpha1 objects (spec.services, extraPodSpec) hold no pod template, so
      // nothing of them is read. Serving replicas are independent pods, not one job.
      {"nvidia.com", "DynamoGraphDeployment", {"/spec/components/*/podTemplate"}, false},
      // Kubeflow Trainer: stock runtimes carry no GPUs (a TrainJob adds them through
      // spec.trainer.resourcesPerNode, not judged yet), so they are often `none`.
      {"trainer.kubeflow.org",
       "TrainingRuntime",
       {"/spec/template/spec/replicatedJobs/*/template/spec/template"}},
      {"trainer.kubeflow.org",
       "ClusterTrainingRuntime",
       {"/spec/template/spec/replicatedJobs/*/template/spec/template"}},
  };
  return kKinds;
}

const WorkloadKind* Policy::FindKind(std::string_view api_version, std::string_view kind) const {
  const std::size_t slash = api_version.find('/');
  const std::string_view group =
      slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
  for (const auto& row : kinds)
    if (row.kind == kind && row.group == group) return &row;
  return nullptr;
}

}  // namespace rw::policy
