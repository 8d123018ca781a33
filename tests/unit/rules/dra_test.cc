// DRA claims are read through the catalogue: the class a request names and the driver and
// attributes it requires decide whether the template is on the dra path, a GPU container, the
// plugin path, or unknown (never a guess from a claim's name).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "../fixtures/device_classes.h"
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
defaults: {mode: off, validation: warn}
namespaces:
  - names: [sriov-ns]
    mode: sriov
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

using fixtures::kDeviceClasses;
using fixtures::YamlObjects;

// A claim template in team-a with the given requests (YAML list items, indented 6).
std::string Template(const std::string& name, const std::string& requests) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
         ", namespace: team-a}\nspec:\n  spec:\n    devices:\n      requests:\n" + requests;
}

constexpr const char* kRdmaNicRequest = R"(      - name: nic
        exactly:
          deviceClassName: dranet
          selectors: [{cel: {expression: 'device.attributes["dra.net"].rdma == true'}}]
)";
constexpr const char* kPlainNicRequest =
    "      - name: nic\n        exactly: {deviceClassName: dranet}\n";
constexpr const char* kGpuRequest =
    "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 8}\n";

// A GPU pod in `ns` whose `trainer` container claims the template `devs` (device `devices`).
struct Case : fixtures::Judged {
  explicit Case(const std::string& ns, const std::string& catalogue_yaml,
                const std::string& container_extra = "",
                const std::string& limits = "{nvidia.com/gpu: 8}",
                const std::string& spec_extra = "", Source source = Source::kInputs,
                std::vector<catalogue::Listing> listed = {})
      : Judged(
            Catalogue::From(YamlObjects(catalogue_yaml), source, std::move(listed)),
            fixtures::Yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: " + ns +
                           "}\nspec:\n" + spec_extra +
                           "  resourceClaims: [{name: devices, resourceClaimTemplateName: devs}]\n"
                           "  containers:\n  - name: trainer\n    image: x\n"
                           "    resources:\n      limits: " +
                           limits + "\n      claims: [{name: devices}]\n" + container_extra),
            TestPolicy()) {}
};

const std::string kIpcLock = "    securityContext: {capabilities: {add: [IPC_LOCK]}}\n";

TEST(Dra, AClaimOfRdmaNicsPutsTheTemplateOnTheDraPath) {
  // IPC_LOCK and a memory-backed /dev/shm: nothing is left to report.
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" + Template("devs", kRdmaNicRequest),
               std::string(kIpcLock) + "    volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n",
               "{nvidia.com/gpu: 8}", "  volumes: [{name: dshm, emptyDir: {medium: Memory}}]\n");
  EXPECT_EQ(c.d.path, Path::kDra) << c.AllEvidence();
  EXPECT_TRUE(c.d.rdma);
  EXPECT_TRUE(c.Evidence("DeviceClass 'dranet' (the inputs), driver dra.net with rdma: RDMA NICs"))
      << c.AllEvidence();
  EXPECT_TRUE(c.d.findings.empty()) << c.AllFindings();
}

// The gIB plugin says which transport NCCL runs, not who brings the NICs: beside a claim of RDMA
// NICs (GKE's DRANET) the claim does, and the template is on the dra path. Its diagnostic image
// alone is no sign at all (it also runs NVLink-only tests).
TEST(Dra, TheGibPluginBesideAClaimOfRdmaNicsIsTheDraPath) {
  const std::string catalogue =
      std::string(kDeviceClasses) + "---\n" + Template("devs", kRdmaNicRequest);
  const std::string gib = "registry.example/ai/gpudirect-gib/nccl-plugin-gib";
  for (const std::string& spec : {
           "  initContainers: [{name: gib, image: '" + gib + ":v1.0.6'}]\n",
           "  initContainers: [{name: gib, image: '" + gib + "-diagnostic:v1.0.6'}]\n",
       }) {
    const Case c("team-a", catalogue, kIpcLock, "{nvidia.com/gpu: 8}", spec);
    EXPECT_EQ(c.d.path, Path::kDra) << spec << c.AllEvidence();
  }
  // Without the claim, the plugin's own image is GKE's platform NICs; the diagnostic image is
  // none of them.
  const Case plugin("team-a", kDeviceClasses, kIpcLock, "{nvidia.com/gpu: 8}",
                    "  initContainers: [{name: gib, image: '" + gib + ":v1.0.6'}]\n");
  EXPECT_EQ(plugin.d.path, Path::kSriov) << plugin.AllEvidence();
  const Case diagnostic("team-a", kDeviceClasses, kIpcLock, "{nvidia.com/gpu: 8}",
                        "  initContainers: [{name: gib, image: '" + gib + "-diagnostic:v1'}]\n");
  EXPECT_NE(diagnostic.d.path, Path::kSriov) << diagnostic.AllEvidence();
}

TEST(Dra, IpcLockIsStillRequiredOnTheDraPath) {
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" + Template("devs", kRdmaNicRequest));
  EXPECT_EQ(c.d.path, Path::kDra);
  EXPECT_TRUE(c.Fired("ipc-lock-missing"));
}

TEST(Dra, ADranetNicTheClaimDoesNotRequireRdmaOnIsNoRdmaPath) {
  const Case c("team-a",
               std::string(kDeviceClasses) + "---\n" + Template("devs", kPlainNicRequest));
  EXPECT_EQ(c.d.path, Path::kNone) << c.AllEvidence();
  EXPECT_TRUE(c.Evidence("without requiring rdma")) << c.AllEvidence();
  EXPECT_FALSE(c.Fired("ipc-lock-missing"));
}

TEST(Dra, AClaimWhoseTemplateIsNotInTheInputsIsUnknownAndQuiet) {
  // The claim is called "devs", and would be so if it were called "rdma-nics": no name guess.
  const Case c("team-a", kDeviceClasses);
  EXPECT_EQ(c.d.path, Path::kUnknown) << c.AllEvidence();
  EXPECT_TRUE(c.Evidence("ResourceClaimTemplate team-a/devs unknown: not among the inputs"))
      << c.AllEvidence();
  EXPECT_TRUE(c.d.findings.empty());
}

TEST(Dra, AnEmptyCatalogueReadsNoClaimAsRdma) {
  const Case c("team-a", "");
  EXPECT_EQ(c.d.path, Path::kUnknown);
  EXPECT_FALSE(c.d.rdma);
  EXPECT_TRUE(c.d.findings.empty());
}

TEST(Dra, ATemplateTheClusterListedAndLacksSaysSo) {
  const Case c("team-a", kDeviceClasses, "", "{nvidia.com/gpu: 8}", "", Source::kCluster,
               {{"resource.k8s.io", "ResourceClaimTemplate", std::nullopt}});
  EXPECT_EQ(c.d.path, Path::kUnknown);
  EXPECT_TRUE(c.Evidence("the cluster has none of that name")) << c.AllEvidence();
}

TEST(Dra, AClassThatCannotBeFoundIsUnknown) {
  const Case c("team-a", Template("devs", kRdmaNicRequest), kIpcLock);
  EXPECT_EQ(c.d.path, Path::kUnknown) << c.AllEvidence();
  EXPECT_TRUE(c.Evidence("DeviceClass 'dranet' unknown")) << c.AllEvidence();
}

TEST(Dra, AGpuClaimMakesAGpuContainerWithoutAGpuResource) {
  const Case c("team-a",
               std::string(kDeviceClasses) + "---\n" +
                   Template("devs", std::string(kGpuRequest) + kRdmaNicRequest),
               kIpcLock, "{}");
  ASSERT_EQ(c.a.templates.size(), 1u);
  EXPECT_TRUE(c.a.w->templates[0].containers[0].gpu);
  EXPECT_FALSE(c.w.templates[0].containers[0].gpu);  // the caller's workload is left as read
  EXPECT_EQ(c.d.path, Path::kDra) << c.AllEvidence();
  EXPECT_TRUE(c.d.rdma);
}

TEST(Dra, AGpuClaimAloneIsAGpuTemplateWithoutRdma) {
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" + Template("devs", kGpuRequest), "",
               "{}");
  EXPECT_EQ(c.d.path, Path::kNone);
  EXPECT_TRUE(c.Evidence("GPU templates without an RDMA path")) << c.AllEvidence();
}

TEST(Dra, AnEfaClaimIsThePluginPath) {
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" +
                             Template("devs",
                                      "      - name: efa\n        exactly: "
                                      "{deviceClassName: efa}\n"));
  EXPECT_EQ(c.d.path, Path::kPlugin) << c.AllEvidence();
  EXPECT_FALSE(c.Fired("ipc-lock-missing"));
}

TEST(Dra, OnTheHostNetworkTheHostNetworkDecides) {
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" + Template("devs", kRdmaNicRequest),
               kIpcLock, "{nvidia.com/gpu: 8}", "  hostNetwork: true\n");
  EXPECT_EQ(c.d.path, Path::kHostNetwork);
}

TEST(Dra, AnExtendedResourceResolvesThroughItsDeviceClass) {
  const Case c("team-a", kDeviceClasses, kIpcLock,
               "{nvidia.com/gpu: 8, example.com/sriov-port1: 1}");
  // The NICs the extended resource resolves to decide the path, as any RDMA sign does, though
  // the claim "devs" (its template not among the inputs) is unknown.
  EXPECT_EQ(c.d.path, Path::kDra) << c.AllEvidence();
  EXPECT_TRUE(
      c.Evidence("claims example.com/sriov-port1, the extended resource of DeviceClass "
                 "'sriov-port1' (the inputs), driver sriovnetwork.k8snetworkplumbingwg.io "
                 "with rdmaCapable: RDMA NICs"))
      << c.AllEvidence();
}

TEST(Dra, FirstAvailableAlternativesOfDifferentDevicesAreUnknown) {
  const Case c("team-a",
               std::string(kDeviceClasses) + "---\n" + Template("devs", R"(      - name: any
        firstAvailable:
          - {name: nic, deviceClassName: dranet, selectors: [{cel: {expression: 'device.attributes["dra.net"].rdma'}}]}
          - {name: gpu, deviceClassName: gpu.nvidia.com}
)"),
               kIpcLock);
  EXPECT_EQ(c.d.path, Path::kUnknown) << c.AllEvidence();
  EXPECT_TRUE(c.Evidence("firstAvailable alternatives hold different devices")) << c.AllEvidence();
}

TEST(Dra, NoDevicePluginVfIsInjectedNextToDraNics) {
  const Case c("sriov-ns",
               std::string(kDeviceClasses) + "---\n" +
                   Template("devs", kRdmaNicRequest)
                       .replace(Template("devs", kRdmaNicRequest).find("team-a"), 6, "sriov-ns"),
               kIpcLock);
  EXPECT_EQ(c.d.path, Path::kDra) << c.AllEvidence();
  EXPECT_FALSE(c.a.mutates);
  EXPECT_FALSE(c.a.templates[0].plan.applies);
}

// NCCL_SOCKET_IFNAME naming an interface a DRA claim may bring (dra-driver-sriov's standalone
// mode names them vfnet0, vfnet1): "not attached" would deny on a guess.
const std::string kIfnameVfnet = "    env: [{name: NCCL_SOCKET_IFNAME, value: vfnet0}]\n";

TEST(Dra, AnInterfaceAnUnreadableClaimMayBringIsNotReportedAsNotAttached) {
  const Case c("team-a", kDeviceClasses, kIpcLock + kIfnameVfnet);
  EXPECT_EQ(c.d.path, Path::kUnknown) << c.AllEvidence();
  EXPECT_FALSE(c.Fired("ifname-not-attached")) << c.AllFindings();
}

TEST(Dra, AnInterfaceOfAClaimOfNicsWithoutRdmaIsNotReportedAsNotAttached) {
  // dranet's NIC without rdma required: no RDMA path, but a netdev whose name is dranet's.
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" + Template("devs", kPlainNicRequest),
               kIpcLock + kIfnameVfnet);
  EXPECT_EQ(c.d.path, Path::kNone) << c.AllEvidence();
  EXPECT_FALSE(c.Fired("ifname-not-attached")) << c.AllFindings();
}

TEST(Dra, AClaimOfGpusAloneBringsNoInterfaceAndTheIfnameIsStillJudged) {
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" + Template("devs", kGpuRequest),
               kIpcLock + kIfnameVfnet, "{}");
  EXPECT_TRUE(c.Fired("ifname-not-attached")) << c.AllFindings();
}

TEST(Dra, NothingIsPlannedNextToAClaimThatCannotBeRead) {
  const Case c("sriov-ns", kDeviceClasses, kIpcLock);
  EXPECT_EQ(c.d.path, Path::kUnknown);
  EXPECT_FALSE(c.a.mutates);
}

}  // namespace

// --- The DRA warning rules (dra-fixed-ib-hca, dra-unaligned-claims, mnnvl-without-imex) ---

// A workload judged against a catalogue; `workload_yaml` is one document.
struct Judged {
  Judged(const std::string& catalogue_yaml, const std::string& workload_yaml)
      : catalogue(Catalogue::From(YamlObjects(catalogue_yaml), Source::kInputs)),
        object(*codec::ParseStream(workload_yaml).at(0).value),
        w(workload::Workload::Read(object, TestPolicy(), "default")),
        d(Diagnose(w, TestPolicy(), catalogue)) {}
  Catalogue catalogue;
  nlohmann::json object;
  workload::Workload w;
  Diagnosis d;
  std::vector<std::string> Rules() const {
    std::vector<std::string> out;
    for (const auto& f : d.findings) out.push_back(f.rule);
    return out;
  }
};

const std::string kNics = std::string(kDeviceClasses) + "---\n" + Template("devs", kRdmaNicRequest);
const std::string kShm = "    volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n";
const std::string kShmVolume = "  volumes: [{name: dshm, emptyDir: {medium: Memory}}]\n";

std::vector<std::string> RulesWithHca(const std::string& value) {
  const Case c("team-a", kNics,
               kIpcLock + kShm + "    env: [{name: NCCL_IB_HCA, value: '" + value + "'}]\n",
               "{nvidia.com/gpu: 8}", kShmVolume);
  std::vector<std::string> out;
  for (const auto& f : c.d.findings) out.push_back(f.rule + " at " + f.pointer);
  return out;
}

TEST(DraRules, AParticularNcclIbHcaListWithDraNicsIsAWarning) {
  const std::vector<std::string> fired{"dra-fixed-ib-hca at /spec/containers/0/env/0/value"};
  EXPECT_EQ(RulesWithHca("mlx5_0,mlx5_1"), fired);
  EXPECT_EQ(RulesWithHca("=mlx5_bond_a"), fired);  // exact names are particular devices
  EXPECT_EQ(RulesWithHca("mlx5_2:1"), fired);
}

TEST(DraRules, AFamilyPrefixOrAnExclusionListOfNcclIbHcaKeepsMatching) {
  EXPECT_TRUE(RulesWithHca("mlx5").empty());
  EXPECT_TRUE(RulesWithHca("mlx5_").empty());
  EXPECT_TRUE(RulesWithHca("^mlx5_0").empty());
}

TEST(DraRules, ANcclIbHcaListWithoutDraNicsIsNotThisRule) {
  const Case c("team-a", std::string(kDeviceClasses) + "---\n" + Template("devs", kGpuRequest),
               "    env: [{name: NCCL_IB_HCA, value: mlx5_0}]\n");
  EXPECT_FALSE(c.Fired("dra-fixed-ib-hca")) << c.AllFindings();
}

std::string GpuNicTemplate(const std::string& constraints) {
  return std::string(kDeviceClasses) + "---\n" +
         Template("devs", std::string(kGpuRequest) + kRdmaNicRequest) + constraints;
}

// A Case points into itself (the assessment into its workload): made in place, never moved.
std::unique_ptr<Case> Unaligned(const std::string& constraints) {
  return std::make_unique<Case>("team-a", GpuNicTemplate(constraints), kIpcLock + kShm, "{}",
                                kShmVolume);
}

TEST(DraRules, GpusAndNicsInOneClaimWithoutAPlacementConstraintAreAWarning) {
  const auto owned = Unaligned("");
  const Case& c = *owned;
  EXPECT_EQ(c.d.path, Path::kDra) << c.AllEvidence();
  ASSERT_EQ(c.d.findings.size(), 1u) << c.AllFindings();
  EXPECT_EQ(c.d.findings[0].rule, "dra-unaligned-claims");
  EXPECT_EQ(c.d.findings[0].severity, Severity::kWarning);
  EXPECT_EQ(c.d.findings[0].pointer, "/spec/resourceClaims");
}

TEST(DraRules, APcieRootOrNumaConstraintOverBothRequestsAlignsThem) {
  EXPECT_FALSE(Unaligned("      constraints: [{matchAttribute: resource.kubernetes.io/pcieRoot}]\n")
                   ->Fired("dra-unaligned-claims"));
  EXPECT_FALSE(
      Unaligned("      constraints: [{requests: [gpu, nic], matchAttribute: dra.net/numaNode}]\n")
          ->Fired("dra-unaligned-claims"));
  // A constraint over the GPUs alone, or on another attribute, aligns nothing with the NICs.
  EXPECT_TRUE(Unaligned("      constraints: [{requests: [gpu], matchAttribute: "
                        "resource.kubernetes.io/pcieRoot}]\n")
                  ->Fired("dra-unaligned-claims"));
  EXPECT_TRUE(Unaligned("      constraints: [{matchAttribute: gpu.nvidia.com/productName}]\n")
                  ->Fired("dra-unaligned-claims"));
}

constexpr const char* kTwoClaimsPod = R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: gpus}, {name: nics, resourceClaimTemplateName: nics}]
  containers:
  - name: trainer
    image: x
    securityContext: {capabilities: {add: [IPC_LOCK]}}
    resources: {claims: [{name: gpus}, {name: nics}]}
)";

TEST(DraRules, GpusAndNicsInSeparateClaimsAreAWarning) {
  const Judged j(std::string(kDeviceClasses) + "---\n" + Template("gpus", kGpuRequest) + "---\n" +
                     Template("nics", kRdmaNicRequest),
                 kTwoClaimsPod);
  const auto rules = j.Rules();
  EXPECT_NE(std::find(rules.begin(), rules.end(), "dra-unaligned-claims"), rules.end());
}

TEST(DraRules, AnUnknownClaimKeepsTheAlignmentRuleQuiet) {
  // The NIC template is not among the inputs: nothing says what it holds.
  const Judged j(std::string(kDeviceClasses) + "---\n" + Template("gpus", kGpuRequest),
                 kTwoClaimsPod);
  EXPECT_TRUE(j.d.findings.empty());
}

constexpr const char* kComputeDomain = R"(apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: nvl72, namespace: team-a}
spec:
  numNodes: 2
  channel: {resourceClaimTemplate: {name: nvl72-channel}}
)";

std::string GpuJob(int parallelism, const std::string& spec_extra, const std::string& claims) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: team-a}\nspec:\n"
         "  parallelism: " +
         std::to_string(parallelism) + "\n  template:\n    spec:\n" + spec_extra +
         "      containers:\n      - name: trainer\n        image: x\n"
         "        resources: {limits: {nvidia.com/gpu: 4}" +
         claims + "}\n";
}

TEST(DraRules, AMultiNodeGpuJobBesideAComputeDomainWithoutAChannelIsAWarning) {
  const Judged j(kComputeDomain, GpuJob(2, "", ""));
  EXPECT_EQ(j.Rules(), std::vector<std::string>{"mnnvl-without-imex"});
  EXPECT_NE(j.d.findings[0].message.find("'nvl72'"), std::string::npos) << j.d.findings[0].message;
}

TEST(DraRules, AChannelClaimOrASinglePodOrAnotherNamespaceNeedsNoImexWarning) {
  const std::string channel =
      "      resourceClaims: [{name: imex, resourceClaimTemplateName: nvl72-channel}]\n";
  EXPECT_TRUE(
      Judged(kComputeDomain, GpuJob(2, channel, ", claims: [{name: imex}]")).d.findings.empty());
  EXPECT_TRUE(Judged(kComputeDomain, GpuJob(1, "", "")).d.findings.empty());
  std::string elsewhere = kComputeDomain;
  elsewhere.replace(elsewhere.find("team-a"), 6, "team-b");
  EXPECT_TRUE(Judged(elsewhere, GpuJob(2, "", "")).d.findings.empty());
}

TEST(DraRules, AnImexChannelClaimBringsNoInterfaceAndTheIfnameIsStillJudged) {
  // The channel's template is not among the inputs: unknown devices, but a ComputeDomain says
  // it is an IMEX channel, which no NCCL_SOCKET_IFNAME can name.
  const std::string channel =
      "      resourceClaims: [{name: imex, resourceClaimTemplateName: nvl72-channel}]\n";
  std::string job = GpuJob(2, channel, ", claims: [{name: imex}]");
  job += "        env: [{name: NCCL_SOCKET_IFNAME, value: vfnet0}]\n";
  EXPECT_EQ(Judged(kComputeDomain, job).Rules(), std::vector<std::string>{"ifname-not-attached"});
}

}  // namespace rw::rules
