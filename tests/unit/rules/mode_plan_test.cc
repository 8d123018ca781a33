// The plan decides every edit and every conflict; the mutator only applies the edits in order.
#include <set>

#include <gtest/gtest.h>

#include "../../../src/policy/modes/mode.h"
#include "../../../src/rules/modes/mode.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/rules/mode_plan.h"

namespace rw::rules {
namespace {

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off}
namespaces:
  - {names: [host-reject], mode: hostNetwork}
  - {names: [host-override], mode: hostNetwork, onConflict: override}
  - names: [sriov-ns]
    mode: sriov
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
    nccl: {fabric: roce, gidIndex: 3}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

// The plan of the only template of a GPU Pod in `ns`.
TemplatePlan PlanPod(const std::string& ns, const std::string& spec_extra = "",
                     const std::string& annotations = "") {
  const std::string text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: " + ns +
                           "\n" + (annotations.empty() ? "" : "  annotations:\n" + annotations) +
                           "spec:\n" + spec_extra +
                           "  containers:\n  - name: trainer\n    image: x\n"
                           "    resources: {limits: {nvidia.com/gpu: 8}}\n";
  const auto docs = codec::ParseStream(text);
  const auto w = workload::Workload::Read(*docs.at(0).value, TestPolicy(), "default");
  const auto& t = w.templates.at(0);
  const auto& ns_policy = TestPolicy().ForNamespace(w.ns);
  const auto nets = ReadNetworks(t, ns_policy, w.ns);
  return PlanTemplate(t, TestPolicy(), ns_policy, w.ns, nets,
                      TemplatePath(t, TestPolicy(), ns_policy, nets));
}

const Edit* EditAt(const TemplatePlan& plan, const std::string& pointer) {
  for (const auto& e : plan.edits)
    if (e.pointer == pointer) return &e;
  return nullptr;
}

// TemplatePath tries the signs of every mode unit and of plugin by precedence; the first that
// holds decides. The order is docs/design.md#paths: two signs of one precedence would make it
// depend on the table's order, and a sign moved changes which path a manifest takes.
TEST(TemplatePath, SignsAreTriedInTheDocumentedOrderWithUniquePrecedences) {
  using policy::Path;
  const std::vector<Path> documented{Path::kPlugin,      Path::kSriov, Path::kTcp,
                                     Path::kHostNetwork, Path::kDra,   Path::kSriov,
                                     Path::kShared,      Path::kTcp,   Path::kPrivileged};
  const auto signs = modes::PathSigns();
  std::vector<Path> paths;
  for (std::size_t i = 0; i < signs.size(); ++i) {
    paths.push_back(signs[i].path);
    if (i > 0) {
      EXPECT_LT(signs[i - 1].precedence, signs[i].precedence)
          << policy::ToString(signs[i - 1].path) << " and " << policy::ToString(signs[i].path)
          << " share a precedence";
    }
  }
  EXPECT_EQ(paths, documented);
}

// A mode is its two files: the tables and the Mode values come from their names
// (cmake/ModeTable.cmake). What the names cannot say is checked here: each file claims its own
// mode (a copied file that keeps another mode's value would shadow it), every policy row has its
// planner and the other way round, and the documentation's order has no ties.
TEST(ModeTable, EveryModeHasOneRowAndOneUnitAndItsOwnPosition) {
  const auto rows = policy::modes::Rows();
  const auto units = modes::Units();
  ASSERT_EQ(rows.size(), units.size());
  std::set<policy::Mode> row_modes, unit_modes;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NE(rows[i]->mode, policy::Mode::kOff) << rows[i]->name;
    EXPECT_TRUE(row_modes.insert(rows[i]->mode).second) << rows[i]->name << " repeats a mode";
    EXPECT_EQ(policy::modes::RowOf(rows[i]->mode), rows[i]);
    const modes::Unit* unit = modes::UnitOf(rows[i]->mode);
    ASSERT_NE(unit, nullptr) << rows[i]->name << " has no planner";
    if (i > 0) {
      EXPECT_LT(rows[i - 1]->position, rows[i]->position)
          << rows[i - 1]->name << " and " << rows[i]->name << " share a position";
    }
  }
  for (const modes::Unit* unit : units)
    EXPECT_TRUE(unit_modes.insert(unit->mode).second) << policy::ToString(unit->mode);
  EXPECT_EQ(row_modes, unit_modes);
  // The documented order of `mode:` values (docs/policy.md).
  EXPECT_EQ(policy::modes::ModeNames(),
            (std::vector<std::string>{"hostNetwork", "sriov", "shared", "tcp", "dra", "off"}));
}

TEST(PlanTemplate, DnsPolicyDefaultIsAConflictUnderRejectAndAWarnedEditUnderOverride) {
  const auto reject = PlanPod("host-reject", "  dnsPolicy: Default\n");
  ASSERT_EQ(reject.conflicts.size(), 1u);
  EXPECT_EQ(reject.conflicts[0].pointer, "/spec/dnsPolicy");
  EXPECT_EQ(EditAt(reject, "/spec/dnsPolicy"), nullptr);
  EXPECT_TRUE(reject.Blocks());

  const auto override = PlanPod("host-override", "  dnsPolicy: Default\n");
  EXPECT_TRUE(override.conflicts.empty());
  EXPECT_FALSE(override.Blocks());
  const Edit* dns = EditAt(override, "/spec/dnsPolicy");
  ASSERT_NE(dns, nullptr);
  EXPECT_EQ(dns->kind, Edit::Kind::kSet);
  EXPECT_EQ(dns->value, "ClusterFirstWithHostNet");
  ASSERT_EQ(dns->overrides.size(), 1u);
  EXPECT_EQ(dns->overrides[0].rule, "policy-conflict");
  EXPECT_EQ(dns->overrides[0].severity, Severity::kWarning);
}

TEST(PlanTemplate, DnsPolicyClusterFirstIsSetWithoutAWarning) {
  const auto plan = PlanPod("host-reject", "  dnsPolicy: ClusterFirst\n");
  EXPECT_TRUE(plan.conflicts.empty());
  const Edit* dns = EditAt(plan, "/spec/dnsPolicy");
  ASSERT_NE(dns, nullptr);
  EXPECT_TRUE(dns->overrides.empty());
}

// The order is the patch's: spec and annotation first, then claims, then each GPU container's
// capability and env.
TEST(PlanTemplate, SriovEditsComeInPatchOrder) {
  const auto plan = PlanPod("sriov-ns");
  EXPECT_TRUE(plan.applies);
  EXPECT_TRUE(plan.conflicts.empty());
  std::vector<std::string> pointers;
  for (const auto& e : plan.edits) pointers.push_back(e.pointer);
  const std::string c = "/spec/containers/0";
  EXPECT_EQ(pointers, (std::vector<std::string>{
                          "/metadata/annotations/k8s.v1.cni.cncf.io~1networks",
                          c + "/resources/limits/rdma~1vf",
                          c + "/resources/requests/rdma~1vf",
                          c + "/securityContext/capabilities/add",
                          c + "/env",
                          c + "/env",
                          c + "/env",
                      }));
  EXPECT_EQ(plan.edits[0].value, "sriov-rdma-net@eth1");
  EXPECT_EQ(plan.edits[6].kind, Edit::Kind::kAppend);
  EXPECT_EQ(plan.edits[6].value, (nlohmann::json{{"name", "NCCL_IB_GID_INDEX"}, {"value", "3"}}));
}

TEST(PlanTemplate, AnAnnotationMultusCannotReadIsNotEditedAndBlocks) {
  const auto plan = PlanPod("sriov-ns", "", "    k8s.v1.cni.cncf.io/networks: '[{\"name\": 5}]'\n");
  EXPECT_TRUE(plan.applies);
  EXPECT_TRUE(plan.unreadable_annotation);
  EXPECT_EQ(EditAt(plan, "/metadata/annotations/k8s.v1.cni.cncf.io~1networks"), nullptr);
  EXPECT_TRUE(plan.Blocks());
}

// Without a VF of its own `default/sriov-rdma-net` is no own rail: the policy's network cannot
// take eth1, and the message names both NADs with their namespaces.
TEST(PlanTemplate, AnInterfaceTakenByANetworkOfAnotherNamespaceNamesBoth) {
  const auto plan =
      PlanPod("sriov-ns", "", "    k8s.v1.cni.cncf.io/networks: default/sriov-rdma-net@eth1\n");
  ASSERT_EQ(plan.conflicts.size(), 1u);
  EXPECT_EQ(plan.conflicts[0].message,
            "interface 'eth1' is taken by network 'default/sriov-rdma-net', but the namespace "
            "policy plugs 'sriov-ns/sriov-rdma-net' in as 'eth1'");
}

TEST(PlanTemplate, ATemplateOnAnotherPathIsNotPlanned) {
  const auto plan = PlanPod("sriov-ns", "  hostNetwork: true\n");
  EXPECT_FALSE(plan.applies);
  EXPECT_TRUE(plan.edits.empty());
  EXPECT_FALSE(plan.Blocks());
}

}  // namespace
}  // namespace rw::rules
