// The verdict the webhook, `check` and `audit` share: when errors deny, when they only warn and
// when nothing is said.
#include "rdma_webhook/rules/verdict.h"

#include <gtest/gtest.h>

#include "rdma_webhook/codec/yaml.h"

namespace rw::rules {
namespace {

using nlohmann::json;
using policy::Validation;

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

json Pod() {
  return json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"name": "c", "image": "x"}]}})");
}

json OwnedBy(json object, const std::string& api_version, const std::string& kind,
             bool controller) {
  object["metadata"]["ownerReferences"].push_back(
      {{"apiVersion", api_version}, {"kind", kind}, {"name", "o"}, {"controller", controller}});
  return object;
}

Diagnosis WithFindings(Validation validation, std::vector<Finding> findings) {
  Diagnosis d;
  d.enforcement = validation;
  d.findings = std::move(findings);
  return d;
}

const Finding kError{"host-network-no-rdma", Severity::kError, "m", "f", "/spec"};
const Finding kWarning{"nccl-debug", Severity::kWarning, "m", "f", "/spec"};

TEST(ControllerOf, NamesTheControllingOwnerOnly) {
  EXPECT_FALSE(ControllerOf(Pod()).has_value());
  EXPECT_FALSE(ControllerOf(OwnedBy(Pod(), "batch/v1", "Job", false)).has_value());
  const auto job =
      ControllerOf(OwnedBy(OwnedBy(Pod(), "v1", "Node", false), "batch/v1", "Job", true));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->group, "batch");
  EXPECT_EQ(job->kind, "Job");
  const auto core = ControllerOf(OwnedBy(Pod(), "v1", "ReplicationController", true));
  ASSERT_TRUE(core.has_value());
  EXPECT_EQ(core->group, "");
  // A wrong type in the user's object is no controller, and no exception.
  json odd = Pod();
  odd["metadata"]["ownerReferences"] = {{{"apiVersion", 3}, {"kind", "Job"}, {"controller", true}}};
  ASSERT_TRUE(ControllerOf(odd).has_value());
  EXPECT_EQ(ControllerOf(odd)->group, "");
  odd["metadata"]["ownerReferences"] = "not a list";
  EXPECT_FALSE(ControllerOf(odd).has_value());
}

TEST(ControllerOwnedPod, OnlyPodsMadeByAController) {
  EXPECT_TRUE(ControllerOwnedPod(OwnedBy(Pod(), "batch/v1", "Job", true)));
  EXPECT_FALSE(ControllerOwnedPod(OwnedBy(Pod(), "batch/v1", "Job", false)));
  json job = OwnedBy(Pod(), "apps/v1", "Deployment", true);
  job["kind"] = "ReplicaSet";
  EXPECT_FALSE(ControllerOwnedPod(job));
}

TEST(Verdict, AnErrorDeniesUnderDenyAndWarningsAreShown) {
  const auto v = Judge(WithFindings(Validation::kDeny, {kError, kWarning}), Pod());
  EXPECT_EQ(v.reason, Reason::kJudged);
  EXPECT_TRUE(v.deny);
  ASSERT_EQ(v.Errors().size(), 1u);
  EXPECT_EQ(v.Errors()[0]->rule, kError.rule);
  EXPECT_FALSE(v.Warns(v.findings[0]));
  EXPECT_TRUE(v.Warns(v.findings[1]));
}

TEST(Verdict, WarningsAloneNeverDeny) {
  const auto v = Judge(WithFindings(Validation::kDeny, {kWarning}), Pod());
  EXPECT_FALSE(v.deny);
  EXPECT_EQ(v.findings.size(), 1u);
}

TEST(Verdict, AControllerOwnedPodOnlyWarns) {
  const auto v =
      Judge(WithFindings(Validation::kDeny, {kError}), OwnedBy(Pod(), "batch/v1", "Job", true));
  EXPECT_FALSE(v.deny);
  EXPECT_EQ(v.enforcement, Validation::kWarn);
  EXPECT_TRUE(v.Warns(v.findings[0]));
}

TEST(Verdict, WarnTurnsErrorsIntoWarnings) {
  const auto v = Judge(WithFindings(Validation::kWarn, {kError}), Pod());
  EXPECT_FALSE(v.deny);
  EXPECT_TRUE(v.Warns(v.findings[0]));
}

TEST(Verdict, OffAndOptOutSayNothing) {
  const auto off = Judge(WithFindings(Validation::kOff, {kError, kWarning}), Pod());
  EXPECT_EQ(off.reason, Reason::kValidationOff);
  EXPECT_FALSE(off.deny);
  EXPECT_TRUE(off.findings.empty());
  auto skipped = WithFindings(Validation::kDeny, {});
  skipped.skipped = true;
  const auto opted = Judge(skipped, Pod());
  EXPECT_EQ(opted.reason, Reason::kOptedOut);
  EXPECT_FALSE(opted.deny);
  EXPECT_TRUE(opted.findings.empty());
}

TEST(Verdict, AMalformedObjectIsOneErrorFindingAtItsField) {
  const workload::ManifestError e("/spec/containers", "expected a list");
  policy::NamespacePolicy ns;
  ns.validation = Validation::kDeny;
  const auto v = JudgeMalformed(e, ns, Pod());
  EXPECT_EQ(v.reason, Reason::kMalformed);
  EXPECT_TRUE(v.deny);
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_EQ(v.findings[0].rule, "malformed-manifest");
  EXPECT_EQ(v.findings[0].pointer, "/spec/containers");
  EXPECT_EQ(v.findings[0].fix, "fix the type of /spec/containers");
  EXPECT_FALSE(JudgeMalformed(e, ns, OwnedBy(Pod(), "batch/v1", "Job", true)).deny);
  ns.validation = Validation::kWarn;
  EXPECT_FALSE(JudgeMalformed(e, ns, Pod()).deny);
  ns.validation = Validation::kOff;
  EXPECT_FALSE(JudgeMalformed(e, ns, Pod()).Warns(v.findings[0]));
}

// malformed-manifest is a registered rule like the others: a namespace's `rules:` sets its level.
TEST(Verdict, AMalformedObjectFollowsTheNamespacesRuleLevel) {
  const workload::ManifestError e("/spec/containers", "expected a list");
  policy::NamespacePolicy ns;
  ns.validation = Validation::kDeny;
  ns.rules["malformed-manifest"] = policy::RuleLevel::kWarning;
  auto v = JudgeMalformed(e, ns, Pod());
  EXPECT_FALSE(v.deny);
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_EQ(v.findings[0].severity, Severity::kWarning);
  EXPECT_TRUE(v.Warns(v.findings[0]));
  ns.rules["malformed-manifest"] = policy::RuleLevel::kOff;
  v = JudgeMalformed(e, ns, Pod());
  EXPECT_FALSE(v.deny);
  EXPECT_TRUE(v.findings.empty());
}

TEST(PodTemplatesUnchanged, OnlyTheTemplatesMatter) {
  const json pod = Pod();
  const auto w = workload::Workload::Read(pod, TestPolicy(), "ns");
  EXPECT_TRUE(PodTemplatesUnchanged(pod, pod, w, TestPolicy()));
  json labeled = pod;
  labeled["metadata"]["labels"] = {{"team", "a"}};
  EXPECT_TRUE(PodTemplatesUnchanged(
      pod, labeled, workload::Workload::Read(labeled, TestPolicy(), "ns"), TestPolicy()));
  json restarted = pod;
  restarted["metadata"]["annotations"] = {{std::string(kRestartedAtAnnotation), "now"}};
  EXPECT_TRUE(PodTemplatesUnchanged(
      pod, restarted, workload::Workload::Read(restarted, TestPolicy(), "ns"), TestPolicy()));
  json changed = pod;
  changed["spec"]["hostNetwork"] = true;
  EXPECT_FALSE(PodTemplatesUnchanged(
      pod, changed, workload::Workload::Read(changed, TestPolicy(), "ns"), TestPolicy()));
  json unreadable = pod;
  unreadable["spec"]["containers"] = "not a list";
  EXPECT_FALSE(PodTemplatesUnchanged(unreadable, pod, w, TestPolicy()));
}

}  // namespace
}  // namespace rw::rules
