// mode: dra (docs/dra.md#mode-dra): a GPU template gets the namespace's ResourceClaimTemplate as
// a pod claim that its GPU containers name, IPC_LOCK, /dev/shm and NCCL's variables; never
// hostNetwork, never a VF next to DRA NICs, and a mutated object mutates to nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "../fixtures/device_classes.h"
#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::mutate {
namespace {

using nlohmann::json;

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off, validation: warn}
namespaces:
  - names: [dra]
    mode: dra
    injectShm: true
    dra: {claimTemplate: rdma-nics}
    nccl: {debugForVerify: true}
  - names: [dra-ifname]
    mode: dra
    onConflict: override
    dra: {claimTemplate: rdma-nics, claimName: nics, socketIfname: net1}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

// In each namespace of the test policy a template of RDMA NICs under the policy's name, another,
// and one of GPUs (the classes: fixtures::kDeviceClasses).
std::string Templates(const std::string& ns) {
  std::string out;
  for (const char* name : {"rdma-nics", "own-nics"})
    out += std::string("---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n") +
           "metadata: {name: " + name + ", namespace: " + ns +
           "}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: nic\n"
           "        exactly:\n          deviceClassName: dranet\n"
           "          selectors: [{cel: {expression: 'device.attributes[\"dra.net\"].rdma'}}]\n";
  return out + "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n" +
         "metadata: {name: gpus, namespace: " + ns + "}\nspec:\n  spec:\n    devices:\n" +
         "      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]\n";
}

const catalogue::Catalogue& Cluster() {
  static const catalogue::Catalogue c = catalogue::Catalogue::From(
      fixtures::YamlObjects(fixtures::kDeviceClasses + Templates("dra") + Templates("dra-ifname")),
      catalogue::Source::kCluster);
  return c;
}

json Pod(const std::string& ns, const std::string& trainer_extra = "",
         const std::string& spec_extra = "") {
  return *codec::ParseStream(
              "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: " + ns + "}\nspec:\n" +
              spec_extra +
              "  containers:\n  - name: sidecar\n    image: s\n  - name: trainer\n    image: x\n"
              "    resources:\n      limits: {nvidia.com/gpu: 8}\n" +
              trainer_extra)
              .at(0)
              .value;
}

// The patch gives the result, and mutating the result changes nothing, with the cluster's
// objects and without them (the policy's template is then read from the policy).
Mutation CheckedMutate(const json& object) {
  Mutation m = Mutate(object, TestPolicy(), "default", Cluster());
  EXPECT_EQ(object.patch(m.patch.Json()), m.result) << m.patch.Json().dump(2);
  EXPECT_EQ(Mutate(m.result, TestPolicy(), "default", Cluster()).patch.Json(), json::array());
  EXPECT_EQ(Mutate(m.result, TestPolicy(), "default").patch.Json(), json::array());
  return m;
}

json Env(const json& container) {
  json out = json::object();
  for (const auto& e : container.value("env", json::array()))
    out[e["name"].get<std::string>()] = e["value"];
  return out;
}

// `pointer` "": anywhere.
bool Fired(const rules::Diagnosis& d, std::string_view rule, std::string_view pointer = "") {
  return std::any_of(d.findings.begin(), d.findings.end(), [&](const rules::Finding& f) {
    return f.rule == rule && (pointer.empty() || f.pointer == pointer);
  });
}

TEST(MutateDra, ClaimsThePolicysTemplateForEveryGpuContainer) {
  const auto m = CheckedMutate(Pod("dra"));
  const auto& spec = m.result["spec"];
  EXPECT_EQ(spec["resourceClaims"],
            json::parse(R"([{"name": "rdma-nics", "resourceClaimTemplateName": "rdma-nics"}])"));
  EXPECT_FALSE(spec.contains("hostNetwork"));
  EXPECT_EQ(spec["containers"][0], json::parse(R"({"name": "sidecar", "image": "s"})"));
  const auto& c = spec["containers"][1];
  EXPECT_EQ(c["resources"]["claims"], json::parse(R"([{"name": "rdma-nics"}])"));
  EXPECT_EQ(c["securityContext"]["capabilities"]["add"], json::array({"IPC_LOCK"}));
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/dev/shm");
  // No NCCL_SOCKET_IFNAME: the policy names no interface, and the driver names it per allocation.
  EXPECT_EQ(Env(c), json::parse(R"({"NCCL_IB_DISABLE": "0", "NCCL_DEBUG": "INFO",
                                   "NCCL_DEBUG_SUBSYS": "INIT,BOOTSTRAP,ENV,NET"})"));
  EXPECT_EQ(m.path, policy::Path::kDra);

  const auto d = rules::Diagnose(m.result, TestPolicy(), "default", Cluster());
  EXPECT_EQ(d.path, policy::Path::kDra);
  EXPECT_TRUE(d.rdma);
  EXPECT_EQ(d.Count(rules::Severity::kError), 0u);
}

// Without the cluster's objects (a server without --watch-cluster, `check` on a file alone) the
// policy says what its template holds: the mutation is the same, and the mutated pod is on the
// dra path with the policy named as the source. Any other claim stays unknown.
TEST(MutateDra, ThePolicysTemplateIsReadFromThePolicyWhenTheClusterIsNotKnown) {
  const auto with = Mutate(Pod("dra"), TestPolicy(), "default", Cluster());
  const auto without = Mutate(Pod("dra"), TestPolicy(), "default");
  EXPECT_EQ(without.patch.text(), with.patch.text());
  const auto d = rules::Diagnose(without.result, TestPolicy(), "default");
  EXPECT_EQ(d.path, policy::Path::kDra);
  EXPECT_TRUE(d.rdma);
  EXPECT_EQ(d.Count(rules::Severity::kError), 0u);
  EXPECT_TRUE(std::any_of(d.evidence.begin(), d.evidence.end(), [](const std::string& e) {
    return e.find("the namespace policy's dra.claimTemplate") != std::string::npos;
  })) << testing::PrintToString(d.evidence);

  const auto other =
      Pod("dra", "", "  resourceClaims: [{name: own, resourceClaimTemplateName: own-nics}]\n");
  EXPECT_EQ(rules::Diagnose(other, TestPolicy(), "default").path, policy::Path::kUnknown);
}

TEST(MutateDra, WritesTheInterfaceThePolicyNamesUnderItsClaimName) {
  const auto m = CheckedMutate(Pod("dra-ifname"));
  const auto& c = m.result["spec"]["containers"][1];
  EXPECT_EQ(m.result["spec"]["resourceClaims"][0]["name"], "nics");
  EXPECT_EQ(c["resources"]["claims"], json::parse(R"([{"name": "nics"}])"));
  EXPECT_EQ(Env(c), json::parse(R"({"NCCL_SOCKET_IFNAME": "net1", "NCCL_IB_DISABLE": "0"})"));
}

// The policy's template already claimed under another name: the GPU containers name that entry;
// no second entry is added.
TEST(MutateDra, UsesThePodsOwnEntryOfThePolicysTemplate) {
  const auto m = CheckedMutate(
      Pod("dra", "", "  resourceClaims: [{name: mine, resourceClaimTemplateName: rdma-nics}]\n"));
  EXPECT_EQ(m.result["spec"]["resourceClaims"].size(), 1u);
  EXPECT_EQ(m.result["spec"]["containers"][1]["resources"]["claims"],
            json::parse(R"([{"name": "mine"}])"));
}

// A template that brings its own DRA NICs keeps its claims; IPC_LOCK and NCCL's variables are
// still added, the policy's interface is not (it is the policy claim's, not this one's).
TEST(MutateDra, ATemplateWithItsOwnDraNicsKeepsThem) {
  const auto m =
      CheckedMutate(Pod("dra-ifname", "      claims: [{name: own}]\n",
                        "  resourceClaims: [{name: own, resourceClaimTemplateName: own-nics}]\n"));
  const auto& spec = m.result["spec"];
  EXPECT_EQ(spec["resourceClaims"],
            json::parse(R"([{"name": "own", "resourceClaimTemplateName": "own-nics"}])"));
  const auto& c = spec["containers"][1];
  EXPECT_EQ(c["resources"]["claims"], json::parse(R"([{"name": "own"}])"));
  EXPECT_EQ(c["securityContext"]["capabilities"]["add"], json::array({"IPC_LOCK"}));
  EXPECT_EQ(Env(c), json::parse(R"({"NCCL_IB_DISABLE": "0"})"));
}

// A device-plugin VF next to DRA NICs: a conflict under override too, and the pod as written.
TEST(MutateDra, AVfNextToDraNicsIsAConflictNeverBoth) {
  auto pod = Pod("dra-ifname", "      claims: [{name: own}]\n",
                 "  resourceClaims: [{name: own, resourceClaimTemplateName: own-nics}]\n");
  pod["spec"]["containers"][1]["resources"]["limits"]["rdma/vf"] = 1;
  const auto m = Mutate(pod, TestPolicy(), "default", Cluster());
  EXPECT_EQ(m.patch.Json(), json::array());
  const auto d = rules::Diagnose(pod, TestPolicy(), "default", Cluster());
  EXPECT_TRUE(Fired(d, "policy-conflict", "/spec/containers/1/resources/limits/rdma~1vf"))
      << d.findings.size();
}

// A VF alone is the sriov path: left as written, and allowedPaths ([dra]) judges it.
TEST(MutateDra, AVfAloneIsLeftForAllowedPaths) {
  json with_vf = Pod("dra");
  with_vf["spec"]["containers"][1]["resources"]["limits"]["rdma/vf"] = 1;
  EXPECT_EQ(Mutate(with_vf, TestPolicy(), "default", Cluster()).patch.Json(), json::array());
  const auto d = rules::Diagnose(with_vf, TestPolicy(), "default", Cluster());
  EXPECT_EQ(d.path, policy::Path::kSriov);
  EXPECT_TRUE(Fired(d, "path-not-allowed"));
}

// The policy's claim name taken by another claim: a conflict whatever onConflict says.
TEST(MutateDra, AClaimNameTakenByAnotherClaimIsAConflict) {
  const auto pod =
      Pod("dra-ifname", "", "  resourceClaims: [{name: nics, resourceClaimTemplateName: gpus}]\n");
  EXPECT_EQ(Mutate(pod, TestPolicy(), "default", Cluster()).patch.Json(), json::array());
  const auto d = rules::Diagnose(pod, TestPolicy(), "default", Cluster());
  EXPECT_TRUE(Fired(d, "policy-conflict", "/spec/resourceClaims/0"));
}

// hostNetwork is never set under dra: a hostNetwork template stays on its path.
TEST(MutateDra, AHostNetworkTemplateIsLeftAsWritten) {
  const auto pod = Pod("dra", "", "  hostNetwork: true\n");
  EXPECT_EQ(Mutate(pod, TestPolicy(), "default", Cluster()).patch.Json(), json::array());
}

}  // namespace
}  // namespace rw::mutate
