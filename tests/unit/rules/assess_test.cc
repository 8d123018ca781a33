// The assessment holds the one decision whether the webhook edits a workload: the mutator
// applies what it says, and Diagnose reads the same plans.
#include <gtest/gtest.h>

#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/rules/assessment.h"

namespace rw::rules {
namespace {

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off}
namespaces:
  - names: [sriov-ns]
    mode: sriov
    optOut: true
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
    nccl: {hca: mlx5_0}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

struct Read {
  explicit Read(const std::string& ns, const std::string& metadata_extra = "",
                const std::string& spec_extra = "", const std::string& container_extra = "")
      : w(workload::Workload::Read(
            *codec::ParseStream("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: " +
                                ns + "\n" + metadata_extra + "spec:\n" + spec_extra +
                                "  containers:\n  - name: trainer\n    image: x\n"
                                "    resources: {limits: {nvidia.com/gpu: 8}}\n" +
                                container_extra)
                 .at(0)
                 .value,
            TestPolicy(), "default")) {}
  workload::Workload w;
};

TEST(Assess, PlansOnceAndSaysTheWorkloadIsEdited) {
  const Read r("sriov-ns");
  const Assessment a = Assess(r.w, TestPolicy());
  ASSERT_EQ(a.templates.size(), 1u);
  EXPECT_EQ(a.templates[0].path, policy::Path::kNone);
  EXPECT_TRUE(a.templates[0].plan.applies);
  EXPECT_FALSE(a.templates[0].plan.edits.empty());
  EXPECT_TRUE(a.mutates);
  EXPECT_EQ(a.path_after, policy::Path::kSriov);
}

TEST(Assess, AReportedConflictLeavesTheWorkloadAsWritten) {
  // onConflict: reject (the default) and another NCCL_IB_HCA than the policy's.
  const Read r("sriov-ns", "", "", "    env: [{name: NCCL_IB_HCA, value: mlx5_3}]\n");
  const Assessment a = Assess(r.w, TestPolicy());
  EXPECT_TRUE(a.templates[0].plan.Blocks());
  EXPECT_FALSE(a.mutates);
  EXPECT_EQ(a.path_after, policy::Path::kNone);  // as written
}

TEST(Assess, AnotherPathLeavesTheWorkloadAsWritten) {
  const Read r("sriov-ns", "", "  hostNetwork: true\n");
  const Assessment a = Assess(r.w, TestPolicy());
  EXPECT_FALSE(a.templates[0].plan.applies);
  EXPECT_FALSE(a.mutates);
  EXPECT_EQ(a.path_after, policy::Path::kHostNetwork);
}

TEST(Assess, OptedOutIsNeitherPlannedNorEdited) {
  const Read r("sriov-ns", "  annotations: {rdma-webhook.io/skip: 'true'}\n");
  const Assessment a = Assess(r.w, TestPolicy());
  EXPECT_TRUE(a.opted_out);
  EXPECT_FALSE(a.templates[0].plan.applies);
  EXPECT_FALSE(a.mutates);
  EXPECT_TRUE(Diagnose(a).skipped);
}

TEST(Assess, ModeOffEditsNothing) {
  const Read r("elsewhere");
  const Assessment a = Assess(r.w, TestPolicy());
  EXPECT_FALSE(a.mutates);
  EXPECT_EQ(a.path_after, policy::Path::kNone);
}

}  // namespace
}  // namespace rw::rules
