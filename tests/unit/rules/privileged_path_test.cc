// InfiniBand through a privileged container alone (AKS and Nebius document it): the path
// `privileged`, read only when NCCL is asked for InfiniBand, judged but never denied for the
// path itself, and never moved onto the namespace's mode.
#include <gtest/gtest.h>

#include <algorithm>

#include "../fixtures/yaml.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::rules {
namespace {

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off, validation: deny}
namespaces:
  - names: [sriov-ns]
    mode: sriov
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
  - names: [host-ns]
    mode: hostNetwork
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

// A privileged GPU pod in `ns` with `container_extra` (YAML lines of the container) spliced in.
nlohmann::json Pod(const std::string& ns, const std::string& container_extra,
                   bool privileged = true) {
  return fixtures::Yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: " + ns +
                        "}\nspec:\n  containers:\n  - name: trainer\n    image: x\n" +
                        (privileged ? "    securityContext: {privileged: true}\n" : "") +
                        "    resources: {limits: {nvidia.com/gpu: 8}}\n" + container_extra);
}

bool Fired(const Diagnosis& d, std::string_view rule) {
  return std::any_of(d.findings.begin(), d.findings.end(),
                     [&](const Finding& f) { return f.rule == rule; });
}

TEST(PrivilegedPath, AnInfinibandVariableOnAPrivilegedGpuContainerIsThePath) {
  for (const std::string env :
       {"{name: NCCL_IB_HCA, value: mlx5}", "{name: NCCL_IB_DISABLE, value: \"0\"}",
        "{name: NCCL_NET, value: ib}"}) {
    const auto d = Diagnose(Pod("default", "    env: [" + env + "]\n"), TestPolicy(), "default");
    EXPECT_EQ(d.path, policy::Path::kPrivileged) << env;
    EXPECT_TRUE(d.rdma) << env;
    // privileged works, and the warning says what would replace it.
    EXPECT_TRUE(Fired(d, "privileged-rdma")) << env;
    EXPECT_EQ(d.Count(Severity::kError), 0u) << env;
  }
  // A launcher's -x and a /dev/infiniband mount say so too.
  const auto launcher =
      Diagnose(Pod("default", "    command: [mpirun, -x, NCCL_IB_HCA=mlx5_0, python, train.py]\n"),
               TestPolicy(), "default");
  EXPECT_EQ(launcher.path, policy::Path::kPrivileged);
  const auto mount = Diagnose(fixtures::Yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: trainer
    image: x
    securityContext: {privileged: true}
    resources: {limits: {nvidia.com/gpu: 8}}
    volumeMounts: [{name: ib, mountPath: /dev/infiniband}]
  volumes: [{name: ib, hostPath: {path: /dev/infiniband}}]
)"),
                              TestPolicy(), "default");
  EXPECT_EQ(mount.path, policy::Path::kPrivileged);
  EXPECT_FALSE(Fired(mount, "rdma-device-hostpath"));  // privileged passes the devices
}

// Privileged alone is no sign of a NIC (GPU pods are privileged for many reasons), and neither
// are InfiniBand variables without privileged, nor IB disabled.
TEST(PrivilegedPath, NeedsBothPrivilegedAndAnInfinibandAsk) {
  EXPECT_EQ(Diagnose(Pod("default", ""), TestPolicy(), "default").path, policy::Path::kNone);
  EXPECT_EQ(Diagnose(Pod("default", "    env: [{name: NCCL_IB_HCA, value: mlx5}]\n", false),
                     TestPolicy(), "default")
                .path,
            policy::Path::kNone);
  const auto disabled = Diagnose(Pod("default",
                                     "    env: [{name: NCCL_IB_HCA, value: mlx5}, "
                                     "{name: NCCL_IB_DISABLE, value: \"1\"}]\n"),
                                 TestPolicy(), "default");
  EXPECT_EQ(disabled.path, policy::Path::kTcp);
  EXPECT_EQ(Diagnose(Pod("default", "    env: [{name: NCCL_NET, value: Socket}]\n"), TestPolicy(),
                     "default")
                .path,
            policy::Path::kNone);
}

// In a namespace whose mode is another path the pod is left as written (no VF next to the
// host's HCAs) and not denied for its path: the reading is not a certainty.
TEST(PrivilegedPath, IsNeitherMutatedNorDeniedInAnotherModesNamespace) {
  for (const std::string ns : {"sriov-ns", "host-ns"}) {
    const auto pod = Pod(ns, "    env: [{name: NCCL_IB_HCA, value: mlx5}]\n");
    const auto w = workload::Workload::Read(pod, TestPolicy(), "default");
    EXPECT_FALSE(Assess(w, TestPolicy()).mutates) << ns;
    const auto d = Diagnose(pod, TestPolicy(), "default");
    EXPECT_EQ(d.path, policy::Path::kPrivileged) << ns;
    EXPECT_FALSE(Fired(d, "path-not-allowed")) << ns;
    EXPECT_EQ(d.Count(Severity::kError), 0u) << ns;
  }
}

// Another path decides first: a VF claimed, or hostNetwork.
TEST(PrivilegedPath, ComesAfterEveryOtherPath) {
  const auto vf = Diagnose(fixtures::Yaml(R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
  annotations: {k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1}
spec:
  containers:
  - name: trainer
    image: x
    securityContext: {privileged: true}
    env: [{name: NCCL_IB_HCA, value: mlx5}]
    resources: {limits: {nvidia.com/gpu: 8, rdma/vf: 1}}
)"),
                           TestPolicy(), "default");
  EXPECT_EQ(vf.path, policy::Path::kSriov);
  auto host = Pod("default", "    env: [{name: NCCL_IB_HCA, value: mlx5}]\n");
  host["spec"]["hostNetwork"] = true;
  host["spec"]["dnsPolicy"] = "ClusterFirstWithHostNet";
  EXPECT_EQ(Diagnose(host, TestPolicy(), "default").path, policy::Path::kHostNetwork);
}

// A job split between privileged InfiniBand and another path is said, as a warning.
TEST(PrivilegedPath, AMixedJobWithAPrivilegedTemplateIsAWarning) {
  const auto job = fixtures::Yaml(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j, namespace: default}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          hostNetwork: true
          dnsPolicy: ClusterFirstWithHostNet
          containers:
          - name: pytorch
            image: x
            securityContext: {capabilities: {add: [IPC_LOCK]}}
            env: [{name: NCCL_IB_HCA, value: mlx5}]
            resources: {limits: {nvidia.com/gpu: 8}}
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: pytorch
            image: x
            securityContext: {privileged: true}
            env: [{name: NCCL_IB_HCA, value: mlx5}]
            resources: {limits: {nvidia.com/gpu: 8}}
)");
  const auto d = Diagnose(job, TestPolicy(), "default");
  EXPECT_EQ(d.path, policy::Path::kMixed);
  const auto mixed = std::find_if(d.findings.begin(), d.findings.end(),
                                  [](const Finding& f) { return f.rule == "mixed-paths"; });
  ASSERT_NE(mixed, d.findings.end());
  EXPECT_EQ(mixed->severity, Severity::kWarning);
}

}  // namespace
}  // namespace rw::rules
