// Traps a small policy fell into: omitted lists, two spellings of a severity, a policy handed
// over as the chart's ConfigMap.
#include <gtest/gtest.h>

#include "rdma_webhook/policy/policy.h"

namespace rw::policy {
namespace {

TEST(PolicyTraps, OmittedListsAreTheEmbeddedDefaults) {
  // Only namespaces written: the resource names real clusters use must still be known.
  const auto p = ParsePolicyText("namespaces: [{names: [team-*], mode: tcp}]\n");
  const auto& d = DefaultPolicy();
  EXPECT_EQ(p.gpu_resources, d.gpu_resources);
  EXPECT_EQ(p.vf_resources, d.vf_resources);
  EXPECT_EQ(p.shared_resources, d.shared_resources);
  EXPECT_EQ(p.rdma_networks, d.rdma_networks);
  EXPECT_TRUE(p.IsVfResource("nvidia.com/sriov_rdma_vf"));  // beyond the struct's rdma/vf
  EXPECT_TRUE(p.IsSharedResource("rdma/rdma_shared_device_a"));
}

TEST(PolicyTraps, AWrittenListReplacesTheDefault) {
  const auto p = ParsePolicyText("resources: {vf: [example.com/vf]}\n");
  EXPECT_EQ(p.vf_resources, std::vector<std::string>{"example.com/vf"});
  EXPECT_FALSE(p.IsVfResource("rdma/vf"));
  EXPECT_EQ(p.shared_resources, DefaultPolicy().shared_resources);  // its sibling omitted
}

TEST(PolicyTraps, WarnAndWarningAreOneSeverity) {
  const auto p = ParsePolicyText(
      "defaults: {mode: off, validation: warning, rules: {shm-too-small: warn, "
      "ipc-lock-missing: warning}}\n");
  EXPECT_EQ(p.defaults.validation, Validation::kWarn);
  EXPECT_EQ(p.defaults.rules.at("shm-too-small"), RuleLevel::kWarning);
  EXPECT_EQ(p.defaults.rules.at("ipc-lock-missing"), RuleLevel::kWarning);
  EXPECT_THROW(ParsePolicyText("defaults: {validation: warnings}\n"), PolicyError);
}

constexpr const char* kConfigMap = R"(apiVersion: v1
kind: ConfigMap
metadata: {name: rdma-webhook-policy, namespace: rdma-webhook}
data:
  policy.yaml: |
    apiVersion: rdma-webhook/v1
    kind: Policy
    defaults: {mode: tcp}
)";

TEST(PolicyTraps, AConfigMapHoldingThePolicyIsThePolicy) {
  const auto p = ParsePolicyText(kConfigMap);
  EXPECT_EQ(p.defaults.mode, Mode::kTcp);
  EXPECT_EQ(p.hash, ParsePolicyText("apiVersion: rdma-webhook/v1\nkind: Policy\n"
                                    "defaults: {mode: tcp}\n")
                        .hash);
}

TEST(PolicyTraps, AConfigMapWithoutThePolicyKeyNamesTheKeysItHas) {
  try {
    ParsePolicyText("apiVersion: v1\nkind: ConfigMap\ndata: {values.yaml: x}\n");
    FAIL() << "accepted";
  } catch (const PolicyError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("policy.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find("values.yaml"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace rw::policy

namespace rw::policy {
namespace {

TEST(PolicyTraps, AnEntryWhoseNamesAreAllMatchedEarlierNeverApplies) {
  const auto p = ParsePolicyText(
      "namespaces:\n"
      "  - {names: [team-*], mode: tcp}\n"
      "  - {names: [team-a, team-b], mode: off}\n"
      "  - {names: [team-x*], mode: off}\n");
  const auto w = ShadowedNamespaceEntries(p);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].rfind("namespaces[1]: never applies", 0), 0u) << w[0];
  EXPECT_EQ(w[1].rfind("namespaces[2]: never applies", 0), 0u) << w[1];
}

TEST(PolicyTraps, APartlyShadowedEntryNamesTheDeadName) {
  const auto p = ParsePolicyText(
      "namespaces:\n"
      "  - {names: [team-a], mode: tcp}\n"
      "  - {names: [team-a, team-b], mode: off}\n");
  const auto w = ShadowedNamespaceEntries(p);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "namespaces[1].names[0]: 'team-a' is matched first by namespaces[0] ('team-a'), so "
            "this entry never applies to it");
}

TEST(PolicyTraps, UncertainGlobPairsAndTheDefaultAreNotReported) {
  // `*-prod` and `team-*` overlap but neither covers the other: no warning on a guess.
  const auto p = ParsePolicyText(
      "namespaces:\n"
      "  - {names: ['*-prod'], mode: tcp}\n"
      "  - {names: [team-*], mode: off}\n"
      "  - {names: [team], mode: off}\n");
  EXPECT_TRUE(ShadowedNamespaceEntries(p).empty());
  EXPECT_TRUE(ShadowedNamespaceEntries(DefaultPolicy()).empty());
}

}  // namespace
}  // namespace rw::policy
