// NetworkAttachmentDefinitions decide the networks the policy does not name: an SR-IOV NAD makes
// its network RDMA and names the VF resource it needs; the policy overrides; without NADs in the
// catalogue nothing changes; a NAD the cluster lacks is a warning only when NADs were listed.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "../fixtures/judged.h"
#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/rules/assessment.h"

namespace rw::rules {
namespace {

using catalogue::Catalogue;
using catalogue::Source;
using policy::Path;

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
rdmaNetworks: [listed-net]
defaults: {mode: off, validation: warn}
namespaces:
  - names: [sriov-ns]
    mode: sriov
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
  - names: [host-ns]
    mode: hostNetwork
  - names: [shared-ns]
    mode: shared
    shared: {resource: rdma/hca_shared_devices_a}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

using fixtures::YamlObjects;

std::string Nad(const std::string& ns, const std::string& name, const std::string& resource,
                const std::string& config) {
  return "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata:\n  name: " +
         name + "\n  namespace: " + ns +
         (resource.empty()
              ? std::string()
              : "\n  annotations: {k8s.v1.cni.cncf.io/resourceName: " + resource + "}") +
         "\nspec:\n  config: '" + config + "'\n";
}

const std::string kSriovConfig = R"({"cniVersion":"1.0.0","name":"rail-0","type":"sriov"})";

// A GPU pod in `ns` attaching `networks`, with `limits` and IPC_LOCK and a memory /dev/shm.
struct Pod : fixtures::Judged {
  Pod(const std::string& ns, const std::string& networks, const std::string& catalogue_yaml,
      const std::string& limits = "{nvidia.com/gpu: 8}", Source source = Source::kInputs,
      std::vector<catalogue::Listing> listed = {}, const std::string& containers_extra = "")
      : Judged(
            Catalogue::From(YamlObjects(catalogue_yaml), source, std::move(listed), ns),
            fixtures::Yaml("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: " + ns +
                           (networks.empty() ? std::string()
                                             : "\n  annotations: {k8s.v1.cni.cncf.io/networks: '" +
                                                   networks + "'}") +
                           "\nspec:\n  volumes: [{name: dshm, emptyDir: {medium: Memory}}]\n"
                           "  containers:\n  - name: trainer\n    image: x\n"
                           "    securityContext: {capabilities: {add: [IPC_LOCK]}}\n"
                           "    volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n"
                           "    resources: {limits: " +
                           limits + "}\n" + containers_extra),
            TestPolicy()) {}

  const Edit* EditAt(const std::string& pointer) const {
    for (const auto& e : a.templates.at(0).plan.edits)
      if (e.pointer == pointer) return &e;
    return nullptr;
  }
};

const std::vector<catalogue::Listing> kNadsListed{
    {"k8s.cni.cncf.io", "NetworkAttachmentDefinition", std::nullopt}};

TEST(Nads, WithoutNadsAnUnnamedNetworkIsNoRdmaAsBefore) {
  const Pod p("team-a", "rail-0@net1", "", "{nvidia.com/gpu: 8, nvidia.com/rail0: 1}");
  EXPECT_EQ(p.d.path, Path::kNone) << p.AllEvidence();
  EXPECT_FALSE(p.Evidence("NAD")) << p.AllEvidence();
  EXPECT_FALSE(p.Evidence("network team-a/rail-0")) << p.AllEvidence();
}

TEST(Nads, AnSriovNadMakesItsNetworkRdmaAndSaysSo) {
  const Pod p("team-a", "rail-0@net1", Nad("team-a", "rail-0", "nvidia.com/rail0", kSriovConfig),
              "{nvidia.com/gpu: 8, nvidia.com/rail0: 1}");
  EXPECT_EQ(p.d.path, Path::kSriov) << p.AllEvidence();
  EXPECT_TRUE(p.d.rdma);
  EXPECT_TRUE(
      p.Evidence("network team-a/rail-0: NAD team-a/rail-0 (the inputs) says sriov, "
                 "resource nvidia.com/rail0: RDMA"))
      << p.AllEvidence();
  EXPECT_TRUE(p.d.findings.empty()) << p.Rules().size();
}

TEST(Nads, AnSriovNadWhoseVfIsNotClaimedIsNetworkWithoutVf) {
  const Pod p("team-a", "rail-0@net1,rail-0@net2",
              Nad("team-a", "rail-0", "nvidia.com/rail0", kSriovConfig),
              "{nvidia.com/gpu: 8, nvidia.com/rail0: 1}");
  ASSERT_EQ(p.Rules(), std::vector<std::string>{"network-without-vf"});
  const auto& f = p.d.findings[0];
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_NE(f.message.find("attaches 2 network(s) whose NetworkAttachmentDefinition takes its "
                           "VF from nvidia.com/rail0, but the pod claims 1"),
            std::string::npos)
      << f.message;
  EXPECT_EQ(f.pointer, "/metadata/annotations/k8s.v1.cni.cncf.io~1networks");
}

TEST(Nads, TheNetworkResourcesInjectorClaimsTheNadsVfsItself) {
  static const policy::Policy injector = policy::ParsePolicyText(
      "apiVersion: rdma-webhook/v1\nkind: Policy\nnetworkResourcesInjector: true\n");
  const auto catalogue = Catalogue::From(
      YamlObjects(Nad("team-a", "rail-0", "nvidia.com/rail0", kSriovConfig)), Source::kInputs);
  const auto object =
      *codec::ParseStream(
           "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: "
           "team-a}\nspec:\n  template:\n    metadata: {annotations: "
           "{k8s.v1.cni.cncf.io/networks: rail-0}}\n    spec:\n      containers:\n"
           "      - {name: t, image: x, resources: {limits: {nvidia.com/gpu: 8}}}\n")
           .at(0)
           .value;
  const auto d =
      Diagnose(workload::Workload::Read(object, injector, "default"), injector, catalogue);
  EXPECT_EQ(d.path, Path::kSriov);
  EXPECT_TRUE(std::none_of(d.findings.begin(), d.findings.end(),
                           [](const Finding& f) { return f.rule == "network-without-vf"; }));
}

TEST(Nads, APlainNetdevOrAnUnreadableConfigIsNoRdma) {
  const Pod macvlan("team-a", "rail-0@net1",
                    Nad("team-a", "rail-0", "rdma/rdma_shared_device_a", R"({"type":"macvlan"})"));
  EXPECT_EQ(macvlan.d.path, Path::kNone);
  EXPECT_TRUE(macvlan.Evidence("says macvlan, resource rdma/rdma_shared_device_a: a netdev"))
      << macvlan.AllEvidence();
  const Pod broken("team-a", "rail-0@net1", Nad("team-a", "rail-0", "rdma/vf", R"({"type": )"));
  EXPECT_EQ(broken.d.path, Path::kNone);
  EXPECT_TRUE(broken.d.findings.empty());
  EXPECT_TRUE(broken.Evidence("cannot be read (spec.config is not JSON)")) << broken.AllEvidence();
}

TEST(Nads, ThePolicyOverridesTheNad) {
  // The NAD says macvlan; the policy's rdmaNetworks says the network carries RDMA VFs.
  const Pod p("team-a", "listed-net@net1", Nad("team-a", "listed-net", "", R"({"type":"macvlan"})"),
              "{nvidia.com/gpu: 8, rdma/vf: 1}");
  EXPECT_EQ(p.d.path, Path::kSriov);
  EXPECT_TRUE(p.Evidence("network team-a/listed-net: RDMA, as the policy says (rdmaNetworks"))
      << p.AllEvidence();
}

TEST(Nads, ANetworkTheClusterLacksIsAWarningOnlyWhenNadsWereListed) {
  const Pod listed("team-a", "rail-9@net1", Nad("team-a", "rail-0", "", kSriovConfig),
                   "{nvidia.com/gpu: 8}", Source::kCluster, kNadsListed);
  ASSERT_EQ(listed.Rules(), std::vector<std::string>{"network-not-found"});
  EXPECT_EQ(listed.d.findings[0].severity, Severity::kWarning);
  EXPECT_TRUE(listed.Evidence("network team-a/rail-9: the cluster has no NAD of that name"))
      << listed.AllEvidence();
  // Files are not the whole cluster: a NAD not among them says nothing.
  const Pod inputs("team-a", "rail-9@net1", Nad("team-a", "rail-0", "", kSriovConfig));
  EXPECT_TRUE(inputs.d.findings.empty());
  EXPECT_TRUE(inputs.Evidence("no NAD known (not among the inputs")) << inputs.AllEvidence();
  // Listed in another namespace only: team-a's NADs are unknown.
  const Pod other(
      "team-a", "rail-9@net1", "", "{nvidia.com/gpu: 8}", Source::kCluster,
      {{"k8s.cni.cncf.io", "NetworkAttachmentDefinition", std::vector<std::string>{"team-b"}}});
  EXPECT_TRUE(other.d.findings.empty());
}

TEST(Nads, AClaimedVfOfAnSriovNadWithoutAnAttachmentIsVfWithoutNetwork) {
  // example.com/sriov_rail0 is in none of the policy's lists: the namespace's NAD says it is a VF.
  const Pod p("team-a", "", Nad("team-a", "rail-0", "example.com/sriov_rail0", kSriovConfig),
              "{nvidia.com/gpu: 8, example.com/sriov_rail0: 1}");
  EXPECT_EQ(p.Rules(), std::vector<std::string>{"vf-without-network"});
  // Without the NAD it is a resource nobody knows.
  const Pod unknown("team-a", "", "", "{nvidia.com/gpu: 8, example.com/sriov_rail0: 1}");
  EXPECT_EQ(unknown.Rules(), std::vector<std::string>{"unknown-nic-resource"});
}

TEST(Nads, TheSriovModeClaimsTheVfsOfTheNadNetworksAndKeepsThemAsTheTemplatesRails) {
  const Pod p("sriov-ns", "rail-0@net1,rail-1@net2",
              Nad("sriov-ns", "rail-0", "nvidia.com/rail0", kSriovConfig) + "---\n" +
                  Nad("sriov-ns", "rail-1", "nvidia.com/rail1", kSriovConfig));
  ASSERT_TRUE(p.a.mutates);
  const Edit* rail0 = p.EditAt("/spec/containers/0/resources/limits/nvidia.com~1rail0");
  const Edit* rail1 = p.EditAt("/spec/containers/0/resources/requests/nvidia.com~1rail1");
  ASSERT_NE(rail0, nullptr);
  ASSERT_NE(rail1, nullptr);
  EXPECT_EQ(rail0->value, "1");
  // The template's own rails: the policy's network is not attached next to them, nor its VF.
  EXPECT_EQ(p.EditAt("/metadata/annotations/k8s.v1.cni.cncf.io~1networks"), nullptr);
  EXPECT_EQ(p.EditAt("/spec/containers/0/resources/limits/rdma~1vf"), nullptr);
}

TEST(Nads, ASharedDeviceIsClaimedByEveryGpuContainer) {
  const Pod p("shared-ns", "", "", "{nvidia.com/gpu: 4}", Source::kInputs, {},
              "  - name: second\n    image: x\n    resources: {limits: {nvidia.com/gpu: 4}}\n");
  ASSERT_TRUE(p.a.mutates);
  for (const char* c : {"0", "1"}) {
    const Edit* e = p.EditAt(std::string("/spec/containers/") + c +
                             "/resources/limits/rdma~1hca_shared_devices_a");
    ASSERT_NE(e, nullptr) << c;
    EXPECT_EQ(e->value, "1");
  }
}

// A NAD of type sriov alone does not say RDMA: the same config serves a VF bound to vfio-pci for
// DPDK. What rests on it alone is a warning naming the assumption, never a denial.
const std::string kDpdkNad =
    Nad("team-a", "dpdk", "intel.com/intel_sriov_dpdk", R"({"type":"sriov","vlan":100})");
const std::string kDpdkLimits = "{nvidia.com/gpu: 1, intel.com/intel_sriov_dpdk: 1}";
// A second GPU container without IPC_LOCK (its /dev/shm in memory), and NCCL_IB_DISABLE=1 in
// the first.
const std::string kIbOffAndNoIpcLock =
    "    env: [{name: NCCL_IB_DISABLE, value: '1'}]\n"
    "  - name: second\n    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
    "    volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n";

std::vector<std::pair<std::string, Severity>> Judged(const Pod& p) {
  std::vector<std::pair<std::string, Severity>> out;
  for (const auto& f : p.d.findings) out.emplace_back(f.rule, f.severity);
  return out;
}

TEST(Nads, ErrorsThatRestOnAnSriovNadNotSayingRdmaAreWarnings) {
  const Pod p("team-a", "dpdk@net1", kDpdkNad, kDpdkLimits, Source::kInputs, {},
              kIbOffAndNoIpcLock);
  EXPECT_EQ(p.d.path, Path::kSriov) << p.AllEvidence();
  EXPECT_TRUE(p.Evidence("says sriov, resource intel.com/intel_sriov_dpdk: RDMA assumed"))
      << p.AllEvidence();
  const std::vector<std::pair<std::string, Severity>> want{
      {"ipc-lock-missing", Severity::kWarning}, {"ib-disabled-with-rdma", Severity::kWarning}};
  EXPECT_EQ(Judged(p), want);
  for (const auto& f : p.d.findings)
    EXPECT_NE(f.message.find("(NAD team-a/dpdk: sriov, RDMA assumed"), std::string::npos)
        << f.message;
}

TEST(Nads, AnInfinibandNadOrThePoliciesVfKeepsTheErrors) {
  const std::string ib =
      Nad("team-a", "dpdk", "intel.com/intel_sriov_dpdk", R"({"type":"ib-sriov"})");
  const std::vector<std::pair<std::string, Severity>> want{
      {"ipc-lock-missing", Severity::kError}, {"ib-disabled-with-rdma", Severity::kError}};
  EXPECT_EQ(
      Judged(Pod("team-a", "dpdk@net1", ib, kDpdkLimits, Source::kInputs, {}, kIbOffAndNoIpcLock)),
      want);
  // rdma/vf is the policy's VF resource: the policy says RDMA, whatever the NAD leaves open.
  EXPECT_EQ(Judged(Pod("team-a", "dpdk@net1", kDpdkNad,
                       "{nvidia.com/gpu: 1, intel.com/intel_sriov_dpdk: 1, rdma/vf: 1}",
                       Source::kInputs, {}, kIbOffAndNoIpcLock)),
            want);
}

TEST(Nads, APathOnlyAnSriovNadNotSayingRdmaMakesIsAllowedWithAWarning) {
  std::string nad = kDpdkNad;
  nad.replace(nad.find("team-a"), 6, "host-ns");
  std::string limits = kDpdkLimits;
  const Pod p("host-ns", "dpdk@net1", nad, limits);
  ASSERT_EQ(p.d.path, Path::kSriov) << p.AllEvidence();
  const std::vector<std::pair<std::string, Severity>> want{
      {"path-not-allowed", Severity::kWarning}};
  EXPECT_EQ(Judged(p), want);
}

}  // namespace
}  // namespace rw::rules
