// Every rule fires on a manifest that breaks it and stays silent on a close variant that does not.
#include <gtest/gtest.h>

#include <algorithm>

#include "../fixtures/yaml.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::rules {
namespace {

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off, validation: warn}
namespaces:
  - names: [sriov-ns]
    mode: sriov
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
    nccl: {fabric: roce, gidIndex: 3}
  - names: [host-ns]
    mode: hostNetwork
  - names: [host-exclusive]
    mode: hostNetwork
    exclusiveNodes: true
  - names: [ib-ns]
    mode: off
    nccl: {fabric: ib}
  - names: [tcp-only]
    mode: tcp
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

using fixtures::Yaml;

// A GPU Pod in `ns`; `spec_extra` and `container_extra` are YAML lines spliced in.
std::string Pod(const std::string& ns, const std::string& spec_extra,
                const std::string& container_extra, const std::string& annotations = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: " + ns + "\n" +
         (annotations.empty() ? "" : "  annotations:\n" + annotations) + "spec:\n" + spec_extra +
         "  containers:\n  - name: trainer\n    image: x\n" + container_extra;
}

const std::string kGpu = "    resources: {limits: {nvidia.com/gpu: 8}}\n";
const std::string kGpuVf = "    resources: {limits: {nvidia.com/gpu: 8, rdma/vf: 1}}\n";
const std::string kGpuShared =
    "    resources: {limits: {nvidia.com/gpu: 8, rdma/hca_shared_devices_a: 1}}\n";
const std::string kIpc = "    securityContext: {capabilities: {add: [IPC_LOCK]}}\n";
const std::string kShm = "    volumeMounts: [{name: shm, mountPath: /dev/shm}]\n";
const std::string kShmVolume = "  volumes: [{name: shm, emptyDir: {medium: Memory}}]\n";
const std::string kNet = "    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1\n";
const std::string kHost = "  hostNetwork: true\n  dnsPolicy: ClusterFirstWithHostNet\n";
std::string Env(const std::string& name, const std::string& value) {
  return "    env: [{name: " + name + ", value: \"" + value + "\"}]\n";
}
// A complete, correct SR-IOV pod.
std::string GoodSriov(const std::string& ns = "sriov-ns", const std::string& extra = "") {
  return Pod(ns, kShmVolume, kGpuVf + kIpc + kShm + extra, kNet);
}

struct RuleCase {
  const char* name;
  const char* rule;
  bool fires;
  std::string manifest;
};

class RuleTest : public testing::TestWithParam<RuleCase> {};

TEST_P(RuleTest, FiresOnlyWhenBroken) {
  const auto& c = GetParam();
  const auto d = Diagnose(Yaml(c.manifest), TestPolicy(), "default");
  const bool fired = std::any_of(d.findings.begin(), d.findings.end(),
                                 [&](const Finding& f) { return f.rule == c.rule; });
  std::string all;
  for (const auto& f : d.findings) all += f.rule + " @" + f.pointer + ": " + f.message + "\n";
  EXPECT_EQ(fired, c.fires) << c.manifest << "\nfindings:\n" << all;
}

INSTANTIATE_TEST_SUITE_P(
    Contract, RuleTest,
    testing::Values(
        RuleCase{"dns_missing_on_host_network", "hostnetwork-dns", true,
                 Pod("default", "  hostNetwork: true\n", kGpu)},
        RuleCase{"dns_default_on_host_network", "hostnetwork-dns", true,
                 Pod("default", "  hostNetwork: true\n  dnsPolicy: Default\n", kGpu)},
        RuleCase{"dns_with_host_net_ok", "hostnetwork-dns", false, Pod("default", kHost, kGpu)},
        RuleCase{"dns_none_is_explicit", "hostnetwork-dns", false,
                 Pod("default", "  hostNetwork: true\n  dnsPolicy: None\n", kGpu)},
        RuleCase{"ipc_lock_missing_on_vf", "ipc-lock-missing", true,
                 Pod("default", "", kGpuVf, kNet)},
        RuleCase{"ipc_lock_all_counts", "ipc-lock-missing", false,
                 Pod("default", "", kGpuVf + "    securityContext: {capabilities: {add: [all]}}\n",
                     kNet)},
        // containerd's CRI prepends CAP_ to every name (CAP_CAP_IPC_LOCK): a warning, below.
        RuleCase{
            "ipc_lock_cap_prefix_is_not_bare_ipc_lock", "ipc-lock-missing", true,
            Pod("default", "",
                kGpuVf + "    securityContext: {capabilities: {add: [CAP_IPC_LOCK]}}\n", kNet)},
        RuleCase{"ipc_lock_lower_case_counts", "ipc-lock-missing", false,
                 Pod("default", "",
                     kGpuVf + "    securityContext: {capabilities: {add: [ipc_lock]}}\n", kNet)},
        RuleCase{"ipc_lock_cap_all_is_not_all", "ipc-lock-missing", true,
                 Pod("default", "",
                     kGpuVf + "    securityContext: {capabilities: {add: [CAP_ALL]}}\n", kNet)},
        RuleCase{"ipc_lock_privileged_counts", "ipc-lock-missing", false,
                 Pod("default", "", kGpuVf + "    securityContext: {privileged: true}\n", kNet)},
        RuleCase{"ipc_lock_not_needed_for_tcp", "ipc-lock-missing", false,
                 Pod("default", "", kGpu + Env("NCCL_IB_DISABLE", "1"))},
        RuleCase{"ifname_eth1_without_attachment", "ifname-not-attached", true,
                 Pod("default", "", kGpu + Env("NCCL_SOCKET_IFNAME", "eth1"))},
        RuleCase{"ifname_eth1_attached", "ifname-not-attached", false,
                 Pod("default", "", kGpuVf + Env("NCCL_SOCKET_IFNAME", "eth1"), kNet)},
        RuleCase{"ifname_exclusion_list_not_checked", "ifname-not-attached", false,
                 Pod("default", "", kGpu + Env("NCCL_SOCKET_IFNAME", "^lo,docker"))},
        RuleCase{"ifname_default_netN", "ifname-not-attached", false,
                 Pod("default", "", kGpu + Env("NCCL_SOCKET_IFNAME", "net1"),
                     "    k8s.v1.cni.cncf.io/networks: macvlan\n")},
        RuleCase{"ifname_on_host_network_not_checked", "ifname-not-attached", false,
                 Pod("default", kHost, kGpu + Env("NCCL_SOCKET_IFNAME", "bond0"))},
        RuleCase{
            "legacy_key", "legacy-network-key", true,
            Pod("default", "", kGpu, "    kubernetes.v1.cni.cncf.io/networks: sriov-rdma-net\n")},
        RuleCase{"current_key", "legacy-network-key", false, Pod("default", "", kGpuVf, kNet)},
        RuleCase{"vf_claimed_no_annotation", "vf-without-network", true,
                 Pod("default", "", kGpuVf)},
        RuleCase{"vf_claimed_with_annotation", "vf-without-network", false,
                 Pod("default", "", kGpuVf, kNet)},
        RuleCase{"two_rails_one_vf", "network-without-vf", true,
                 Pod("default", "", kGpuVf,
                     "    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1,sriov-rdma-net@eth2\n")},
        RuleCase{"annotation_no_vf", "network-without-vf", true, Pod("default", "", kGpu, kNet)},
        RuleCase{"one_rail_one_vf", "network-without-vf", false, Pod("default", "", kGpuVf, kNet)},
        RuleCase{"ib_disabled_with_vf", "ib-disabled-with-rdma", true,
                 Pod("default", "", kGpuVf + Env("NCCL_IB_DISABLE", "1"), kNet)},
        // ncclNetInit starts only the transport NCCL_NET names (ignoring case): no verbs
        RuleCase{"net_socket_with_vf", "ib-disabled-with-rdma", true,
                 Pod("default", "", kGpuVf + Env("NCCL_NET", "socket"), kNet)},
        RuleCase{"net_ib_with_vf", "ib-disabled-with-rdma", false,
                 Pod("default", "", kGpuVf + Env("NCCL_NET", "IB"), kNet)},
        RuleCase{"ib_enabled_with_vf", "ib-disabled-with-rdma", false,
                 Pod("default", "", kGpuVf + Env("NCCL_IB_DISABLE", "0"), kNet)},
        RuleCase{"ib_disabled_without_rdma", "ib-disabled-with-rdma", false,
                 Pod("default", "", kGpu + Env("NCCL_IB_DISABLE", "1"))},
        RuleCase{"host_network_with_annotation", "hostnetwork-with-network-annotation", true,
                 Pod("default", kHost, kGpu, kNet)},
        RuleCase{"host_network_without_annotation", "hostnetwork-with-network-annotation", false,
                 Pod("default", kHost, kGpu)},
        RuleCase{"path_not_allowed_host_in_sriov_ns", "path-not-allowed", true,
                 Pod("sriov-ns", kHost, kGpu + kIpc)},
        RuleCase{"path_allowed_sriov_in_sriov_ns", "path-not-allowed", false, GoodSriov()},
        RuleCase{"gid_mismatch", "gid-index-mismatch", true,
                 GoodSriov("sriov-ns", Env("NCCL_IB_GID_INDEX", "5"))},
        RuleCase{"gid_match", "gid-index-mismatch", false,
                 GoodSriov("sriov-ns", Env("NCCL_IB_GID_INDEX", "3"))},
        RuleCase{"gid_other_namespace_auto", "gid-index-mismatch", false,
                 GoodSriov("default", Env("NCCL_IB_GID_INDEX", "5"))},
        // v2: a user's NCCL_SOCKET_IFNAME is never a conflict (eth0 for bootstrap is fine).
        RuleCase{"user_ifname_eth0_in_sriov_ns_no_conflict", "policy-conflict", false,
                 Pod("sriov-ns", "", kGpu + Env("NCCL_SOCKET_IFNAME", "eth0"))},
        RuleCase{"conflict_dns_default_in_host_ns", "policy-conflict", true,
                 Pod("host-ns", "  dnsPolicy: Default\n", kGpu)},
        RuleCase{"no_conflict_eq_eth1", "policy-conflict", false,
                 Pod("sriov-ns", "", kGpu + Env("NCCL_SOCKET_IFNAME", "=eth1"))},
        RuleCase{"conflict_gid_shadowed_by_mismatch", "policy-conflict", false,
                 GoodSriov("sriov-ns", Env("NCCL_IB_GID_INDEX", "5"))},
        RuleCase{"invalid_ib_disable_true", "invalid-nccl-value", true,
                 Pod("default", "", kGpu + Env("NCCL_IB_DISABLE", "true"))},
        RuleCase{"invalid_gdr_lowercase", "invalid-nccl-value", true,
                 Pod("default", "", kGpu + Env("NCCL_NET_GDR_LEVEL", "phb"))},
        RuleCase{"valid_gdr", "invalid-nccl-value", false,
                 Pod("default", "", kGpu + Env("NCCL_NET_GDR_LEVEL", "PHB"))},
        RuleCase{"privileged_rdma", "privileged-rdma", true,
                 Pod("default", "", kGpuVf + "    securityContext: {privileged: true}\n", kNet)},
        RuleCase{"capability_only", "privileged-rdma", false, GoodSriov("default")},
        RuleCase{
            "non_root_user", "non-root-ipc-lock", true,
            Pod("default", kShmVolume,
                kGpuVf +
                    "    securityContext: {runAsUser: 1000, capabilities: {add: [IPC_LOCK]}}\n" +
                    kShm,
                kNet)},
        RuleCase{"root_user", "non-root-ipc-lock", false, GoodSriov("default")},
        RuleCase{"host_rdma_no_device", "rdma-device-missing", true,
                 Pod("default", kHost, kGpu + kIpc + kShm)},
        RuleCase{"host_rdma_shared_device", "rdma-device-missing", false,
                 Pod("default", kHost, kGpuShared + kIpc + kShm)},
        RuleCase{"host_fixed_port", "hostnetwork-fixed-port", true,
                 Pod("default", kHost, kGpu + "    ports: [{containerPort: 29500}]\n")},
        RuleCase{"host_master_port", "hostnetwork-fixed-port", true,
                 Pod("default", kHost, kGpu + Env("MASTER_PORT", "23456"))},
        RuleCase{"host_port_exclusive_nodes", "hostnetwork-fixed-port", false,
                 Pod("host-exclusive", kHost, kGpu + "    ports: [{containerPort: 29500}]\n")},
        RuleCase{"shm_missing", "shm-too-small", true, Pod("default", "", kGpuVf + kIpc, kNet)},
        RuleCase{"shm_present", "shm-too-small", false, GoodSriov("default")},
        RuleCase{"shm_host_ipc", "shm-too-small", false,
                 Pod("default", "  hostIPC: true\n", kGpuVf + kIpc, kNet)},
        RuleCase{"gid_on_ib", "gid-index-on-ib", true,
                 GoodSriov("ib-ns", Env("NCCL_IB_GID_INDEX", "3"))},
        RuleCase{"gid_on_roce", "gid-index-on-ib", false,
                 GoodSriov("default", Env("NCCL_IB_GID_INDEX", "3"))},
        RuleCase{"launcher_contradicts_env", "launcher-args-conflict", true,
                 GoodSriov("default",
                           Env("NCCL_SOCKET_IFNAME", "eth1") +
                               "    command: [mpirun, -x, NCCL_SOCKET_IFNAME=eth0, python]\n")},
        RuleCase{"launcher_agrees", "launcher-args-conflict", false,
                 GoodSriov("default",
                           Env("NCCL_SOCKET_IFNAME", "eth1") +
                               "    command: [mpirun, -x, NCCL_SOCKET_IFNAME=eth1, python]\n")},
        RuleCase{"launcher_disables_ib_on_rdma_path", "launcher-args-conflict", true,
                 GoodSriov("default",
                           "    args: [bash, -c, 'export NCCL_IB_DISABLE=1; python train.py']\n")},
        // NCCL compares its debug level without case: `info` in the launcher is the env's INFO.
        RuleCase{"launcher_debug_level_other_case", "launcher-args-conflict", false,
                 GoodSriov("default", Env("NCCL_DEBUG", "INFO") +
                                          "    command: [mpirun, -x, NCCL_DEBUG=info, python]\n")},
        RuleCase{"launcher_debug_level_differs", "launcher-args-conflict", true,
                 GoodSriov("default", Env("NCCL_DEBUG", "INFO") +
                                          "    command: [mpirun, -x, NCCL_DEBUG=warn, python]\n")},
        RuleCase{"malformed_annotation", "invalid-network-annotation", true,
                 Pod("default", "", kGpu, "    k8s.v1.cni.cncf.io/networks: 'a,,b'\n")}),
    [](const auto& p) { return std::string(p.param.name); });

constexpr const char* kMixedJob = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j, namespace: default}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          hostNetwork: true
          dnsPolicy: ClusterFirstWithHostNet
          containers: [{name: t, resources: {limits: {nvidia.com/gpu: 1}}}]
    Worker:
      template:
        metadata: {annotations: {k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1}}
        spec:
          containers: [{name: t, resources: {limits: {nvidia.com/gpu: 1, rdma/vf: 1}}}]
)";

TEST(WorkloadRules, MixedPathsAcrossReplicaSpecs) {
  const auto d = Diagnose(Yaml(kMixedJob), TestPolicy(), "default");
  EXPECT_EQ(d.path, policy::Path::kMixed);
  EXPECT_TRUE(std::any_of(d.findings.begin(), d.findings.end(),
                          [](const Finding& f) { return f.rule == "mixed-paths"; }));
}

TEST(WorkloadRules, LauncherWithoutGpuDoesNotMakeMixed) {
  const std::string job = R"(
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: m, namespace: default}
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers: [{name: l, command: [mpirun, -x, NCCL_IB_DISABLE=0]}]
    Worker:
      template:
        metadata: {annotations: {k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1}}
        spec:
          containers: [{name: t, resources: {limits: {nvidia.com/gpu: 1, rdma/vf: 1}}}]
)";
  const auto d = Diagnose(Yaml(job), TestPolicy(), "default");
  EXPECT_EQ(d.path, policy::Path::kSriov);
  EXPECT_TRUE(d.rdma);
  EXPECT_FALSE(std::any_of(d.findings.begin(), d.findings.end(),
                           [](const Finding& f) { return f.rule == "mixed-paths"; }));
}

TEST(WorkloadRules, GangIncompleteOnVolcanoJob) {
  const std::string job = R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v, namespace: default}
spec:
  minAvailable: 2
  tasks:
    - {name: a, replicas: 2, template: {spec: {containers: [{name: t, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
    - {name: b, replicas: 2, template: {spec: {containers: [{name: t, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
)";
  auto fired = [](const Diagnosis& d) {
    return std::any_of(d.findings.begin(), d.findings.end(), [](const Finding& f) {
      return f.rule == "gang-incomplete" && f.pointer == "/spec/minAvailable";
    });
  };
  EXPECT_TRUE(fired(Diagnose(Yaml(job), TestPolicy(), "default")));
  std::string complete = job;
  complete.replace(complete.find("minAvailable: 2"), 15, "minAvailable: 4");
  EXPECT_FALSE(fired(Diagnose(Yaml(complete), TestPolicy(), "default")));
}

// A `kinds:` entry tells the rules what a built-in row tells them: whether its GPU pods add up
// to a multi-node job, and the dnsPolicy its controller gives hostNetwork pods.
TEST(KindRows, APolicyKindIsJudgedByItsRow) {
  const auto policy = policy::ParsePolicyText(R"(
defaults: {mode: off, validation: warn}
kinds:
  - {group: example.com, kind: Train, templates: [/spec/template]}
  - {group: example.com, kind: TrainDns, templates: [/spec/template],
     hostNetworkDnsPolicy: ClusterFirstWithHostNet}
  - {group: example.com, kind: Copies, templates: [/spec/template], multiNode: false}
)");
  auto object = [](const std::string& kind) {
    return Yaml("apiVersion: example.com/v1\nkind: " + kind +
                "\nmetadata: {name: t, namespace: default}\n"
                "spec:\n  parallelism: 2\n  template:\n    spec:\n      hostNetwork: true\n"
                "      containers: [{name: t, resources: {limits: {nvidia.com/gpu: 8}}}]\n");
  };
  auto fired = [](const Diagnosis& d, const std::string& rule) {
    return std::any_of(d.findings.begin(), d.findings.end(),
                       [&](const Finding& f) { return f.rule == rule; });
  };
  const auto train = Diagnose(object("Train"), policy, "default");
  EXPECT_TRUE(train.rdma);  // two GPU pods of a training kind on the host network cross nodes
  EXPECT_TRUE(fired(train, "hostnetwork-dns"));
  const auto dns = Diagnose(object("TrainDns"), policy, "default");
  EXPECT_TRUE(dns.rdma);
  EXPECT_FALSE(fired(dns, "hostnetwork-dns"));  // its controller sets ClusterFirstWithHostNet
  // The evidence says the dnsPolicy the pods get, as the rule decided it.
  auto shows = [](const Diagnosis& d, const std::string& line) {
    return std::find(d.evidence.begin(), d.evidence.end(), line) != d.evidence.end();
  };
  EXPECT_TRUE(shows(
      dns, "dnsPolicy: ClusterFirstWithHostNet (what the example.com TrainDns controller sets)"));
  EXPECT_TRUE(shows(train, "dnsPolicy: ClusterFirst (default)"));
  const auto copies = Diagnose(object("Copies"), policy, "default");
  EXPECT_FALSE(copies.rdma);  // independent copies: no multi-node sign
  EXPECT_TRUE(fired(copies, "hostnetwork-dns"));
}

// mpi-operator's v2beta1 controller gives every hostNetwork pod ClusterFirstWithHostNet, over
// what the template says (mpi_job_controller.go); training-operator's v1 MPIJob sets nothing.
TEST(KindRows, MpiOperatorV2SetsTheDnsPolicyOfItsHostNetworkPods) {
  auto mpijob = [](const std::string& version, const std::string& dns) {
    return Yaml("apiVersion: kubeflow.org/" + version +
                "\nkind: MPIJob\nmetadata: {name: m, namespace: default}\n"
                "spec:\n  mpiReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n"
                "        spec:\n          hostNetwork: true\n" +
                dns +
                "          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]\n");
  };
  auto fired = [](const Diagnosis& d) {
    return std::any_of(d.findings.begin(), d.findings.end(),
                       [](const Finding& f) { return f.rule == "hostnetwork-dns"; });
  };
  const std::string explicit_default = "          dnsPolicy: Default\n";
  for (const auto* dns : {"", explicit_default.c_str()}) {
    const auto v2 = Diagnose(mpijob("v2beta1", dns), TestPolicy(), "default");
    EXPECT_TRUE(v2.rdma) << dns;  // multi-node on the host network
    EXPECT_FALSE(fired(v2)) << dns;
    EXPECT_NE(std::find(v2.evidence.begin(), v2.evidence.end(),
                        "dnsPolicy: ClusterFirstWithHostNet (what the kubeflow.org MPIJob "
                        "controller sets)"),
              v2.evidence.end())
        << dns;
    EXPECT_TRUE(fired(Diagnose(mpijob("v1", dns), TestPolicy(), "default"))) << dns;
  }
  // Both versions are still one kind to the table's other readers.
  const auto* v1 = TestPolicy().FindKind("kubeflow.org/v1", "MPIJob");
  const auto* v2 = TestPolicy().FindKind("kubeflow.org/v2beta1", "MPIJob");
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v2, nullptr);
  EXPECT_NE(v1, v2);
  EXPECT_EQ(v1->gang.min_available, v2->gang.min_available);
}

// The gIB plugin names NCCL's transport, not who brings the NICs: on the host network the pod
// has no namespace of its own for GKE to attach NICs to, and the plugin drives the host's.
TEST(Paths, TheGibPluginOnTheHostNetworkIsTheHostNetworkPath) {
  const std::string installer =
      "  initContainers: [{name: gib, image: us-docker.example/gib/nccl-plugin-gib:v1}]\n";
  const struct {
    std::string spec, container;
  } signs[] = {{installer, ""}, {"", Env("NCCL_NET", "gIB")}};
  for (const auto& sign : signs) {
    const auto host =
        Diagnose(Yaml(Pod("default", kHost + sign.spec, kGpu + kIpc + sign.container)),
                 TestPolicy(), "default");
    EXPECT_EQ(host.path, policy::Path::kHostNetwork) << sign.spec << sign.container;
    EXPECT_TRUE(host.rdma);
    const auto off = Diagnose(Yaml(Pod("default", sign.spec, kGpu + kIpc + sign.container)),
                              TestPolicy(), "default");
    EXPECT_EQ(off.path, policy::Path::kSriov) << sign.spec << sign.container;
  }
}

TEST(Paths, FirstSignalDecides) {
  struct Case {
    std::string manifest;
    policy::Path path;
    bool rdma;
  };
  const Case cases[] = {
      {Pod("default", "", "    resources: {limits: {cpu: 1}}\n"), policy::Path::kNone, false},
      // v2: on the host network RDMA needs a sign of it; a GPU pod alone is not RDMA.
      {Pod("default", kHost, kGpu), policy::Path::kHostNetwork, false},
      {Pod("default", kHost, kGpu + kIpc), policy::Path::kHostNetwork, true},
      {Pod("default", kHost, kGpu + Env("NCCL_IB_DISABLE", "1")), policy::Path::kHostNetwork,
       false},
      {Pod("default", "", kGpuVf, kNet), policy::Path::kSriov, true},
      {Pod("default", "", kGpu, kNet), policy::Path::kSriov, true},
      {Pod("default", "", kGpuShared), policy::Path::kShared, true},
      {Pod("default", "", kGpu + Env("NCCL_IB_DISABLE", "1")), policy::Path::kTcp, false},
      {Pod("default", "",
           kGpu + "    env: [{name: NCCL_IB_DISABLE, valueFrom: {configMapKeyRef: {name: c, key: "
                  "k}}}]\n"),
       policy::Path::kUnknown, false},
      {Pod("default", "", kGpu + Env("NCCL_SOCKET_IFNAME", "eth0")), policy::Path::kNone, false},
  };
  for (const auto& c : cases) {
    const auto d = Diagnose(Yaml(c.manifest), TestPolicy(), "default");
    EXPECT_EQ(d.path, c.path) << c.manifest;
    EXPECT_EQ(d.rdma, c.rdma) << c.manifest;
  }
}

// NCCL_NET=Socket keeps NCCL off verbs: the RDMA rules it would otherwise fire stay silent
// (the template does not use RDMA), while the path stays what the manifest claims (CONTRACT
// section 3 reads only NCCL_IB_DISABLE for it).
TEST(Findings, NcclNetSocketIsNoRdmaButKeepsThePath) {
  const auto d = Diagnose(Yaml(Pod("default", "", kGpuShared + Env("NCCL_NET", "Socket"))),
                          TestPolicy(), "default");
  EXPECT_EQ(d.path, policy::Path::kShared);
  EXPECT_FALSE(d.rdma);
  auto rule = [&](const std::string& id) {
    return std::find_if(d.findings.begin(), d.findings.end(),
                        [&](const Finding& f) { return f.rule == id; });
  };
  EXPECT_EQ(rule("ipc-lock-missing"), d.findings.end());
  const auto f = rule("ib-disabled-with-rdma");
  ASSERT_NE(f, d.findings.end());
  EXPECT_EQ(f->pointer, "/spec/containers/0/env/0/value");
  EXPECT_NE(f->message.find("sets NCCL_NET=Socket"), std::string::npos) << f->message;
  EXPECT_NE(f->fix.find("remove NCCL_NET"), std::string::npos) << f->fix;
}

TEST(Findings, MessagesSayWhyAndHowToFix) {
  const auto d = Diagnose(Yaml(Pod("default", "", kGpuVf, kNet)), TestPolicy(), "default");
  ASSERT_FALSE(d.findings.empty());
  for (const auto& f : d.findings) {
    // The message and the fix are kept apart; the outputs join them.
    EXPECT_EQ(f.message.find("Fix: "), std::string::npos) << f.rule;
    EXPECT_FALSE(f.fix.empty()) << f.rule;
    EXPECT_EQ(f.Text(), f.message + " Fix: " + f.fix) << f.rule;
    EXPECT_FALSE(f.pointer.empty()) << f.rule;
  }
}

TEST(Findings, IpcLockPointerNamesTheContainerSecurityContext) {
  const auto d = Diagnose(Yaml(Pod("default", "", kGpuVf, kNet)), TestPolicy(), "default");
  auto it = std::find_if(d.findings.begin(), d.findings.end(),
                         [](const Finding& f) { return f.rule == "ipc-lock-missing"; });
  ASSERT_NE(it, d.findings.end());
  EXPECT_EQ(it->pointer, "/spec/containers/0/securityContext");
  EXPECT_EQ(it->severity, Severity::kError);
}

// CRI-O grants CAP_IPC_LOCK (it prefixes only bare names); containerd's CRI writes
// CAP_CAP_IPC_LOCK. The runtime is not in the manifest: a warning that names the spelling.
TEST(Findings, CapPrefixedIpcLockIsAWarningNamingTheSpelling) {
  const auto d = Diagnose(
      Yaml(Pod("default", "",
               kGpuVf + "    securityContext: {capabilities: {add: [CAP_IPC_LOCK]}}\n", kNet)),
      TestPolicy(), "default");
  auto it = std::find_if(d.findings.begin(), d.findings.end(),
                         [](const Finding& f) { return f.rule == "ipc-lock-missing"; });
  ASSERT_NE(it, d.findings.end());
  EXPECT_EQ(it->severity, Severity::kWarning);
  EXPECT_EQ(it->pointer, "/spec/containers/0/securityContext/capabilities/add");
  EXPECT_NE(it->message.find("CAP_CAP_IPC_LOCK"), std::string::npos) << it->message;
  // The prefixed name still says the container means RDMA.
  EXPECT_TRUE(std::any_of(d.evidence.begin(), d.evidence.end(), [](const std::string& e) {
    return e.find("CAP_IPC_LOCK") != std::string::npos;
  }));
}

TEST(RuleTableTest, SeveritiesFollowTheContract) {
  for (const auto& r : RuleTable()) {
    const bool warning =
        r.id == "privileged-rdma" || r.id == "non-root-ipc-lock" || r.id == "rdma-device-missing" ||
        r.id == "hostnetwork-fixed-port" || r.id == "shm-too-small" || r.id == "gang-incomplete" ||
        r.id == "gid-index-on-ib" || r.id == "launcher-args-conflict" || r.id == "duplicate-key" ||
        r.id == "invalid-ignore-check" || r.id == "trainer-procs-gpu-mismatch" ||
        r.id == "trainer-runtime-no-rdma-path" || r.id == "unknown-nic-resource" ||
        r.id == "network-not-found" || r.id == "dra-fixed-ib-hca" ||
        r.id == "dra-unaligned-claims" || r.id == "mnnvl-without-imex" ||
        r.id == "trainer-claims-dropped" || r.id == "trainer-rdma-resource-erased";
    EXPECT_EQ(r.severity, warning ? Severity::kWarning : Severity::kError) << r.id;
  }
}

TEST(RuleTableTest, PolicyKnowsExactlyTheRuleIds) {
  std::vector<std::string> table, known;
  for (const auto& r : RuleTable()) table.emplace_back(r.id);
  for (const auto& id : policy::KnownRuleIds()) known.emplace_back(id);
  std::sort(table.begin(), table.end());
  std::sort(known.begin(), known.end());
  EXPECT_EQ(table, known);
}

}  // namespace
}  // namespace rw::rules

namespace rw::rules {
namespace {

std::string LauncherPointer(const std::string& manifest) {
  const auto d = Diagnose(Yaml(manifest), TestPolicy(), "default");
  for (const auto& f : d.findings)
    if (f.rule == "launcher-args-conflict") return f.pointer;
  return "(no finding)";
}

// The finding points at the element that holds the line: in `command` or in `args`.
TEST(LauncherArgsConflict, PointsAtTheCommandOrArgsElementHoldingTheLine) {
  EXPECT_EQ(LauncherPointer(
                GoodSriov("default", Env("NCCL_SOCKET_IFNAME", "eth1") +
                                         "    command: [mpirun, -x, NCCL_SOCKET_IFNAME=eth0]\n")),
            "/spec/containers/0/command/2");
  EXPECT_EQ(LauncherPointer(GoodSriov(
                "default", Env("NCCL_SOCKET_IFNAME", "eth1") +
                               "    command: [bash, -c]\n"
                               "    args: ['export NCCL_SOCKET_IFNAME=eth0; python train.py']\n")),
            "/spec/containers/0/args/0");
}

}  // namespace
}  // namespace rw::rules
