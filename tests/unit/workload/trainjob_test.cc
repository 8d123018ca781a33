// The effective JobSet of a TrainJob, checked against Trainer's merge rules written out by hand
// (the oracle: docs/trainer.md#how-trainer-builds-the-pods, from kubeflow/trainer v2.0.0 to
// v2.3.0): what each case expects is the pod template Trainer's controller would create.
#include <gtest/gtest.h>

#include "../fixtures/trainer.h"
#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/workload/trainjob.h"

namespace rw::workload {
namespace {

using nlohmann::json;

using fixtures::Yaml;

// A runtime in the stock shape: an initializer job and the trainer job, whose `node` container
// already claims a shared HCA and adds one capability.
const std::string kRuntime = fixtures::ClusterTrainingRuntime(
    "torch-rdma", "{numNodes: 2, torch: {numProcPerNode: auto}}",
    {fixtures::ReplicatedJob(
         "dataset-initializer", fixtures::AncestorStep("dataset-initializer"),
         "spec:\n  containers:\n    - {name: dataset-initializer, image: init:1}\n"),
     fixtures::ReplicatedJob("node", fixtures::AncestorStep("trainer"), R"(metadata:
  annotations: {k8s.v1.cni.cncf.io/networks: rdma-net@net1}
spec:
  containers:
    - name: sidecar
      image: side:1
    - name: node
      image: torch:1
      env:
        - {name: NCCL_IB_HCA, value: mlx5_0}
        - {name: NCCL_DEBUG, value: WARN}
      securityContext:
        capabilities: {add: [SYS_PTRACE]}
      resources:
        limits: {rdma/hca_shared_devices_a: 1, cpu: "4"}
        claims: [{name: nic}]
)")});

constexpr const char* kTrainJob = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llama, namespace: team-a}
spec:
  runtimeRef: {name: torch-rdma}
  trainer:
    image: mine:2
    numNodes: 4
    numProcPerNode: 8
    env:
      - {name: NCCL_DEBUG, value: INFO}
      - {name: NCCL_IB_GID_INDEX, value: "3"}
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
)";

const char* kNode = "/spec/replicatedJobs/1/template/spec/template";
const char* kNodeContainer = "/spec/replicatedJobs/1/template/spec/template/spec/containers/1";

TrainJobTemplates Build(const std::string& job, const std::string& runtime,
                        ResourcesPerNode rule = ResourcesPerNode::kReplace) {
  const json j = Yaml(job), r = Yaml(runtime);
  return EffectiveTemplates(j, r, ReadRuntimeRef(j, "default"), rule);
}

const json& At(const TrainJobTemplates& t, const std::string& pointer) {
  return t.jobset->at(json::json_pointer(pointer));
}

TEST(TrainJobTemplates, TrainerFeedsOnlyTheNodeContainerOfTheTrainerJob) {
  const auto t = Build(kTrainJob, kRuntime);
  const json& node = At(t, kNodeContainer);
  EXPECT_EQ(node["image"], "mine:2");
  // env upserted by name: the runtime's order kept, a value replaced in place, new ones after
  EXPECT_EQ(node["env"],
            Yaml(R"([{name: NCCL_IB_HCA, value: mlx5_0}, {name: NCCL_DEBUG, value: INFO},
                                  {name: NCCL_IB_GID_INDEX, value: "3"}])"));
  EXPECT_EQ(At(t, std::string(kNode) + "/spec/containers/0/image"), "side:1");
  EXPECT_EQ(At(t, "/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image"),
            "init:1");
  EXPECT_FALSE(At(t, "/spec/replicatedJobs/0/template/spec").contains("parallelism"));
  EXPECT_EQ(At(t, "/spec/replicatedJobs/1/template/spec/parallelism"), 4);
  EXPECT_EQ(At(t, "/spec/replicatedJobs/1/template/spec/completions"), 4);
  EXPECT_EQ(t.facts.num_nodes, 4);
  EXPECT_EQ(t.facts.num_proc_per_node, 8);
  EXPECT_EQ(t.facts.node_container, kNodeContainer);
}

TEST(TrainJobTemplates, ResourcesPerNodeReplacesUpToV22) {
  const auto t = Build(kTrainJob, kRuntime, ResourcesPerNode::kReplace);
  EXPECT_EQ(At(t, kNodeContainer)["resources"], Yaml("{limits: {nvidia.com/gpu: 8}}"));
  ASSERT_EQ(t.facts.replaced.size(), 2u);  // cpu and the shared HCA, sorted by name
  EXPECT_EQ(t.facts.replaced[0].resource, "cpu");
  EXPECT_EQ(t.facts.replaced[1].resource, "rdma/hca_shared_devices_a");
  EXPECT_EQ(t.facts.replaced[1].count, 1);
  EXPECT_EQ(t.facts.replaced[1].runtime_pointer,
            "/spec/template/spec/replicatedJobs/1/template/spec/template/spec/containers/1/"
            "resources/limits/rdma~1hca_shared_devices_a");
  EXPECT_EQ(t.facts.dropped_claims, std::vector<std::string>{"nic"});
}

TEST(TrainJobTemplates, ResourcesPerNodeMergesFromV23ButDropsClaims) {
  const auto t = Build(kTrainJob, kRuntime, ResourcesPerNode::kMerge);
  EXPECT_EQ(At(t, kNodeContainer)["resources"],
            Yaml("{limits: {rdma/hca_shared_devices_a: 1, cpu: '4', nvidia.com/gpu: 8}}"));
  EXPECT_EQ(t.facts.replaced.size(), 2u);  // what v2.0 to v2.2 would erase, for the rules
  EXPECT_EQ(t.facts.dropped_claims, std::vector<std::string>{"nic"});
}

// A resourcesPerNode of claims only: v2.0 to v2.2 leave the container alone (builder.go applies
// it only with limits or requests); v2.3.0 still rewrites the resources from the merged limits
// and requests, so the runtime's claims (and the TrainJob's) are gone.
TEST(TrainJobTemplates, AClaimsOnlyResourcesPerNodeDropsClaimsOnlyFromV23) {
  const std::string job = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: j}
spec:
  runtimeRef: {name: torch-rdma}
  trainer:
    resourcesPerNode: {claims: [{name: gpus}]})";
  const auto v22 = Build(job, kRuntime, ResourcesPerNode::kReplace);
  EXPECT_EQ(At(v22, kNodeContainer)["resources"],
            Yaml("{limits: {rdma/hca_shared_devices_a: 1, cpu: '4'}, claims: [{name: nic}]}"));
  EXPECT_TRUE(v22.facts.resources_per_node);
  EXPECT_FALSE(v22.facts.resources_per_node_replaces);
  EXPECT_TRUE(v22.facts.replaced.empty());  // nothing is erased on v2.0 to v2.2

  const auto v23 = Build(job, kRuntime, ResourcesPerNode::kMerge);
  EXPECT_EQ(At(v23, kNodeContainer)["resources"],
            Yaml("{limits: {rdma/hca_shared_devices_a: 1, cpu: '4'}}"));
  EXPECT_EQ(v23.facts.dropped_claims, std::vector<std::string>{"nic"});
  EXPECT_TRUE(v23.facts.replaced.empty());
}

// mlPolicy is optional, and v2.3.0 applies resourcesPerNode only under one
// (core/trainingruntime.go); v2.0 to v2.2 apply it all the same. A runtime without it keeps its
// container as written on v2.3.0, and a claims-only resourcesPerNode then drops nothing at all.
TEST(TrainJobTemplates, WithoutAnMlPolicyV23LeavesTheContainerAlone) {
  const std::string runtime = fixtures::ClusterTrainingRuntime(
      "torch-rdma", "null",
      {fixtures::ReplicatedJob("node", fixtures::AncestorStep("trainer"), R"(spec:
  containers:
    - name: node
      image: torch:1
      resources:
        limits: {rdma/hca_shared_devices_a: 1}
        claims: [{name: nic}]
)")});
  const char* container = "/spec/replicatedJobs/0/template/spec/template/spec/containers/0";
  const auto v23 = Build(kTrainJob, runtime, ResourcesPerNode::kMerge);
  EXPECT_EQ(At(v23, container)["resources"],
            Yaml("{limits: {rdma/hca_shared_devices_a: 1}, claims: [{name: nic}]}"));
  // what v2.0 to v2.2 still erase and drop, for the rules
  ASSERT_EQ(v23.facts.replaced.size(), 1u);
  EXPECT_EQ(v23.facts.dropped_claims, std::vector<std::string>{"nic"});
  const auto v22 = Build(kTrainJob, runtime, ResourcesPerNode::kReplace);
  EXPECT_EQ(At(v22, container)["resources"], Yaml("{limits: {nvidia.com/gpu: 8}}"));

  std::string claims_only = kTrainJob;
  claims_only.replace(claims_only.find("limits: {nvidia.com/gpu: 8}"),
                      std::string("limits: {nvidia.com/gpu: 8}").size(), "claims: [{name: x}]");
  const auto none = Build(claims_only, runtime, ResourcesPerNode::kMerge);
  EXPECT_TRUE(none.facts.dropped_claims.empty());
  EXPECT_EQ(At(none, container)["resources"]["claims"], Yaml("[{name: nic}]"));
}

TEST(TrainJobTemplates, NoResourcesPerNodeKeepsTheRuntimes) {
  const auto t = Build(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: j}
spec: {runtimeRef: {name: torch-rdma}})",
                       kRuntime);
  EXPECT_EQ(At(t, kNodeContainer)["resources"]["claims"], Yaml("[{name: nic}]"));
  EXPECT_EQ(At(t, kNodeContainer)["image"], "torch:1");
  EXPECT_EQ(t.facts.num_nodes, 2);  // the runtime's mlPolicy.numNodes
  EXPECT_EQ(At(t, "/spec/replicatedJobs/1/template/spec/parallelism"), 2);
  EXPECT_FALSE(t.facts.num_proc_per_node);  // auto
  EXPECT_FALSE(t.facts.resources_per_node);
  EXPECT_FALSE(t.facts.resources_per_node_replaces);
}

const std::string kPatched = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {generateName: llama-}
spec:
  runtimeRef: {name: torch-rdma, kind: ClusterTrainingRuntime}
  runtimePatches:
)" + fixtures::Indented(fixtures::RuntimePatch("kueue.x-k8s.io/manager",
                                               {fixtures::ReplicatedJob("node", "", R"(spec:
  tolerations: [{key: a, operator: Exists}]
  nodeSelector: {pool: gpu}
)")}) + fixtures::RuntimePatch("example.com/platform",
                               {fixtures::ReplicatedJob("node", "team: x", R"(metadata:
  annotations: {example.com/seen: "yes"}
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  tolerations: [{key: b, operator: Exists}]
  volumes: [{name: dshm, emptyDir: {medium: Memory}}]
  containers:
    - name: node
      image: ignored:9
      securityContext: {capabilities: {add: [IPC_LOCK]}}
      volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      resources: {limits: {rdma/vf: 1}}
)"),
                                fixtures::ReplicatedJob("no-such-job", "",
                                                        "spec: {nodeSelector: {x: y}}\n")}),
                        4);

TEST(TrainJobTemplates, RuntimePatchesMergeInOrderAndOnlyWhatTheirTypeAllows) {
  const auto t = Build(kPatched, kRuntime);
  const json& pod = At(t, kNode);
  // later managers' lists replace earlier ones (tolerations are atomic), maps merge
  EXPECT_EQ(pod["spec"]["tolerations"], Yaml("[{key: b, operator: Exists}]"));
  EXPECT_EQ(pod["spec"]["nodeSelector"], Yaml("{pool: gpu}"));
  EXPECT_EQ(pod["spec"]["volumes"], Yaml("[{name: dshm, emptyDir: {medium: Memory}}]"));
  EXPECT_EQ(pod["metadata"]["annotations"],
            Yaml("{k8s.v1.cni.cncf.io/networks: rdma-net@net1, example.com/seen: 'yes'}"));
  // PodSpecPatch has no hostNetwork or dnsPolicy, ContainerPatch no image or resources
  EXPECT_FALSE(pod["spec"].contains("hostNetwork"));
  EXPECT_FALSE(pod["spec"].contains("dnsPolicy"));
  const json& node = pod["spec"]["containers"][1];
  EXPECT_EQ(node["image"], "torch:1");
  EXPECT_EQ(node["resources"]["limits"], Yaml("{rdma/hca_shared_devices_a: 1, cpu: '4'}"));
  // the capability list is replaced whole, not merged
  EXPECT_EQ(node["securityContext"], Yaml("{capabilities: {add: [IPC_LOCK]}}"));
  EXPECT_EQ(node["volumeMounts"], Yaml("[{name: dshm, mountPath: /dev/shm}]"));
  EXPECT_EQ(At(t, "/spec/replicatedJobs/1/template/metadata/labels/team"), "x");
  EXPECT_EQ(t.jobset->size(), 4u);
  EXPECT_EQ(At(t, "/metadata/generateName"), "llama-");
}

TEST(TrainJobTemplates, OriginsPointAtTheFieldThatWroteTheValue) {
  const auto t = Build(kPatched, kRuntime);
  const std::string c = kNodeContainer;
  const auto sc = t.OriginOf(c + "/securityContext/capabilities");
  EXPECT_EQ(sc.document, Origin::kTrainJob);
  EXPECT_EQ(sc.pointer,
            "/spec/runtimePatches/1/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/"
            "spec/template/spec/containers/0/securityContext/capabilities");
  const auto image = t.OriginOf(c + "/image");
  EXPECT_EQ(image.document, Origin::kRuntime);
  EXPECT_EQ(image.pointer,
            "/spec/template/spec/replicatedJobs/1/template/spec/template/spec/containers/1/image");
  EXPECT_EQ(t.OriginOf(c + "/env").pointer, "/spec/trainer/env");  // only settable there
  EXPECT_EQ(t.OriginOf(c + "/env/0").document, Origin::kRuntime);
  EXPECT_EQ(t.OriginOf(std::string(kNode) + "/spec/volumes/0").pointer,
            "/spec/runtimePatches/1/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/"
            "spec/template/spec/volumes/0");
  EXPECT_EQ(t.OriginOf(std::string(kNode) + "/metadata/annotations/example.com~1seen").pointer,
            "/spec/runtimePatches/1/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/"
            "spec/template/metadata/annotations/example.com~1seen");

  const auto u = Build(kTrainJob, kRuntime);
  EXPECT_EQ(u.OriginOf(c + "/resources/limits/nvidia.com~1gpu").pointer,
            "/spec/trainer/resourcesPerNode/limits/nvidia.com~1gpu");
  EXPECT_EQ(u.OriginOf(c + "/env/2").pointer, "/spec/trainer/env/1");
  EXPECT_EQ(u.OriginOf(c + "/env/1").pointer, "/spec/trainer/env/0");
  EXPECT_EQ(u.OriginOf("/spec/replicatedJobs/1/template/spec/parallelism").pointer,
            "/spec/trainer/numNodes");
}

TEST(TrainJobTemplates, PodTemplateOverridesOfV21AndPodSpecOverridesOfV20) {
  const auto t = Build(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: j}
spec:
  runtimeRef: {name: torch-rdma}
  podSpecOverrides:
    - targetJobs: [{name: node}]
      nodeSelector: {v: "20"}
  podTemplateOverrides:
    - targetJobs: [{name: node}, {name: dataset-initializer}]
      metadata:
        annotations: {k8s.v1.cni.cncf.io/networks: other@net2}
      spec:
        containers:
          - {name: node, volumeMounts: [{name: d, mountPath: /data}],
             securityContext: {privileged: true}}
)",
                       kRuntime);
  const json& pod = At(t, kNode);
  EXPECT_EQ(pod["spec"]["nodeSelector"], Yaml("{v: '20'}"));
  EXPECT_EQ(pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"], "other@net2");
  EXPECT_EQ(pod["spec"]["containers"][1]["volumeMounts"], Yaml("[{name: d, mountPath: /data}]"));
  // ContainerOverride (v2.1) has no securityContext
  EXPECT_EQ(pod["spec"]["containers"][1]["securityContext"],
            Yaml("{capabilities: {add: [SYS_PTRACE]}}"));
  EXPECT_EQ(At(t, "/spec/replicatedJobs/0/template/spec/template/metadata/annotations")
                ["k8s.v1.cni.cncf.io/networks"],
            "other@net2");
}

TEST(TrainJobTemplates, ReadAsAWorkloadNamedByTheTrainJob) {
  const auto t = Build(kPatched, kRuntime);
  const Workload w = ReadTrainJob(t, policy::DefaultPolicy(), "default");
  EXPECT_EQ(w.kind, "TrainJob");
  EXPECT_EQ(w.api_version, "trainer.kubeflow.org/v1alpha1");
  EXPECT_EQ(w.name, "llama-");
  ASSERT_EQ(w.templates.size(), 2u);
  EXPECT_EQ(w.templates[1].pointer, kNode);
  EXPECT_EQ(w.trainjob, &t.facts);
}

// An MPI runtime shaped as Trainer's deepspeed-distributed (manifests/base/runtimes, v2.3.0):
// `node` workers running sshd, then the `launcher` labelled for the trainer, both with a
// container named `node`; `launcher_as_node` is the runLauncherAsNode value.
std::string MpiRuntime(const std::string& launcher_as_node) {
  return fixtures::ClusterTrainingRuntime(
      "deepspeed",
      "{numNodes: 1, mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, runLauncherAsNode: " +
          launcher_as_node + "}}",
      {fixtures::ReplicatedJob(
           "node", "",
           "spec:\n  containers:\n    - {name: node, image: ds:1, command: [/usr/sbin/sshd]}\n"),
       fixtures::ReplicatedJob("launcher", fixtures::AncestorStep("trainer"),
                               "spec:\n  containers:\n    - {name: node, image: ds:1}\n")});
}

constexpr const char* kMpiJob = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: ds, namespace: team-a}
spec:
  runtimeRef: {name: deepspeed}
  trainer:
    image: mine:2
    command: [mpirun, train.py]
    numNodes: 4
    env: [{name: NCCL_DEBUG, value: INFO}]
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
)";

const char* kWorkers = "/spec/replicatedJobs/0/template/spec";
const char* kLauncher = "/spec/replicatedJobs/1/template/spec";

// runLauncherAsNode: the launcher is one of the numNodes nodes (Trainer's MPI plugin gives the
// `node` job numNodes - 1), and the workers get spec.trainer's env and GPUs but keep their own
// image and command (sshd).
TEST(TrainJobTemplates, MpiLauncherAsNodeIsOneOfTheNodes) {
  const auto t = Build(kMpiJob, MpiRuntime("true"), ResourcesPerNode::kMerge);
  EXPECT_EQ(At(t, std::string(kWorkers) + "/parallelism"), 3);
  EXPECT_EQ(At(t, std::string(kWorkers) + "/completions"), 3);
  EXPECT_EQ(At(t, std::string(kLauncher) + "/parallelism"), 1);
  EXPECT_EQ(t.facts.num_nodes, 4);
  const json& worker = At(t, std::string(kWorkers) + "/template/spec/containers/0");
  EXPECT_EQ(worker["resources"]["limits"]["nvidia.com/gpu"], 8);
  EXPECT_EQ(worker["env"], Yaml("[{name: NCCL_DEBUG, value: INFO}]"));
  EXPECT_EQ(worker["image"], "ds:1");
  EXPECT_EQ(worker["command"], Yaml("[/usr/sbin/sshd]"));
  const json& launcher = At(t, std::string(kLauncher) + "/template/spec/containers/0");
  EXPECT_EQ(launcher["image"], "mine:2");
  EXPECT_EQ(launcher["resources"]["limits"]["nvidia.com/gpu"], 8);
  EXPECT_EQ(t.facts.trainer_containers.size(), 2u);
  EXPECT_EQ(t.facts.node_template, std::string(kWorkers) + "/template");
  EXPECT_EQ(t.OriginOf(std::string(kWorkers) + "/parallelism").pointer, "/spec/trainer/numNodes");
  // one node: the launcher alone would be too few, Trainer keeps one worker
  const auto one = Build(
      std::string(kMpiJob).replace(std::string(kMpiJob).find("numNodes: 4"), 11, "numNodes: 1"),
      MpiRuntime("true"));
  EXPECT_EQ(At(one, std::string(kWorkers) + "/parallelism"), 1);
  EXPECT_EQ(one.facts.num_nodes, 2);
}

// Without it the `node` job is all numNodes workers, and only the launcher (the trainer job)
// takes spec.trainer: the workers keep the runtime's resources (Trainer's own TODO).
TEST(TrainJobTemplates, MpiWithoutLauncherAsNodeGivesTheWorkersNumNodes) {
  const auto t = Build(kMpiJob, MpiRuntime("false"), ResourcesPerNode::kMerge);
  EXPECT_EQ(At(t, std::string(kWorkers) + "/parallelism"), 4);
  EXPECT_EQ(At(t, std::string(kLauncher) + "/parallelism"), 1);
  EXPECT_EQ(t.facts.num_nodes, 4);
  const json& worker = At(t, std::string(kWorkers) + "/template/spec/containers/0");
  EXPECT_FALSE(worker.contains("resources"));
  EXPECT_FALSE(worker.contains("env"));
  EXPECT_EQ(t.facts.trainer_containers,
            std::vector<std::string>{std::string(kLauncher) + "/template/spec/containers/0"});
}

TEST(TrainJobTemplates, MpiLauncherAsNodeMustBeABoolean) {
  try {
    Build(kMpiJob, MpiRuntime("\"yes\""));
    FAIL() << "no error";
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.pointer(), "/spec/runtimeRef");
    EXPECT_NE(std::string(e.what()).find("/spec/mlPolicy/mpi/runLauncherAsNode: must be a boolean"),
              std::string::npos)
        << e.what();
  }
}

TEST(RuntimeRef, DefaultsAsTrainersCrdDoes) {
  const auto a = ReadRuntimeRef(Yaml("{spec: {runtimeRef: {name: x}}}"), "ns");
  EXPECT_EQ(a.kind, "ClusterTrainingRuntime");
  EXPECT_EQ(a.group, "trainer.kubeflow.org");
  EXPECT_EQ(a.ns, "");
  EXPECT_TRUE(a.IsTrainerRuntime());
  const auto b = ReadRuntimeRef(
      Yaml("{metadata: {namespace: t}, spec: {runtimeRef: {name: x, kind: TrainingRuntime}}}"),
      "ns");
  EXPECT_EQ(b.ns, "t");
  EXPECT_EQ(b.Describe(), "TrainingRuntime 'x'");
  EXPECT_FALSE(ReadRuntimeRef(Yaml("{spec: {runtimeRef: {name: x, apiGroup: other.io}}}"), "")
                   .IsTrainerRuntime());
}

struct Wrong {
  const char* name;
  const char* job;
  const char* runtime;
  const char* pointer;
};
class TrainJobWrongTypes : public testing::TestWithParam<Wrong> {};
TEST_P(TrainJobWrongTypes, NameTheField) {
  try {
    Build(GetParam().job, GetParam().runtime);
    FAIL() << "accepted";
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.pointer(), GetParam().pointer) << e.what();
  }
}
INSTANTIATE_TEST_SUITE_P(
    Manifests, TrainJobWrongTypes,
    testing::Values(
        Wrong{"resources_string", "{spec: {runtimeRef: {name: r}, trainer: {resourcesPerNode: x}}}",
              kRuntime.c_str(), "/spec/trainer/resourcesPerNode"},
        Wrong{"num_nodes_string", "{spec: {runtimeRef: {name: r}, trainer: {numNodes: '2'}}}",
              kRuntime.c_str(), "/spec/trainer/numNodes"},
        Wrong{"env_item", "{spec: {runtimeRef: {name: r}, trainer: {env: [x]}}}", kRuntime.c_str(),
              "/spec/trainer/env/0"},
        Wrong{"patches_map", "{spec: {runtimeRef: {name: r}, runtimePatches: {}}}",
              kRuntime.c_str(), "/spec/runtimePatches"},
        Wrong{"runtime_jobs", "{spec: {runtimeRef: {name: r}}}",
              "{spec: {template: {spec: {replicatedJobs: {}}}}}", "/spec/runtimeRef"},
        Wrong{"runtime_none", "{spec: {runtimeRef: {name: r}}}", "{spec: {}}", "/spec/runtimeRef"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(TrainJobWrongTypes, RuntimeErrorNamesTheRuntimeAndItsField) {
  try {
    Build("{spec: {runtimeRef: {name: r}}}", "{spec: {template: {spec: {replicatedJobs: {}}}}}");
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/spec/runtimeRef: ClusterTrainingRuntime 'r' /spec/template/spec/replicatedJobs: "
              "must be a list, got a mapping");
  }
}

}  // namespace
}  // namespace rw::workload
