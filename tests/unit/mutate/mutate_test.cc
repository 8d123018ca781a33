#include <gtest/gtest.h>

#include <set>
#include <string>

#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/mutate/mutation.h"

namespace rw::mutate {
namespace {

using nlohmann::json;

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off, validation: warn}
namespaces:
  - names: [sriov]
    mode: sriov
    injectShm: true
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
    nccl: {fabric: roce, gidIndex: 3, extraEnv: {NCCL_DEBUG: INFO}}
  - names: [rails]
    mode: sriov
    sriov:
      networks:
        - {network: rail-a, interface: eth1}
        - {network: rail-b, interface: eth2}
  - names: [tke]
    mode: sriov
    sriov: {network: sriov-rdma-net, interface: eth1, annotationKey: tke.cloud.tencent.com/networks, defaultNetworks: [tke-bridge]}
  - names: [override]
    mode: sriov
    onConflict: override
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
    nccl: {fabric: roce, gidIndex: 3}
  - names: [override-extra]
    mode: sriov
    onConflict: override
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
    nccl: {extraEnv: {NCCL_DEBUG: INFO}}
  - names: [host]
    mode: hostNetwork
    hostNetwork: {socketIfname: bond0, deviceResource: rdma/hca_shared_devices_a}
  - names: [tcp]
    mode: tcp
  - names: [shared]
    mode: shared
    shared: {resource: rdma/hca_shared_devices_a, count: 1, network: macvlan-net, interface: net1}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

using fixtures::Yaml;

std::string Pod(const std::string& ns, const std::string& container_extra = "",
                const std::string& metadata_extra = "", const std::string& spec_extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: " + ns + "\n" +
         metadata_extra + "spec:\n" + spec_extra +
         "  containers:\n  - name: sidecar\n    image: s\n  - name: trainer\n    image: x\n"
         "    resources: {limits: {nvidia.com/gpu: 8}}\n" +
         container_extra;
}

// The patch applied to the original gives the result, and mutating the result changes nothing.
Mutation CheckedMutate(const json& object) {
  Mutation m = Mutate(object, TestPolicy(), "default");
  EXPECT_EQ(object.patch(m.patch.Json()), m.result) << m.patch.Json().dump(2);
  const Mutation again = Mutate(m.result, TestPolicy(), "default");
  EXPECT_EQ(again.patch.Json(), json::array()) << again.patch.Json().dump(2);
  return m;
}

json Env(const json& container) {
  json out = json::object();
  for (const auto& e : container.value("env", json::array()))
    out[e["name"].get<std::string>()] = e["value"];
  return out;
}

TEST(MutateSriov, AddsAnnotationClaimCapabilityEnvAndShm) {
  const auto m = CheckedMutate(Yaml(Pod("sriov")));
  const auto& r = m.result;
  EXPECT_EQ(r["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"], "sriov-rdma-net@eth1");
  const auto& c = r["spec"]["containers"][1];
  EXPECT_EQ(c["resources"]["limits"]["rdma/vf"], "1");
  EXPECT_EQ(c["resources"]["requests"]["rdma/vf"], "1");
  EXPECT_EQ(c["securityContext"]["capabilities"]["add"], json::array({"IPC_LOCK"}));
  const auto env = Env(c);
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "eth1");
  EXPECT_EQ(env["NCCL_IB_DISABLE"], "0");
  EXPECT_EQ(env["NCCL_IB_GID_INDEX"], "3");
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/dev/shm");
  EXPECT_EQ(r["spec"]["volumes"][0]["emptyDir"]["medium"], "Memory");
  // The sidecar without a GPU is left alone.
  EXPECT_EQ(r["spec"]["containers"][0], Yaml(Pod("sriov"))["spec"]["containers"][0]);
}

// containerd's CRI turns CAP_IPC_LOCK into CAP_CAP_IPC_LOCK: the bare name is added beside it
// (CRI-O grants either), and mutating again adds nothing.
TEST(MutateSriov, AddsBareIpcLockBesideCapPrefixedOne) {
  const auto m = CheckedMutate(
      Yaml(Pod("sriov", "    securityContext: {capabilities: {add: [CAP_IPC_LOCK]}}\n")));
  EXPECT_EQ(m.result["spec"]["containers"][1]["securityContext"]["capabilities"]["add"],
            json::array({"CAP_IPC_LOCK", "IPC_LOCK"}));
}

TEST(MutateSriov, KeepsUserEnvOrderAndAppendsInFixedOrder) {
  const auto m =
      CheckedMutate(Yaml(Pod("sriov", "    env: [{name: B, value: b}, {name: A, value: a}]\n")));
  const auto& env = m.result["spec"]["containers"][1]["env"];
  std::vector<std::string> names;
  for (const auto& e : env) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"B", "A", "NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE",
                                             "NCCL_IB_GID_INDEX", "NCCL_DEBUG"}));
  for (const auto& op : m.patch.Json())
    EXPECT_NE(op["path"], "/spec/containers/1/env") << "no whole-array replacement";
}

TEST(MutateSriov, AppendsToCommaAndJsonAnnotationsInTheirOwnForm) {
  const auto comma = CheckedMutate(
      Yaml(Pod("sriov", "", "  annotations:\n    k8s.v1.cni.cncf.io/networks: other-net\n")));
  EXPECT_EQ(comma.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
            "other-net,sriov-rdma-net@eth1");
  const auto js = CheckedMutate(
      Yaml(Pod("sriov", "",
               "  annotations:\n    k8s.v1.cni.cncf.io/networks: '[{\"name\":\"other-net\"}]'\n")));
  const auto list = json::parse(
      js.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].get<std::string>());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1], (json{{"name", "sriov-rdma-net"}, {"interface", "eth1"}}));
}

TEST(MutateSriov, MultiRailClaimsOneVfPerAttachment) {
  const auto m = CheckedMutate(Yaml(Pod("rails")));
  EXPECT_EQ(m.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
            "rail-a@eth1,rail-b@eth2");
  EXPECT_EQ(m.result["spec"]["containers"][1]["resources"]["limits"]["rdma/vf"], "2");
}

TEST(MutateSriov, ExistingClaimsCount) {
  const auto m = CheckedMutate(Yaml(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: rails}\nspec:\n  containers:\n"
      "  - name: t\n    resources: {limits: {nvidia.com/gpu: 8, rdma/vf: 1}}\n"));
  EXPECT_EQ(m.result["spec"]["containers"][0]["resources"]["limits"]["rdma/vf"], "2");
}

TEST(MutateSriov, VendorKeyGetsDefaultNetworksFirst) {
  const auto m = CheckedMutate(Yaml(Pod("tke")));
  EXPECT_EQ(m.result["metadata"]["annotations"]["tke.cloud.tencent.com/networks"],
            "tke-bridge,sriov-rdma-net@eth1");
}

TEST(MutateSriov, RejectLeavesTheWholeWorkloadOverrideReplacesAndWarns) {
  const std::string env = "    env: [{name: NCCL_IB_GID_INDEX, value: \"5\"}]\n";
  // reject: nothing is written, so validation denies for the user's value alone.
  const auto reject = CheckedMutate(Yaml(Pod("sriov", env)));
  EXPECT_EQ(reject.patch.Json(), json::array());
  EXPECT_TRUE(reject.overrides.empty());
  const auto over = CheckedMutate(Yaml(Pod("override", env)));
  EXPECT_EQ(Env(over.result["spec"]["containers"][1])["NCCL_IB_GID_INDEX"], "3");
  ASSERT_EQ(over.overrides.size(), 1u);
  EXPECT_EQ(over.overrides[0].rule, "policy-conflict");
}

TEST(MutateSriov, UserSocketIfnameIsKeptUnderRejectAndOverride) {
  const std::string env = "    env: [{name: NCCL_SOCKET_IFNAME, value: eth0}]\n";
  for (const char* ns : {"sriov", "override"}) {
    const auto m = CheckedMutate(Yaml(Pod(ns, env)));
    EXPECT_EQ(Env(m.result["spec"]["containers"][1])["NCCL_SOCKET_IFNAME"], "eth0") << ns;
    EXPECT_TRUE(m.overrides.empty()) << ns;
    EXPECT_EQ(m.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
              "sriov-rdma-net@eth1")
        << ns;
  }
}

TEST(MutateSriov, ExtraEnvIsAddedWhenAbsentAndNeverReplaced) {
  // nccl.extraEnv is "added when absent" (docs/policy.md): a user's own value stays, and is no
  // override to warn about, under onConflict: override as under reject.
  const std::string env = "    env: [{name: NCCL_DEBUG, value: WARN}]\n";
  for (const char* ns : {"sriov", "override-extra"}) {
    const auto kept = CheckedMutate(Yaml(Pod(ns, env)));
    EXPECT_EQ(Env(kept.result["spec"]["containers"][1])["NCCL_DEBUG"], "WARN") << ns;
    EXPECT_TRUE(kept.overrides.empty()) << ns;
    const auto added = CheckedMutate(Yaml(Pod(ns)));
    EXPECT_EQ(Env(added.result["spec"]["containers"][1])["NCCL_DEBUG"], "INFO") << ns;
  }
}

// An envFrom source may define what is added "when absent": an env entry would win over it, so
// the plan leaves those to the ConfigMap, while the mode's own switches are still written.
TEST(MutateSriov, WhenAbsentVariablesAreLeftToAnEnvFromThatMaySetThem) {
  const auto unprefixed =
      CheckedMutate(Yaml(Pod("sriov", "    envFrom: [{configMapRef: {name: nccl-tuning}}]\n")));
  auto env = Env(unprefixed.result["spec"]["containers"][1]);
  EXPECT_FALSE(env.contains("NCCL_SOCKET_IFNAME")) << env.dump();
  EXPECT_FALSE(env.contains("NCCL_DEBUG")) << env.dump();
  EXPECT_EQ(env["NCCL_IB_DISABLE"], "0");
  EXPECT_EQ(env["NCCL_IB_GID_INDEX"], "3");
  // A prefix that no wanted name starts with cannot define them.
  const auto prefixed = CheckedMutate(
      Yaml(Pod("sriov", "    envFrom: [{prefix: HF_, secretRef: {name: hub-token}}]\n")));
  env = Env(prefixed.result["spec"]["containers"][1]);
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "eth1");
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
}

TEST(MutateSriov, OverrideRenamesAttachedInterface) {
  const auto m = CheckedMutate(
      Yaml(Pod("override", "",
               "  annotations:\n    k8s.v1.cni.cncf.io/networks: a, sriov-rdma-net@net5\n")));
  EXPECT_EQ(m.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
            "a, sriov-rdma-net@eth1");
}

// A rename carries no knob along, so it happens only when no knob names the old interface:
// renaming Multus's `net1` to `eth1` while NCCL_SOCKET_IFNAME=net1 stays would make /validate
// deny the object /mutate produced (ifname-not-attached), and the job could not bootstrap.
// Under onConflict: reject the same attachment is no conflict: the webhook would keep it under
// override too, and the VF, the interface and NCCL's bootstrap agree.
TEST(MutateSriov, KeepsAnInterfaceAKnobNamesUnderOverrideAndReject) {
  const std::string annotation =
      "  annotations:\n    k8s.v1.cni.cncf.io/networks: sriov-rdma-net\n";
  const std::string caps = "    securityContext: {capabilities: {add: [IPC_LOCK]}}\n";
  const auto errors = [](const rules::Diagnosis& d) {
    std::set<std::string> ids;
    for (const auto& f : d.findings)
      if (f.severity == rules::Severity::kError) ids.insert(f.rule);
    return ids;
  };
  for (const char* ns : {"override", "sriov"}) {
    for (const std::string knob : {
             "    env: [{name: NCCL_SOCKET_IFNAME, value: net1}]\n",   // the auto name, exactly
             "    env: [{name: NCCL_SOCKET_IFNAME, value: net}]\n",    // a prefix of it
             "    env: [{name: NCCL_SOCKET_IFNAME, value: ^net1}]\n",  // excluded by name
             "    command: [bash, -c, 'export NCCL_SOCKET_IFNAME=net1; torchrun train.py']\n",
         }) {
      const json pod = Yaml(Pod(ns, knob + caps, annotation));
      const auto m = CheckedMutate(pod);
      EXPECT_EQ(m.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
                "sriov-rdma-net")
          << ns << knob;
      EXPECT_NE(m.patch.Json(), json::array()) << "the rest of the mode is planned: " << ns << knob;
      const auto before = errors(rules::Diagnose(pod, TestPolicy(), "default"));
      EXPECT_EQ(before.count("policy-conflict"), 0u) << ns << knob;
      for (const auto& id : errors(rules::Diagnose(m.result, TestPolicy(), "default")))
        EXPECT_EQ(before.count(id), 1u) << "self-denial: " << id << " with " << ns << knob;
    }
  }
  // A knob that does not name the old interface leaves the rename as it was.
  const auto renamed = CheckedMutate(Yaml(
      Pod("override", "    env: [{name: NCCL_SOCKET_IFNAME, value: eth}]\n" + caps, annotation)));
  EXPECT_EQ(renamed.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
            "sriov-rdma-net@eth1");
}

// unknown-nic-resource says the webhook does not plan for such a template: a VF of the policy's
// beside a scheduler's own NIC resource would be a second VF, and a Pending pod.
TEST(MutateSriov, ATemplateClaimingAnUnknownNicResourceIsLeftAsWritten) {
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: sriov\n"
      "  annotations: {k8s.v1.cni.cncf.io/networks: node-vf-conf}\n"
      "spec:\n  containers:\n  - name: trainer\n    image: x\n"
      "    resources: {limits: {nvidia.com/gpu: 8, koordinator.sh/rdma: 100}}\n";
  for (const char* ns : {"sriov", "override"}) {
    std::string text = pod;
    text.replace(text.find("namespace: sriov"), 16, std::string("namespace: ") + ns);
    EXPECT_EQ(CheckedMutate(Yaml(text)).patch.Json(), json::array()) << ns;
  }
}

// A policy network is a NAD of the pod's namespace: `default/sriov-rdma-net` is another NAD of
// the same name, the template's own rail, kept as written beside its VF claim.
TEST(MutateSriov, ANetworkOfTheSameNameInAnotherNamespaceIsAnOwnRail) {
  const std::string annotation =
      "  annotations:\n    k8s.v1.cni.cncf.io/networks: default/sriov-rdma-net@eth1\n";
  std::string with_vf = Pod("sriov", "", annotation);
  with_vf.replace(with_vf.find("nvidia.com/gpu: 8}"), 18, "nvidia.com/gpu: 8, rdma/vf: 1}");
  const auto own = CheckedMutate(Yaml(with_vf));
  EXPECT_EQ(own.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
            "default/sriov-rdma-net@eth1");
  EXPECT_EQ(own.result["spec"]["containers"][1]["resources"]["limits"]["rdma/vf"], 1);
  EXPECT_EQ(own.result["spec"]["containers"][1]["securityContext"]["capabilities"]["add"],
            json::array({"IPC_LOCK"}));
}

// NCCL skips an empty value: NCCL_IB_DISABLE="" is its default 0, what the mode sets, so no
// conflict and no invalid-nccl-value.
TEST(MutateSriov, AnEmptyIbDisableIsTheDefaultTheModeWants) {
  const auto m =
      CheckedMutate(Yaml(Pod("sriov", "    env: [{name: NCCL_IB_DISABLE, value: \"\"}]\n")));
  EXPECT_NE(m.patch.Json(), json::array());
  EXPECT_EQ(Env(m.result["spec"]["containers"][1])["NCCL_IB_DISABLE"], "");
  const auto d = rules::Diagnose(m.result, TestPolicy(), "default");
  for (const auto& f : d.findings) EXPECT_NE(f.severity, rules::Severity::kError) << f.rule;
}

// Found by tests/fuzz/fuzz_mutate (no self-denial): an annotation Multus cannot read is left
// as written, so nothing else may be written either: NCCL_SOCKET_IFNAME and VF claims for the
// policy's interface would add ifname-not-attached to the user's invalid-network-annotation.
TEST(MutateSriov, UnreadableAnnotationLeavesTheWholeWorkload) {
  for (const char* ns : {"sriov", "override"}) {
    // eth0 is the pod's own interface (Multus refuses it); `a,Net2` and a cut JSON list cannot be
    // read.
    for (const char* value : {"sriov-rdma-net@eth0", "a,Net2", "[{\"name\":"}) {
      const auto m = CheckedMutate(Yaml(
          Pod(ns, "",
              "  annotations:\n    k8s.v1.cni.cncf.io/networks: '" + std::string(value) + "'\n")));
      EXPECT_EQ(m.patch.Json(), json::array()) << ns << " " << value;
      const auto before =
          rules::Diagnose(Yaml(Pod(ns, "",
                                   "  annotations:\n    k8s.v1.cni.cncf.io/networks: '" +
                                       std::string(value) + "'\n")),
                          TestPolicy(), "default");
      EXPECT_FALSE(before.findings.empty()) << ns << " " << value;
    }
  }
}

std::string NetworksAfter(const std::string& ns, const std::string& value) {
  const auto m = CheckedMutate(
      Yaml(Pod(ns, "", "  annotations:\n    k8s.v1.cni.cncf.io/networks: '" + value + "'\n")));
  return m.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].get<std::string>();
}

TEST(MutateSriov, JsonAnnotationKeepsTheUsersTextAndAppends) {
  EXPECT_EQ(
      NetworksAfter("sriov", R"([{"name":"other-net","mac":"c2:b0:57:49:47:f1","interface":"eth5",)"
                             R"("ips":["10.1.0.7/24"]}])"),
      R"([{"name":"other-net","mac":"c2:b0:57:49:47:f1","interface":"eth5","ips":["10.1.0.7/24"]},)"
      R"({"name":"sriov-rdma-net","interface":"eth1"}])");
  // Spacing and a repeated key stay as written (Go reads {"name":"a","name":null} as "a").
  EXPECT_EQ(
      NetworksAfter("sriov", R"([ {"name": "other-net", "name": null} ] )"),
      R"([ {"name": "other-net", "name": null} ,{"name":"sriov-rdma-net","interface":"eth1"}] )");
  EXPECT_EQ(NetworksAfter("sriov", "[ ]"), R"([ {"name":"sriov-rdma-net","interface":"eth1"}])");
}

TEST(MutateSriov, OverrideRenamesOnlyTheInterfaceKeyTheUserWrote) {
  // Multus still reads the legacy interfaceRequest, and matches keys case-insensitively.
  EXPECT_EQ(NetworksAfter("override", R"([{"namespace":"override","name":"sriov-rdma-net",)"
                                      R"("interfaceRequest":"net5","ips":["10.1.0.7/24"]}])"),
            R"([{"namespace":"override","name":"sriov-rdma-net","interfaceRequest":"eth1",)"
            R"("ips":["10.1.0.7/24"]}])");
  EXPECT_EQ(NetworksAfter("override", R"([{"Name":"sriov-rdma-net","Interface":"net5"}])"),
            R"([{"Name":"sriov-rdma-net","Interface":"eth1"}])");
  EXPECT_EQ(NetworksAfter("override", R"([{"name":"sriov-rdma-net","interface":null}])"),
            R"([{"name":"sriov-rdma-net","interface":"eth1"}])");
  EXPECT_EQ(NetworksAfter("override", R"([{"name":"sriov-rdma-net","mac":"c2:b0:57:49:47:f1"}])"),
            R"([{"name":"sriov-rdma-net","mac":"c2:b0:57:49:47:f1","interface":"eth1"}])");
}

TEST(MutateHostNetwork, SetsNetworkDnsDeviceAndReplacesDefaultedDns) {
  const auto m = CheckedMutate(Yaml(Pod("host", "", "", "  dnsPolicy: ClusterFirst\n")));
  EXPECT_EQ(m.result["spec"]["hostNetwork"], true);
  EXPECT_EQ(m.result["spec"]["dnsPolicy"], "ClusterFirstWithHostNet");
  bool replaced = false;
  for (const auto& op : m.patch.Json())
    replaced = replaced || (op["op"] == "replace" && op["path"] == "/spec/dnsPolicy");
  EXPECT_TRUE(replaced) << m.patch.text();
  EXPECT_EQ(m.result["spec"]["containers"][1]["resources"]["limits"]["rdma/hca_shared_devices_a"],
            "1");
  EXPECT_EQ(Env(m.result["spec"]["containers"][1])["NCCL_SOCKET_IFNAME"], "bond0");
}

// A hostNetwork template that claims another RDMA pool of the policy's lists has its device: no
// second pool is added, the rest of the mode is.
TEST(MutateHostNetwork, KeepsAnRdmaPoolTheTemplateAlreadyClaims) {
  std::string pod = Pod("host", "", "", "  hostNetwork: true\n");
  pod.replace(pod.find("nvidia.com/gpu: 8}"), 18,
              "nvidia.com/gpu: 8, rdma/rdma_shared_device_b: 1}");
  const auto m = CheckedMutate(Yaml(pod));
  const auto& c = m.result["spec"]["containers"][1];
  EXPECT_FALSE(c["resources"]["limits"].contains("rdma/hca_shared_devices_a")) << c.dump();
  EXPECT_EQ(m.result["spec"]["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_EQ(c["securityContext"]["capabilities"]["add"], json::array({"IPC_LOCK"}));
}

TEST(MutateTcp, DisablesIbWithoutCapability) {
  const auto m = CheckedMutate(Yaml(Pod("tcp")));
  const auto& c = m.result["spec"]["containers"][1];
  EXPECT_EQ(Env(c)["NCCL_IB_DISABLE"], "1");
  EXPECT_EQ(Env(c)["NCCL_SOCKET_IFNAME"], "eth0");
  EXPECT_FALSE(c.contains("securityContext"));
}

TEST(MutateShared, ClaimsSharedDeviceAndAttachesNetwork) {
  const auto m = CheckedMutate(Yaml(Pod("shared")));
  EXPECT_EQ(m.result["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"], "macvlan-net@net1");
  EXPECT_EQ(m.result["spec"]["containers"][1]["resources"]["limits"]["rdma/hca_shared_devices_a"],
            "1");
  EXPECT_EQ(Env(m.result["spec"]["containers"][1])["NCCL_SOCKET_IFNAME"], "net1");
}

TEST(MutateWorkloads, EveryTemplateOfAPyTorchJob) {
  const auto job = Yaml(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j, namespace: sriov}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: t, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
    Worker: {replicas: 3, template: {spec: {containers: [{name: t, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
)");
  const auto m = CheckedMutate(job);
  for (const char* role : {"Master", "Worker"})
    EXPECT_EQ(m.result["spec"]["pytorchReplicaSpecs"][role]["template"]["metadata"]["annotations"]
                      ["k8s.v1.cni.cncf.io/networks"],
              "sriov-rdma-net@eth1")
        << role;
}

TEST(MutateWorkloads, UnknownKindsAndOffNamespacesAreUntouched) {
  EXPECT_EQ(Mutate(Yaml("apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: sriov}\n"),
                   TestPolicy(), "default")
                .patch.Json(),
            json::array());
  EXPECT_EQ(Mutate(Yaml(Pod("elsewhere")), TestPolicy(), "default").patch.Json(), json::array());
}

TEST(MutateWorkloads, KeysWithSlashesAreEscaped) {
  const auto m = CheckedMutate(Yaml(Pod("sriov")));
  bool escaped = false;
  for (const auto& op : m.patch.Json())
    escaped = escaped || op["path"].get<std::string>().find("rdma~1vf") != std::string::npos;
  EXPECT_TRUE(escaped) << m.patch.text();
}

TEST(MutateWorkloads, WrongTypesAreErrorsNamingTheField) {
  try {
    Mutate(Yaml(Pod("sriov", "    env: x\n")), TestPolicy(), "default");
    FAIL() << "expected ManifestError";
  } catch (const workload::ManifestError& e) {
    EXPECT_EQ(e.pointer(), "/spec/containers/1/env");
  }
}

}  // namespace
}  // namespace rw::mutate
