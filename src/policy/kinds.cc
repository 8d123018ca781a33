#include <algorithm>
#include <utility>

#include "rdma_webhook/policy/policy.h"

namespace rw::policy {

namespace {

// The Kubeflow training operator's kinds: one replica spec per role, its gang minimum in
// runPolicy.schedulingPolicy.
WorkloadKind Kubeflow(const char* kind, const std::string& specs) {
  const std::string at = "/spec/" + specs + "/*";
  return {.group = "kubeflow.org",
          .kind = kind,
          .templates = {at + "/template"},
          .replicas = {{at + "/replicas"}},
          .gang = {"/spec/runPolicy/schedulingPolicy/minAvailable", at}};
}

// mpi-operator's v2beta1 MPIJob: its controller gives every hostNetwork launcher and worker pod
// dnsPolicy ClusterFirstWithHostNet, whatever the template says (pkg/controller/
// mpi_job_controller.go, since v0.4.0), so that worker hostnames resolve. training-operator's
// kubeflow.org/v1 MPIJob sets no dnsPolicy and keeps the row for every version.
WorkloadKind MpiOperatorV2() {
  WorkloadKind k = Kubeflow("MPIJob", "mpiReplicaSpecs");
  k.version = "v2beta1";
  k.host_network_dns_policy = "ClusterFirstWithHostNet";
  k.host_network_dns_forced = true;
  return k;
}

// A Trainer runtime holds a JobSet template.
WorkloadKind TrainerRuntime(const char* kind) {
  const std::string jobs = "/spec/template/spec/replicatedJobs/*";
  return {.group = "trainer.kubeflow.org",
          .kind = kind,
          .templates = {jobs + "/template/spec/template"},
          .replicas = {{jobs + "/replicas"}, {jobs + "/template/spec/parallelism"}}};
}

// A KubeRay worker group's pods (GetWorkerGroupDesiredReplicas in ray-operator's utils): its
// replicas, raised to minReplicas and capped at maxReplicas, times numOfHosts. An absent
// `replicas` is 1 here, not the CRD's 0: the autoscaler adds workers to such a group.
ReplicaCount RayWorkers(std::string at) {
  return {
      .at = std::move(at), .floor = "minReplicas", .ceiling = "maxReplicas", .times = "numOfHosts"};
}

}  // namespace

std::vector<ReplicaCount> DefaultReplicaCounts(const std::vector<std::string>& templates) {
  std::vector<ReplicaCount> out;
  auto add = [&](ReplicaCount c) {
    c.guessed = true;
    for (const auto& o : out)
      if (o.at == c.at && o.under == c.under) return;  // a count multiplies a template once
    out.push_back(std::move(c));
  };
  for (const auto& pattern : templates) {
    std::string prefix;  // the object on the way, as a pattern ("" = the workload)
    std::size_t depth = 0;
    for (std::size_t start = 1; start <= pattern.size() && !pattern.empty(); ++depth) {
      const std::size_t end = std::min(pattern.find('/', start), pattern.size());
      const std::string token = pattern.substr(start, end - start);
      add({prefix + "/parallelism"});
      if (depth >= 2) add({prefix + "/replicas"});
      if (token == "workerTemplate") add({prefix + "/size", "workerTemplate", 1, "leaderTemplate"});
      prefix += "/" + token;
      start = end + 1;
    }
  }
  return out;
}

// Where each workload kind keeps its pod templates, whether its pods can make one job across
// nodes, and the DNS default its controller gives hostNetwork pods (docs/policy.md#kinds lists
// them). One row per kind; a new kind is a new row (or a `kinds:` entry in the policy), never a new
// code path. The counts say what multiplies a template's pods, the gang where its scheduler's
// minimum is.
const std::vector<WorkloadKind>& BuiltinKinds() {
  static const std::vector<WorkloadKind> kKinds = {
      {.group = "", .kind = "Pod", .templates = {""}, .multi_node = false},
      {.group = "batch",
       .kind = "Job",
       .templates = {"/spec/template"},
       .replicas = {{"/spec/parallelism"}}},
      {.group = "batch",
       .kind = "CronJob",
       .templates = {"/spec/jobTemplate/spec/template"},
       .replicas = {{"/spec/jobTemplate/spec/parallelism"}}},
      {.group = "apps", .kind = "Deployment", .templates = {"/spec/template"}, .multi_node = false},
      {.group = "apps",
       .kind = "StatefulSet",
       .templates = {"/spec/template"},
       .multi_node = false},
      {.group = "apps", .kind = "ReplicaSet", .templates = {"/spec/template"}, .multi_node = false},
      {.group = "apps", .kind = "DaemonSet", .templates = {"/spec/template"}, .multi_node = false},
      Kubeflow("PyTorchJob", "pytorchReplicaSpecs"),
      Kubeflow("TFJob", "tfReplicaSpecs"),
      Kubeflow("PaddleJob", "paddleReplicaSpecs"),
      Kubeflow("XGBoostJob", "xgbReplicaSpecs"),
      MpiOperatorV2(),
      Kubeflow("MPIJob", "mpiReplicaSpecs"),
      // Volcano's webhook gives hostNetwork pods ClusterFirstWithHostNet.
      {.group = "batch.volcano.sh",
       .kind = "Job",
       .templates = {"/spec/tasks/*/template"},
       .host_network_dns_policy = "ClusterFirstWithHostNet",
       .replicas = {{"/spec/tasks/*/replicas"}},
       .gang = {"/spec/minAvailable", "/spec/tasks/*"}},
      {.group = "jobset.x-k8s.io",
       .kind = "JobSet",
       .templates = {"/spec/replicatedJobs/*/template/spec/template"},
       .replicas = {{"/spec/replicatedJobs/*/replicas"},
                    {"/spec/replicatedJobs/*/template/spec/parallelism"}}},
      // `/spec/replicas` counts independent groups; `size` is a group's pods, its leader one,
      // made from the leaderTemplate when there is one and else from the workerTemplate.
      {.group = "leaderworkerset.x-k8s.io",
       .kind = "LeaderWorkerSet",
       .templates = {"/spec/leaderWorkerTemplate/leaderTemplate",
                     "/spec/leaderWorkerTemplate/workerTemplate"},
       .replicas = {{"/spec/leaderWorkerTemplate/size", "workerTemplate", 1, "leaderTemplate"}}},
      {.group = "ray.io",
       .kind = "RayJob",
       .templates = {"/spec/rayClusterSpec/headGroupSpec/template",
                     "/spec/rayClusterSpec/workerGroupSpecs/*/template"},
       .replicas = {RayWorkers("/spec/rayClusterSpec/workerGroupSpecs/*/replicas")}},
      {.group = "ray.io",
       .kind = "RayCluster",
       .templates = {"/spec/headGroupSpec/template", "/spec/workerGroupSpecs/*/template"},
       .replicas = {RayWorkers("/spec/workerGroupSpecs/*/replicas")}},
      // KubeRay's RayService keeps a whole RayCluster spec under rayClusterConfig.
      {.group = "ray.io",
       .kind = "RayService",
       .templates = {"/spec/rayClusterConfig/headGroupSpec/template",
                     "/spec/rayClusterConfig/workerGroupSpecs/*/template"},
       .replicas = {RayWorkers("/spec/rayClusterConfig/workerGroupSpecs/*/replicas")}},
      // AIBrix: a fleet of Ray clusters, each made from spec.template (a RayCluster spec); the
      // fleet's own `/spec/replicas` counts independent clusters.
      {.group = "orchestration.aibrix.ai",
       .kind = "RayClusterFleet",
       .templates = {"/spec/template/spec/headGroupSpec/template",
                     "/spec/template/spec/workerGroupSpecs/*/template"},
       .replicas = {RayWorkers("/spec/template/spec/workerGroupSpecs/*/replicas")}},
      // sgl-project/rbg v1alpha2: a role's pod template sits in its pattern (standalonePattern,
      // or leaderWorkerPattern, whose leader and worker patches are applied over it), or in a
      // shared spec.roleTemplates entry the role names by templateRef. As in v1alpha1 the
      // kind is not read as one multi-node job.
      {.group = "workloads.x-k8s.io",
       .kind = "RoleBasedGroup",
       .version = "v1alpha2",
       .templates = {"/spec/roles/*/standalonePattern/template",
                     "/spec/roles/*/leaderWorkerPattern/template",
                     "/spec/roleTemplates/*/template"},
       .multi_node = false},
      // sgl-project/rbg: each role's full pod template. A role on a LeaderWorkerSet carries only
      // patches of the leader and worker templates (not templates), and a role's replicas may
      // be independent StatefulSet pods, so the kind is not read as one multi-node job.
      {.group = "workloads.x-k8s.io",
       .kind = "RoleBasedGroup",
       .templates = {"/spec/roles/*/template"},
       .multi_node = false},
      // NVIDIA Dynamo (ai-dynamo/dynamo, deploy/operator/api/v1beta1): each component's
      // podTemplate is a full pod template whose `main` container the operator merges its
      // defaults into. v1alpha1 objects (spec.services, extraPodSpec) hold no pod template, so
      // nothing of them is read. Serving replicas are independent pods, not one job.
      {.group = "nvidia.com",
       .kind = "DynamoGraphDeployment",
       .templates = {"/spec/components/*/podTemplate"},
       .multi_node = false},
      // Kubeflow Trainer: stock runtimes carry no GPUs (a TrainJob adds them through
      // spec.trainer.resourcesPerNode, not judged yet), so they are often `none`.
      TrainerRuntime("TrainingRuntime"),
      TrainerRuntime("ClusterTrainingRuntime"),
  };
  return kKinds;
}

const WorkloadKind* Policy::FindKind(std::string_view api_version, std::string_view kind) const {
  const std::size_t slash = api_version.find('/');
  const std::string_view group =
      slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
  const std::string_view version =
      slash == std::string_view::npos ? api_version : api_version.substr(slash + 1);
  for (const auto& row : kinds)
    if (row.kind == kind && row.group == group && (row.version.empty() || row.version == version))
      return &row;
  return nullptr;
}

}  // namespace rw::policy
