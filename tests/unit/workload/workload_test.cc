// Wrong types never crash the reader: they become a ManifestError naming the field's pointer.
#include <gtest/gtest.h>

#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::workload {
namespace {

using fixtures::Yaml;

struct TypeCase {
  const char* name;
  const char* manifest;
  const char* pointer;
};

class WrongTypeTest : public testing::TestWithParam<TypeCase> {};

TEST_P(WrongTypeTest, NamesThePointer) {
  try {
    Workload::Read(Yaml(GetParam().manifest), policy::DefaultPolicy(), "default");
    FAIL() << "accepted";
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.pointer(), GetParam().pointer) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Manifests, WrongTypeTest,
    testing::Values(
        TypeCase{"env_string",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: x}]}}",
                 "/spec/containers/0/env"},
        TypeCase{"containers_map", "{apiVersion: v1, kind: Pod, spec: {containers: {}}}",
                 "/spec/containers"},
        TypeCase{"env_value_number",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: [{name: X, value: "
                 "1}]}]}}",
                 "/spec/containers/0/env/0/value"},
        // An env entry's members are checked name, value, valueFrom: the first wrong one is
        // named, and a missing name before any other member's type.
        TypeCase{"env_name_missing_before_value_number",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: [{value: 1, "
                 "valueFrom: x}]}]}}",
                 "/spec/containers/0/env/0/name"},
        TypeCase{"env_value_number_before_value_from",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: [{valueFrom: x, "
                 "name: X, value: 1}]}]}}",
                 "/spec/containers/0/env/0/value"},
        TypeCase{"env_value_from_string",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: [{name: X, "
                 "other: 1, valueFrom: x}]}]}}",
                 "/spec/containers/0/env/0/valueFrom"},
        TypeCase{"env_name_number",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: [{name: 1, "
                 "value: 2}]}]}}",
                 "/spec/containers/0/env/0/name"},
        TypeCase{"limit_not_quantity",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, resources: {limits: "
                 "{cpu: lots}}}]}}",
                 "/spec/containers/0/resources/limits/cpu"},
        TypeCase{"annotation_number",
                 "{apiVersion: batch/v1, kind: Job, spec: {template: {metadata: {annotations: "
                 "{a/b: 1}}}}}",
                 "/spec/template/metadata/annotations/a~1b"},
        // Labels are only checked, never kept, and name the first wrong one in key order.
        TypeCase{"label_list",
                 "{apiVersion: batch/v1, kind: Job, spec: {template: {metadata: {labels: "
                 "{z: 1, b: [x], a: ok}}}}}",
                 "/spec/template/metadata/labels/b"},
        TypeCase{"host_network_string", "{apiVersion: v1, kind: Pod, spec: {hostNetwork: 'yes'}}",
                 "/spec/hostNetwork"},
        TypeCase{"template_list", "{apiVersion: batch/v1, kind: Job, spec: {template: []}}",
                 "/spec/template"},
        TypeCase{"caps_add_string",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, securityContext: "
                 "{capabilities: {add: IPC_LOCK}}}]}}",
                 "/spec/containers/0/securityContext/capabilities/add"},
        // The kind row's replica and gang fields are read typed like the rest.
        TypeCase{"replicas_string",
                 "{apiVersion: kubeflow.org/v1, kind: PyTorchJob, spec: {pytorchReplicaSpecs: "
                 "{Worker: {replicas: '2', template: {}}}}}",
                 "/spec/pytorchReplicaSpecs/Worker/replicas"},
        TypeCase{"parallelism_float",
                 "{apiVersion: batch/v1, kind: Job, spec: {parallelism: 1.5, template: {}}}",
                 "/spec/parallelism"},
        TypeCase{"min_available_string",
                 "{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, spec: {minAvailable: '2', "
                 "tasks: []}}",
                 "/spec/minAvailable"},
        TypeCase{"gang_member_replicas_list",
                 "{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, spec: {minAvailable: 1, "
                 "tasks: [{name: a}, {replicas: [2]}]}}",
                 "/spec/tasks/1/replicas"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(Workload, PointerTokensAreUnescapedOnceAsRfc6901Says) {
  // ~1 is '/', ~0 is '~', and ~01 is the two characters "~1", not '/'; an empty last token stays.
  EXPECT_EQ(PointerTokens("/a~1b/~0c/~01/"), (std::vector<std::string>{"a/b", "~c", "~1", ""}));
  EXPECT_EQ(PointerTokens("/rdma~1vf"), std::vector<std::string>{"rdma/vf"});
  EXPECT_TRUE(PointerTokens("").empty());
}

TEST(Workload, TemplatesOfEveryReplicaSpecInDocumentOrder) {
  const auto job = Yaml(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j, namespace: team}
spec:
  pytorchReplicaSpecs:
    Master: {template: {spec: {containers: [{name: t}]}}}
    Worker: {template: {spec: {containers: [{name: t}]}}}
)");
  const auto w = Workload::Read(job, policy::DefaultPolicy(), "default");
  ASSERT_EQ(w.templates.size(), 2u);
  EXPECT_EQ(w.templates[0].pointer, "/spec/pytorchReplicaSpecs/Master/template");
  EXPECT_EQ(w.templates[1].pointer, "/spec/pytorchReplicaSpecs/Worker/template");
  EXPECT_EQ(w.ns, "team");
}

// How many pods a template stands for comes from the kind row's counts on its way.
TEST(Workload, ReplicasMultiplyAlongTheKindsCounts) {
  auto replicas = [](const std::string& manifest) {
    std::vector<long long> out;
    for (const auto& t : Workload::Read(Yaml(manifest), policy::DefaultPolicy(), "d").templates)
      out.push_back(t.replicas);
    return out;
  };
  using V = std::vector<long long>;
  EXPECT_EQ(replicas("{apiVersion: kubeflow.org/v1, kind: PyTorchJob, spec: {pytorchReplicaSpecs: "
                     "{Master: {template: {}}, Worker: {replicas: 3, template: {}}}}}"),
            (V{1, 3}));
  EXPECT_EQ(replicas("{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, spec: {replicatedJobs: "
                     "[{replicas: 2, template: {spec: {parallelism: 4, template: {}}}}, "
                     "{template: {spec: {template: {}}}}]}}"),
            (V{8, 1}));
  // A LeaderWorkerSet's size counts the leader; its top-level replicas are independent groups.
  EXPECT_EQ(replicas("{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, spec: "
                     "{replicas: 5, leaderWorkerTemplate: {size: 4, leaderTemplate: {}, "
                     "workerTemplate: {}}}}"),
            (V{1, 3}));
  // Without a leaderTemplate the leader is made from the workerTemplate: all `size` pods are.
  EXPECT_EQ(replicas("{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, spec: "
                     "{leaderWorkerTemplate: {size: 2, workerTemplate: {}}}}"),
            (V{2}));
  EXPECT_EQ(
      replicas("{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, spec: "
               "{leaderWorkerTemplate: {size: 2, leaderTemplate: null, workerTemplate: {}}}}"),
      (V{2}));
  // A KubeRay worker group: replicas raised to minReplicas, capped at maxReplicas, times
  // numOfHosts; the head is one pod.
  EXPECT_EQ(replicas("{apiVersion: ray.io/v1, kind: RayCluster, spec: {headGroupSpec: "
                     "{template: {}}, workerGroupSpecs: [{minReplicas: 2, template: {}}, "
                     "{replicas: 1, numOfHosts: 4, template: {}}, "
                     "{replicas: 6, maxReplicas: 3, template: {}}, {template: {}}]}}"),
            (V{1, 2, 4, 3, 1}));
  EXPECT_EQ(replicas("{apiVersion: ray.io/v1, kind: RayJob, spec: {rayClusterSpec: "
                     "{headGroupSpec: {template: {}}, workerGroupSpecs: [{replicas: 1, "
                     "minReplicas: 3, template: {}}]}}}"),
            (V{1, 3}));
  EXPECT_EQ(replicas("{apiVersion: batch/v1, kind: Job, spec: {parallelism: 0, template: {}}}"),
            (V{0}));
  // Independent copies never add up to one job.
  EXPECT_EQ(replicas("{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 5, template: {}}}"),
            (V{1}));
  EXPECT_EQ(replicas("{apiVersion: batch/v1, kind: Job, spec: {parallelism: 999999999, "
                     "template: {}}}"),
            (V{kMaxReplicas}));
}

TEST(Workload, APolicyKindCountsReplicasAndParallelismOnTheWay) {
  const auto policy = policy::ParsePolicyText(
      "kinds: [{group: example.com, kind: Train, templates: ['/spec/workers/*/template']}]\n");
  const auto w = Workload::Read(Yaml("{apiVersion: example.com/v1, kind: Train, spec: "
                                     "{parallelism: 2, workers: {a: {replicas: 3, template: {}}, "
                                     "replicas: {replicas: 2, template: {}}}}}"),
                                policy, "d");
  ASSERT_EQ(w.templates.size(), 2u);
  EXPECT_EQ(w.templates[0].replicas, 6);
  // A worker named `replicas` is no count of the others: it is an object, not an integer.
  EXPECT_EQ(w.templates[1].replicas, 4);
}

TEST(Workload, TheGangIsReadFromTheKindsFields) {
  const auto w = Workload::Read(Yaml("{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, spec: "
                                     "{minAvailable: 2, tasks: [{replicas: 2, template: {}}, "
                                     "{template: {}}]}}"),
                                policy::DefaultPolicy(), "d");
  ASSERT_TRUE(w.gang);
  EXPECT_EQ(w.gang->min_available, 2);
  EXPECT_EQ(w.gang->members, 3);
  EXPECT_EQ(w.gang->pointer, "/spec/minAvailable");
  const auto k =
      Workload::Read(Yaml("{apiVersion: kubeflow.org/v1, kind: MPIJob, spec: {runPolicy: "
                          "{schedulingPolicy: {minAvailable: 1}}, mpiReplicaSpecs: "
                          "{Launcher: {template: {}}, Worker: {replicas: 4, "
                          "template: {}}}}}"),
                     policy::DefaultPolicy(), "d");
  ASSERT_TRUE(k.gang);
  EXPECT_EQ(k.gang->members, 5);
  EXPECT_EQ(k.gang->pointer, "/spec/runPolicy/schedulingPolicy/minAvailable");
  EXPECT_FALSE(Workload::Read(Yaml("{apiVersion: batch/v1, kind: Job, spec: {template: {}}}"),
                              policy::DefaultPolicy(), "d")
                   .gang);
}

TEST(Workload, GpuContainersAreThoseRequestingAGpuResource) {
  const auto pod = Yaml(
      "{apiVersion: v1, kind: Pod, spec: {containers: [{name: side}, "
      "{name: t, resources: {requests: {nvidia.com/gpu: '2'}}}]}}");
  const auto w = Workload::Read(pod, policy::DefaultPolicy(), "default");
  ASSERT_EQ(w.templates.size(), 1u);
  EXPECT_FALSE(w.templates[0].containers[0].gpu);
  EXPECT_TRUE(w.templates[0].containers[1].gpu);
  EXPECT_EQ(w.templates[0].containers[1].Claim("nvidia.com/gpu"), 2);
}

// Both CRI runtimes upper-case a name and read ALL in any case; only CRI-O strips a CAP_
// prefix (containerd's CRI writes CAP_CAP_IPC_LOCK), so a prefixed name is not IPC_LOCK
// everywhere: HasOnlyPrefixedCapability tells the rules and the mutator it was asked for.
TEST(Workload, CapabilitiesCompareWithoutCaseAndAllIncludesIpcLockButAPrefixIsNotTheName) {
  const auto pod = Yaml(
      "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, securityContext: {capabilities: "
      "{add: [cap_ipc_lock]}}}, {name: b, securityContext: {capabilities: {add: [all]}}}, "
      "{name: c, securityContext: {capabilities: {add: [ipc_lock]}}}, "
      "{name: d, securityContext: {capabilities: {add: [CAP_ALL]}}}]}}");
  const auto w = Workload::Read(pod, policy::DefaultPolicy(), "default");
  const auto& c = w.templates[0].containers;
  EXPECT_FALSE(c[0].HasCapability("IPC_LOCK"));
  EXPECT_TRUE(c[0].HasOnlyPrefixedCapability("IPC_LOCK"));
  EXPECT_TRUE(c[1].HasCapability("IPC_LOCK"));
  EXPECT_FALSE(c[1].HasOnlyPrefixedCapability("IPC_LOCK"));
  EXPECT_TRUE(c[2].HasCapability("IPC_LOCK"));
  EXPECT_FALSE(c[2].HasOnlyPrefixedCapability("IPC_LOCK"));
  EXPECT_FALSE(c[3].HasCapability("IPC_LOCK"));  // CAP_ALL is ALL on neither runtime
  EXPECT_FALSE(c[3].HasOnlyPrefixedCapability("IPC_LOCK"));
}

TEST(Workload, QuantitiesRoundUp) {
  const auto pod = Yaml(
      "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, resources: {limits: "
      "{x/a: 500m, x/b: 1k, x/c: 2, x/d: '1Ki'}}}]}}");
  const auto w = Workload::Read(pod, policy::DefaultPolicy(), "default");
  const auto& c = w.templates[0].containers[0];
  EXPECT_EQ(c.Claim("x/a"), 1);
  EXPECT_EQ(c.Claim("x/b"), 1000);
  EXPECT_EQ(c.Claim("x/c"), 2);
  EXPECT_EQ(c.Claim("x/d"), 1024);
}

// The API server takes every quantity of the grammar, however large (it caps a binary one at
// 2^63-1): such a value was "not a valid quantity", so a valid manifest was malformed and denied.
TEST(Workload, LargeQuantitiesAreCappedNotRefused) {
  const auto pod = Yaml(
      "{apiVersion: v1, kind: Pod, spec: {containers: ["
      "{name: a, resources: {limits: {memory: 1Ei, cpu: '9223372036854775807', x/n: 1e18, "
      "x/inf: '1e400', x/neg: '-1e400', x/g: 9E}}},"
      "{name: b, resources: {limits: {x/g: '9223372036854775807Ki'}}}]}}");
  const auto w = Workload::Read(pod, policy::DefaultPolicy(), "default");
  const auto& c = w.templates[0].containers[0];
  for (const char* r : {"memory", "cpu", "x/n", "x/inf", "x/g"})
    EXPECT_EQ(c.Claim(r), kMaxQuantityCount) << r;
  EXPECT_EQ(c.Claim("x/neg"), -kMaxQuantityCount);
  // Sums of capped counts stay capped: no overflow however many containers claim the most.
  EXPECT_EQ(w.templates[0].TotalClaim("x/g"), kMaxQuantityCount);
  EXPECT_EQ(w.templates[0].TotalClaimWhere([](const std::string& r) { return r == "x/g"; }),
            kMaxQuantityCount);
  EXPECT_EQ(
      c.ClaimWhere([](const std::string& r) { return r.rfind("x/", 0) == 0 && r != "x/neg"; }),
      kMaxQuantityCount);
}

// A container's variables are views into text the container keeps: they outlive the document
// they were read from, and a copy of the container outlives the workload (ASan checks the reads).
TEST(Workload, EnvOutlivesTheDocumentAndACopyOutlivesTheWorkload) {
  Container copy;
  {
    const Workload w = Workload::Read(
        Yaml("{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: ["
             "{name: NCCL_IB_HCA, value: 'mlx5_0,mlx5_1,mlx5_2,mlx5_3'}, "
             "{name: A_NAME_LONGER_THAN_ANY_SMALL_STRING, valueFrom: {fieldRef: {fieldPath: x}}}, "
             "{name: E, value: ''}, {name: NCCL_IB_HCA, value: mlx5_9}]}]}}"),
        policy::DefaultPolicy(), "default");
    copy = w.templates.at(0).containers.at(0);
  }
  ASSERT_EQ(copy.env.size(), 4u);
  EXPECT_EQ(copy.env[0].name, "NCCL_IB_HCA");
  EXPECT_EQ(copy.env[0].value, "mlx5_0,mlx5_1,mlx5_2,mlx5_3");
  EXPECT_EQ(copy.env[1].name, "A_NAME_LONGER_THAN_ANY_SMALL_STRING");
  EXPECT_FALSE(copy.env[1].value);
  EXPECT_TRUE(copy.env[1].from_ref);
  EXPECT_EQ(copy.env[2].value, "");
  // The later duplicate wins, as in Kubernetes.
  ASSERT_NE(copy.FindEnv("NCCL_IB_HCA"), nullptr);
  EXPECT_EQ(copy.FindEnv("NCCL_IB_HCA")->value, "mlx5_9");
  EXPECT_EQ(copy.FindEnv("NCCL_IB_HCA")->index, 3u);
}

// FindEnv answers an absent name from the names' bits without a walk: every name read is still
// found (an empty one included), none that is absent is, and an env changed after it was read
// is walked rather than answered from stale bits.
TEST(Workload, FindEnvFindsEveryNameReadAndNoOther) {
  std::string env;
  std::vector<std::string> names = {"", "A", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "MASTER_PORT"};
  for (int i = 0; i < 120; ++i) names.push_back("TRAIN_SETTING_" + std::to_string(i));
  for (const auto& n : names) env += std::string(env.empty() ? "" : ", ") + "{name: '" + n + "'}";
  const Workload w = Workload::Read(
      Yaml("{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: [" + env + "]}]}}"),
      policy::DefaultPolicy(), "default");
  Container c = w.templates.at(0).containers.at(0);
  for (const auto& n : names) {
    ASSERT_NE(c.FindEnv(n), nullptr) << n;
    EXPECT_EQ(c.FindEnv(n)->name, n);
  }
  for (const std::string absent : {"NCCL_IB_GID_INDEX", "NCCL_NET", "FI_PROVIDER", "B",
                                   "TRAIN_SETTING_120", "NCCL_IB_DISABLE", "NCCL_IB_HC"})
    EXPECT_EQ(c.FindEnv(absent), nullptr) << absent;
  const EnvVar added{.name = "NCCL_NET", .value = "IB"};
  c.env.push_back(added);
  ASSERT_NE(c.FindEnv("NCCL_NET"), nullptr);
  EXPECT_EQ(c.FindEnv("NCCL_NET")->value, "IB");
}

TEST(Workload, NotAWorkloadHasNoTemplates) {
  const auto w = Workload::Read(Yaml("{apiVersion: v1, kind: ConfigMap, data: {a: b}}"),
                                policy::DefaultPolicy(), "default");
  EXPECT_EQ(w.kind_row, nullptr);
  EXPECT_TRUE(w.templates.empty());
}

}  // namespace
}  // namespace rw::workload
