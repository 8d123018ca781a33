#include <gtest/gtest.h>

#include "rdma_webhook/policy/policy.h"

namespace rw::policy {
namespace {

struct BadCase {
  const char* name;
  const char* text;
  const char* field;  // the error must name it
};

class BadPolicyTest : public testing::TestWithParam<BadCase> {};

TEST_P(BadPolicyTest, ErrorNamesTheField) {
  try {
    ParsePolicyText(GetParam().text);
    FAIL() << "accepted: " << GetParam().text;
  } catch (const PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().field), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schema, BadPolicyTest,
    testing::Values(
        BadCase{"unknown_top_level", "gpuResource: [a]", "gpuResource: unknown field"},
        BadCase{"unknown_nested", "namespaces: [{names: [a], mdoe: sriov}]",
                "namespaces[0].mdoe: unknown field (did you mean 'mode'?)"},
        BadCase{"unknown_in_a_section", "defaults: {nccl: {fabrik: ib}}",
                "defaults.nccl.fabrik: unknown field (did you mean 'fabric'?)"},
        BadCase{"unknown_far_from_any", "defaults: {nccl: {colour: red}}",
                "defaults.nccl.colour: unknown field"},
        BadCase{"misspelt_rule_id", "defaults: {rules: {ipc-lock-mising: off}}",
                "defaults.rules.ipc-lock-mising: unknown rule id 'ipc-lock-mising' (did you mean "
                "'ipc-lock-missing'?)"},
        BadCase{"unknown_rule_id", "defaults: {rules: {foo: off}}",
                "unknown rule id 'foo' (rdma-webhook rules lists them)"},
        BadCase{"count_zero",
                "namespaces: [{names: [a]}, {names: [b]}, {names: [c], mode: sriov, sriov: "
                "{network: rdma-net, count: 0}}]",
                "namespaces[2].sriov.count: must be >= 1"},
        BadCase{"bad_mode", "defaults: {mode: sriovv}", "defaults.mode"},
        BadCase{"mode_true", "defaults: {mode: on}", "defaults.mode"},
        BadCase{"wrong_type", "gpuResources: nvidia.com/gpu", "gpuResources"},
        BadCase{"sriov_without_network", "namespaces: [{names: [a], mode: sriov}]",
                "namespaces[0].sriov.networks"},
        BadCase{"shared_without_resource", "namespaces: [{names: [a], mode: shared}]",
                "namespaces[0].shared.resource"},
        BadCase{"names_required", "namespaces: [{mode: tcp}]", "namespaces[0].names"},
        BadCase{"gid_negative", "defaults: {nccl: {gidIndex: -1}}", "defaults.nccl.gidIndex"},
        BadCase{"bad_path", "defaults: {allowedPaths: [rdma]}", "defaults.allowedPaths[0]"},
        BadCase{"bad_api_version", "apiVersion: v2", "apiVersion"},
        // The webhook would deny its own mutations (path-not-allowed): the mode's path must pass.
        BadCase{"mode_path_not_allowed",
                "namespaces: [{names: [a], mode: hostNetwork, allowedPaths: [tcp]}]",
                "namespaces[0].allowedPaths: must include 'hostNetwork', the path of mode "
                "hostNetwork"},
        BadCase{"mode_path_not_allowed_in_defaults",
                "defaults: {mode: tcp, allowedPaths: [hostNetwork]}",
                "defaults.allowedPaths: must include 'tcp'"},
        BadCase{"mode_path_not_in_the_inherited_list",
                "defaults: {allowedPaths: [tcp]}\nnamespaces: [{names: [a], mode: shared, "
                "shared: {resource: rdma/hca}}]",
                "namespaces[0].allowedPaths: must include 'shared', the path of mode shared: the "
                "webhook moves templates there and would then deny them (path-not-allowed); got "
                "[tcp], inherited from defaults"},
        BadCase{"duplicate_interface",
                "namespaces: [{names: [a], mode: sriov, sriov: {networks: [{network: rail-a}, "
                "{network: rail-b}]}}]",
                "namespaces[0].sriov.networks[1].interface"},
        BadCase{"kinds_need_templates", "kinds: [{group: g, kind: K}]", "kinds[0].templates"},
        BadCase{"kinds_dns_policy_is_a_dns_policy",
                "kinds: [{kind: K, templates: [/t], hostNetworkDnsPolicy: ClusterFirstWithHost}]",
                "kinds[0].hostNetworkDnsPolicy"},
        BadCase{"kinds_multi_node_is_a_bool", "kinds: [{kind: K, templates: [/t], multiNode: 2}]",
                "kinds[0].multiNode"},
        BadCase{"bad_gdr", "defaults: {nccl: {gdrLevel: phb}}", "defaults.nccl.gdrLevel"},
        BadCase{"not_a_mapping", "- a\n- b\n", "policy"},
        BadCase{"yaml_syntax", "defaults: {mode: [}", "line 1"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(Policy, ErrorsCarryTheLineAndColumnOfTheField) {
  try {
    ParsePolicyText("defaults:\n  mode: sriov\n  validation: strict\n");
    FAIL() << "accepted";
  } catch (const PolicyError& e) {
    EXPECT_EQ(e.field(), "defaults.validation");
    EXPECT_EQ(e.line, 3u);
    EXPECT_EQ(e.column, 3u);
  }
  try {  // an unknown key in a list item's section
    ParsePolicyText("namespaces:\n  - names: [a]\n    nccl: {fabrik: ib}\n");
    FAIL() << "accepted";
  } catch (const PolicyError& e) {
    EXPECT_EQ(e.line, 3u);
    EXPECT_EQ(e.column, 12u);
  }
}

TEST(Policy, NoPositionWhereTheFileHasNone) {
  // JSON records only the document's start; a ConfigMap's lines are those of its embedded text.
  for (const char* text :
       {"{\"defaults\": {\"mode\": \"x\"}}",
        "kind: ConfigMap\ndata:\n  policy.yaml: |\n    defaults:\n      mode: x\n"}) {
    try {
      ParsePolicyText(text);
      FAIL() << "accepted: " << text;
    } catch (const PolicyError& e) {
      EXPECT_EQ(e.field(), "defaults.mode") << text;
      EXPECT_EQ(e.line, 0u) << text;
    }
  }
}

TEST(Policy, AModeWhosePathAlwaysPassesNeedsNoListing) {
  // off moves nothing and dra is never denied for its path: neither has to be listed; a list
  // inherited from defaults that holds the entry's path is enough.
  const auto p = ParsePolicyText(
      "defaults: {mode: off, allowedPaths: [tcp, hostNetwork]}\n"
      "namespaces:\n"
      "  - {names: [d], mode: dra, allowedPaths: [tcp], dra: {claimTemplate: rdma-nics}}\n"
      "  - {names: [h], mode: hostNetwork}\n");
  EXPECT_EQ(p.defaults.allowed_paths, (std::vector<Path>{Path::kTcp, Path::kHostNetwork}));
  EXPECT_EQ(p.ForNamespace("d").allowed_paths, std::vector<Path>{Path::kTcp});  // dra not added
  EXPECT_EQ(p.ForNamespace("h").allowed_paths, p.defaults.allowed_paths);
}

TEST(Policy, UnquotedOffIsOff) {
  const auto p = ParsePolicyText("defaults: {mode: off, validation: off}\n");
  EXPECT_EQ(p.defaults.mode, Mode::kOff);
  EXPECT_EQ(p.defaults.validation, Validation::kOff);
}

TEST(Policy, FieldDefaults) {
  const auto p =
      ParsePolicyText("namespaces: [{names: [x], mode: sriov, sriov: {network: team/net}}]\n");
  const auto& ns = p.ForNamespace("x");
  EXPECT_EQ(ns.validation, Validation::kDeny);
  EXPECT_EQ(ns.on_conflict, OnConflict::kReject);
  ASSERT_EQ(ns.sriov.networks.size(), 1u);
  EXPECT_EQ(ns.sriov.networks[0].ns, "team");
  EXPECT_EQ(ns.sriov.networks[0].interface, "eth1");
  EXPECT_EQ(ns.sriov.networks[0].resource, "rdma/vf");
  EXPECT_EQ(ns.allowed_paths, std::vector<Path>{Path::kSriov});
  EXPECT_TRUE(ns.Allows(Path::kNone));
  EXPECT_TRUE(ns.Allows(Path::kUnknown));
  EXPECT_FALSE(ns.Allows(Path::kHostNetwork));
}

TEST(Policy, FirstMatchingEntryWinsAndDefaultsCatchTheRest) {
  const auto p = ParsePolicyText(
      "defaults: {validation: warn}\nnamespaces:\n"
      "  - {names: [train-*, llm], mode: hostNetwork}\n"
      "  - {names: [train-special], mode: tcp}\n");
  EXPECT_EQ(p.ForNamespace("train-a").mode, Mode::kHostNetwork);
  EXPECT_EQ(p.ForNamespace("train-special").mode, Mode::kHostNetwork);
  EXPECT_EQ(p.ForNamespace("llm").mode, Mode::kHostNetwork);
  EXPECT_EQ(p.ForNamespace("llm2").mode, Mode::kOff);
  EXPECT_EQ(p.ForNamespace("llm2").validation, Validation::kWarn);
}

TEST(Policy, JsonAndYamlAreTheSameSchema) {
  const auto y = ParsePolicyText("defaults: {mode: tcp}\n");
  const auto j = ParsePolicyText(R"({"defaults": {"mode": "tcp"}})");
  EXPECT_EQ(y.defaults.mode, j.defaults.mode);
}

TEST(Policy, CustomKindsComeFirst) {
  const auto p = ParsePolicyText(
      "kinds: [{group: example.com, kind: TrainJob, templates: ['/spec/workers/*/template']}]\n");
  const auto* k = p.FindKind("example.com/v1", "TrainJob");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->templates[0], "/spec/workers/*/template");
  EXPECT_NE(p.FindKind("batch/v1", "Job"), nullptr);
  EXPECT_NE(p.FindKind("batch.volcano.sh/v1alpha1", "Job"), nullptr);
  EXPECT_EQ(p.FindKind("v1", "Service"), nullptr);
}

TEST(Policy, AKindsEntryDescribesATrainingKindLikeABuiltInRow) {
  const auto p = ParsePolicyText(
      "kinds:\n"
      "  - {group: example.com, kind: TrainJob, templates: ['/spec/workers/*/template'],\n"
      "     hostNetworkDnsPolicy: ClusterFirstWithHostNet}\n"
      "  - {group: example.com, kind: Replicas, templates: [/spec/template], multiNode: false}\n");
  const auto* train = p.FindKind("example.com/v1", "TrainJob");
  ASSERT_NE(train, nullptr);
  EXPECT_TRUE(train->multi_node);  // a custom kind is a training kind unless it says otherwise
  EXPECT_EQ(train->host_network_dns_policy, "ClusterFirstWithHostNet");
  const auto* copies = p.FindKind("example.com/v1", "Replicas");
  ASSERT_NE(copies, nullptr);
  EXPECT_FALSE(copies->multi_node);
  EXPECT_EQ(copies->host_network_dns_policy, "");
  // The built-in rows say the same things of the kinds they know.
  EXPECT_FALSE(p.FindKind("v1", "Pod")->multi_node);
  EXPECT_FALSE(p.FindKind("apps/v1", "StatefulSet")->multi_node);
  EXPECT_TRUE(p.FindKind("kubeflow.org/v1", "PyTorchJob")->multi_node);
  EXPECT_EQ(p.FindKind("batch.volcano.sh/v1alpha1", "Job")->host_network_dns_policy,
            "ClusterFirstWithHostNet");
  EXPECT_EQ(p.FindKind("batch/v1", "Job")->host_network_dns_policy, "");
}

TEST(DefaultPolicyTest, IsValidAndDeniesNothingOutsideItsNamespaces) {
  const auto& p = DefaultPolicy();
  EXPECT_EQ(p.defaults.mode, Mode::kOff);
  EXPECT_NE(p.defaults.validation, Validation::kDeny);
  EXPECT_EQ(p.ForNamespace("default").validation, p.defaults.validation);
  EXPECT_FALSE(p.hash.empty());
}

TEST(Glob, StarsAndQuestionMarks) {
  EXPECT_TRUE(GlobMatch("train-*", "train-a"));
  EXPECT_TRUE(GlobMatch("train-*", "train-"));
  EXPECT_FALSE(GlobMatch("train-*", "xtrain-a"));
  EXPECT_TRUE(GlobMatch("t?am", "team"));
  EXPECT_TRUE(GlobMatch("*a*b*c*", "xxaxxbxxcxx"));
  EXPECT_FALSE(GlobMatch("*a*b*c*", std::string(2000, 'a')));
}

// A shell glob by its definition, recursive and slow, to hold GlobMatch's shortcuts to.
bool ReferenceGlob(std::string_view p, std::string_view t) {
  if (p.empty()) return t.empty();
  if (p.front() == '*')
    return ReferenceGlob(p.substr(1), t) || (!t.empty() && ReferenceGlob(p, t.substr(1)));
  return !t.empty() && (p.front() == '?' || p.front() == t.front()) &&
         ReferenceGlob(p.substr(1), t.substr(1));
}

// GlobMatch passes over a pattern whose literal first or last byte the name lacks before it
// walks; for every pattern and name it must still answer what a glob means.
TEST(Glob, ShortcutsAnswerAsTheDefinition) {
  const std::vector<std::string> patterns = {"",
                                             "*",
                                             "**",
                                             "?",
                                             "a",
                                             "rdma/vf",
                                             "rdma/*",
                                             "*/vf",
                                             "nvidia.com/mig-*",
                                             "*gpu*",
                                             "r?ma/v?",
                                             "?dma/vf",
                                             "rdma/v?",
                                             "rdma/hca_shared_devices_*",
                                             "a*a",
                                             "*a",
                                             "a*"};
  const std::vector<std::string> names = {"",
                                          "a",
                                          "aa",
                                          "rdma/vf",
                                          "rdma/vfx",
                                          "xrdma/vf",
                                          "rdma/",
                                          "nvidia.com/gpu",
                                          "nvidia.com/mig-1g.10gb",
                                          "amd.com/gpu",
                                          "v",
                                          "rdma/hca_shared_devices_a"};
  for (const auto& p : patterns)
    for (const auto& n : names)
      EXPECT_EQ(GlobMatch(p, n), ReferenceGlob(p, n))
          << "pattern '" << p << "', name '" << n << "'";
  EXPECT_TRUE(MatchesAny({"amd.com/gpu", "nvidia.com/gpu"}, "nvidia.com/gpu"));
  EXPECT_FALSE(MatchesAny({"nvidia.com/gpu.shared", "nvidia.com/rdma-vf"}, "nvidia.com/gpu"));
}

// mode: dra names the ResourceClaimTemplate of the NICs; the pod's claim name defaults to
// rdma-nics; a mode's path is named after it for allowedPaths.
TEST(Policy, ModeDraReadsItsSection) {
  const Policy p = ParsePolicyText(R"(
namespaces:
  - names: [a]
    mode: dra
    dra: {claimTemplate: rdma-nics.v1}
  - names: [b]
    mode: dra
    dra: {claimTemplate: nics, claimName: nic, socketIfname: net1}
)");
  const auto& a = p.ForNamespace("a");
  EXPECT_EQ(a.mode, Mode::kDra);
  EXPECT_EQ(ToString(a.mode), "dra");
  EXPECT_EQ(a.dra.claim_template, "rdma-nics.v1");
  EXPECT_EQ(a.dra.claim_name, "rdma-nics");
  EXPECT_EQ(a.dra.socket_ifname, "");
  EXPECT_EQ(a.allowed_paths, std::vector<Path>{Path::kDra});
  const auto& b = p.ForNamespace("b");
  EXPECT_EQ(b.dra.claim_name, "nic");
  EXPECT_EQ(b.dra.socket_ifname, "net1");
  EXPECT_EQ(ModePath(Mode::kDra), Path::kDra);
  EXPECT_EQ(ParsePath("dra"), Path::kDra);
}

INSTANTIATE_TEST_SUITE_P(
    ModeDra, BadPolicyTest,
    testing::Values(
        BadCase{"no_template", "namespaces: [{names: [a], mode: dra}]",
                "namespaces[0].dra.claimTemplate: mode dra needs the ResourceClaimTemplate"},
        BadCase{"template_not_a_name",
                "namespaces: [{names: [a], mode: dra, dra: {claimTemplate: RDMA_nics}}]",
                "namespaces[0].dra.claimTemplate: 'RDMA_nics' is not a ResourceClaimTemplate"},
        BadCase{"claim_name_with_a_dot",
                "namespaces: [{names: [a], mode: dra, dra: {claimTemplate: t, claimName: a.b}}]",
                "namespaces[0].dra.claimName: 'a.b' is not a pod claim name"},
        BadCase{"bad_interface",
                "namespaces: [{names: [a], mode: dra, dra: {claimTemplate: t, socketIfname: a b}}]",
                "namespaces[0].dra.socketIfname: is not a valid interface name"},
        BadCase{"unknown_field",
                "namespaces: [{names: [a], mode: dra, dra: {claimTemplate: t, count: 2}}]",
                "namespaces[0].dra.count: unknown field"}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace rw::policy
