// ignore-check annotations: which findings they suppress, where they apply, and what an
// annotation that suppresses nothing says.
#include <gtest/gtest.h>

#include <string>

#include "../fixtures/yaml.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/suppression.h"
#include "rdma_webhook/rules/verdict.h"

namespace rw::rules {
namespace {

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off, validation: deny}
namespaces:
  - names: [sriov-ns]
    mode: sriov
    validation: deny
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
  - names: [tcp-only]
    mode: tcp
    validation: deny
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

using fixtures::Yaml;

// An RDMA Pod on a VF without IPC_LOCK (ipc-lock-missing, an error); `annotations` are YAML
// lines of its metadata.annotations.
std::string PodWithoutIpcLock(const std::string& annotations, const std::string& ns = "sriov-ns") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: " + ns +
         "\n  annotations:\n    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1\n" + annotations +
         "spec:\n  containers:\n  - name: trainer\n    image: x\n"
         "    resources: {limits: {nvidia.com/gpu: 8, rdma/vf: 1}}\n"
         "    volumeMounts: [{name: shm, mountPath: /dev/shm}]\n"
         "  volumes: [{name: shm, emptyDir: {medium: Memory}}]\n";
}

// A two-template PyTorchJob whose Worker lacks IPC_LOCK; `master_annotations` and
// `worker_annotations` go into the templates' metadata, `job_annotations` into the object's.
std::string Job(const std::string& job_annotations, const std::string& master_annotations,
                const std::string& worker_annotations) {
  auto replica = [](const std::string& name, const std::string& annotations, bool ipc) {
    return "    " + name +
           ":\n      replicas: 2\n      template:\n        metadata:\n          annotations:\n"
           "            k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1\n" +
           annotations +
           "        spec:\n          containers:\n          - name: pytorch\n            image: x\n"
           "            resources: {limits: {nvidia.com/gpu: 8, rdma/vf: 1}}\n" +
           (ipc ? "            securityContext: {capabilities: {add: [IPC_LOCK]}}\n" : "") +
           "            volumeMounts: [{name: shm, mountPath: /dev/shm}]\n"
           "          volumes: [{name: shm, emptyDir: {medium: Memory}}]\n";
  };
  return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: j\n"
         "  namespace: sriov-ns\n" +
         (job_annotations.empty() ? "" : "  annotations:\n" + job_annotations) +
         "spec:\n  pytorchReplicaSpecs:\n" + replica("Master", master_annotations, false) +
         replica("Worker", worker_annotations, false);
}

std::size_t CountRule(const std::vector<Finding>& findings, const std::string& rule) {
  return static_cast<std::size_t>(std::count_if(findings.begin(), findings.end(),
                                                [&](const Finding& f) { return f.rule == rule; }));
}

TEST(Suppression, AnObjectAnnotationMovesTheRulesFindingsToSuppressedWithTheReason) {
  const auto object = Yaml(PodWithoutIpcLock(
      "    ignore-check.rdma-webhook.io/ipc-lock-missing: \"the runtime grants it\"\n"));
  const auto d = Diagnose(object, TestPolicy(), "default");
  EXPECT_EQ(CountRule(d.findings, "ipc-lock-missing"), 0u);
  ASSERT_EQ(d.suppressed.size(), 1u);
  EXPECT_EQ(d.suppressed[0].finding.rule, "ipc-lock-missing");
  EXPECT_EQ(d.suppressed[0].finding.severity, Severity::kError);
  EXPECT_EQ(d.suppressed[0].reason, "the runtime grants it");
  EXPECT_EQ(d.suppressed[0].annotation,
            "/metadata/annotations/ignore-check.rdma-webhook.io~1ipc-lock-missing");
}

TEST(Suppression, WithoutTheAnnotationTheFindingStands) {
  const auto d = Diagnose(Yaml(PodWithoutIpcLock("")), TestPolicy(), "default");
  EXPECT_EQ(CountRule(d.findings, "ipc-lock-missing"), 1u);
  EXPECT_TRUE(d.suppressed.empty());
}

TEST(Suppression, AnotherRulesAnnotationLeavesTheFinding) {
  const auto d = Diagnose(
      Yaml(PodWithoutIpcLock("    ignore-check.rdma-webhook.io/shm-too-small: \"no shm\"\n")),
      TestPolicy(), "default");
  EXPECT_EQ(CountRule(d.findings, "ipc-lock-missing"), 1u);
  EXPECT_TRUE(d.suppressed.empty());
  EXPECT_EQ(CountRule(d.findings, "invalid-ignore-check"), 0u);  // a real rule id
}

TEST(Suppression, ATemplateAnnotationCoversOnlyThatTemplate) {
  const auto d = Diagnose(
      Yaml(Job("", "",
               "            ignore-check.rdma-webhook.io/ipc-lock-missing: \"worker image\"\n")),
      TestPolicy(), "default");
  ASSERT_EQ(CountRule(d.findings, "ipc-lock-missing"), 1u);
  const auto& kept = *std::find_if(d.findings.begin(), d.findings.end(),
                                   [](const Finding& f) { return f.rule == "ipc-lock-missing"; });
  EXPECT_EQ(kept.pointer.rfind("/spec/pytorchReplicaSpecs/Master/", 0), 0u) << kept.pointer;
  ASSERT_EQ(d.suppressed.size(), 1u);
  EXPECT_EQ(d.suppressed[0].finding.pointer.rfind("/spec/pytorchReplicaSpecs/Worker/", 0), 0u);
  EXPECT_EQ(d.suppressed[0].annotation,
            "/spec/pytorchReplicaSpecs/Worker/template/metadata/annotations/"
            "ignore-check.rdma-webhook.io~1ipc-lock-missing");
}

TEST(Suppression, TheObjectsAnnotationCoversEveryTemplate) {
  const auto d = Diagnose(
      Yaml(Job("    ignore-check.rdma-webhook.io/ipc-lock-missing: \"both images\"\n", "", "")),
      TestPolicy(), "default");
  EXPECT_EQ(CountRule(d.findings, "ipc-lock-missing"), 0u);
  EXPECT_EQ(d.suppressed.size(), 2u);
}

TEST(Suppression, ASuppressedErrorNeitherDeniesNorWarns) {
  const auto object = Yaml(PodWithoutIpcLock(
      "    ignore-check.rdma-webhook.io/ipc-lock-missing: \"the runtime grants it\"\n"));
  const auto v = Judge(Diagnose(object, TestPolicy(), "default"), object);
  EXPECT_FALSE(v.deny);
  EXPECT_TRUE(v.Errors().empty());
  EXPECT_EQ(v.suppressed.size(), 1u);
  const auto unsuppressed = Yaml(PodWithoutIpcLock(""));
  EXPECT_TRUE(Judge(Diagnose(unsuppressed, TestPolicy(), "default"), unsuppressed).deny);
}

TEST(Suppression, AnEmptyReasonStillSuppresses) {
  const auto d =
      Diagnose(Yaml(PodWithoutIpcLock("    ignore-check.rdma-webhook.io/ipc-lock-missing: \"\"\n")),
               TestPolicy(), "default");
  ASSERT_EQ(d.suppressed.size(), 1u);
  EXPECT_EQ(d.suppressed[0].reason, "");
}

TEST(Suppression, AnUnknownRuleIdIsAWarningWithDidYouMean) {
  const auto d = Diagnose(
      Yaml(PodWithoutIpcLock("    ignore-check.rdma-webhook.io/ipc-lock-mising: \"typo\"\n")),
      TestPolicy(), "default");
  EXPECT_EQ(CountRule(d.findings, "ipc-lock-missing"), 1u);  // the typo suppresses nothing
  ASSERT_EQ(CountRule(d.findings, "invalid-ignore-check"), 1u);
  const auto& f = *std::find_if(d.findings.begin(), d.findings.end(),
                                [](const Finding& x) { return x.rule == "invalid-ignore-check"; });
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_NE(f.message.find("ignore-check.rdma-webhook.io/ipc-lock-mising"), std::string::npos);
  EXPECT_NE(f.message.find("did you mean 'ipc-lock-missing'"), std::string::npos) << f.message;
  EXPECT_EQ(f.pointer, "/metadata/annotations/ignore-check.rdma-webhook.io~1ipc-lock-mising");
}

TEST(Suppression, ThePolicysOwnRulesCannotBeSuppressed) {
  // tcp-only allows only the tcp path: a VF pod there is path-not-allowed.
  const auto object = Yaml(PodWithoutIpcLock(
      "    ignore-check.rdma-webhook.io/path-not-allowed: \"we need RDMA\"\n", "tcp-only"));
  const auto d = Diagnose(object, TestPolicy(), "default");
  EXPECT_EQ(CountRule(d.findings, "path-not-allowed"), 1u);
  EXPECT_EQ(CountRule(d.findings, "invalid-ignore-check"), 1u);
  for (const auto& s : d.suppressed) EXPECT_NE(s.finding.rule, "path-not-allowed");
  EXPECT_TRUE(Judge(d, object).deny);
}

TEST(Suppression, ARuleTheNamespaceTurnedOffHasNothingToSuppress) {
  const auto policy = policy::ParsePolicyText(R"(
apiVersion: rdma-webhook/v1
kind: Policy
namespaces:
  - names: [sriov-ns]
    mode: sriov
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
    rules: {ipc-lock-missing: off}
)");
  const auto d = Diagnose(
      Yaml(PodWithoutIpcLock("    ignore-check.rdma-webhook.io/ipc-lock-missing: \"x\"\n")), policy,
      "default");
  EXPECT_EQ(CountRule(d.findings, "ipc-lock-missing"), 0u);
  EXPECT_TRUE(d.suppressed.empty());
}

}  // namespace
}  // namespace rw::rules
