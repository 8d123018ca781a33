// The rules on a TrainJob judged through its effective templates, and findings pointed back
// into the TrainJob.
#include <gtest/gtest.h>

#include <algorithm>

#include "../fixtures/trainer.h"
#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/trainjob.h"

namespace rw::rules {
namespace {

using nlohmann::json;

using fixtures::Yaml;

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(R"(
apiVersion: rdma-webhook/v1
kind: Policy
resources: {vf: [rdma/vf], shared: [rdma/hca_shared_devices_*]}
defaults: {mode: off, validation: deny}
namespaces:
  - names: [host]
    mode: hostNetwork
)");
  return p;
}

const std::string kRuntime = fixtures::ClusterTrainingRuntime(
    "torch", "{numNodes: 2, torch: {}}",
    {fixtures::ReplicatedJob("node", fixtures::AncestorStep("trainer"), R"(spec:
  containers:
    - name: node
      image: torch:1
      resources:
        limits: {rdma/hca_shared_devices_a: 1}
)")});

std::string Job(const std::string& ns, const std::string& trainer) {
  return "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, metadata: {name: j, "
         "namespace: " +
         ns + "}, spec: {runtimeRef: {name: torch}, trainer: " + trainer + "}}";
}

Diagnosis Judge(const std::string& job, const std::string& runtime = kRuntime) {
  const json j = Yaml(job), r = Yaml(runtime);
  const auto t = workload::EffectiveTemplates(j, r, workload::ReadRuntimeRef(j, "default"),
                                              workload::ResourcesPerNode::kMerge);
  const auto w = workload::ReadTrainJob(t, TestPolicy(), "default");
  Diagnosis d = Diagnose(Assess(w, TestPolicy()));
  PointIntoTrainJob(d, t, "inputs");
  return d;
}

const Finding* Find(const Diagnosis& d, std::string_view rule) {
  auto it = std::find_if(d.findings.begin(), d.findings.end(),
                         [&](const Finding& f) { return f.rule == rule; });
  return it == d.findings.end() ? nullptr : &*it;
}

// v2.3.0 keeps what v2.0 to v2.2 erase, and the manifest does not say which runs: a warning.
TEST(TrainerRules, ResourcesPerNodeWithoutTheRuntimesRdmaResourceWarns) {
  const auto d = Judge(Job("default", "{resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}"));
  const Finding* f = Find(d, "trainer-rdma-resource-erased");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("v2.3.0 merges per resource name and keeps it"), std::string::npos)
      << f->message;
  EXPECT_EQ(f->pointer, "/spec/trainer/resourcesPerNode");
  EXPECT_NE(f->message.find("ClusterTrainingRuntime 'torch' claims rdma/hca_shared_devices_a: 1"),
            std::string::npos)
      << f->message;
  // judged as v2.3 builds it (merged): the pods are on the shared path
  EXPECT_EQ(d.path, policy::Path::kShared);
  EXPECT_EQ(d.evidence.front(), "runtime ClusterTrainingRuntime 'torch' (inputs)");
}

TEST(TrainerRules, RepeatingTheRdmaResourceOrSettingNoResourcesIsFine) {
  EXPECT_EQ(Find(Judge(Job("default",
                           "{resourcesPerNode: {limits: {nvidia.com/gpu: 8, "
                           "rdma/hca_shared_devices_a: 1}}}")),
                 "trainer-rdma-resource-erased"),
            nullptr);
  EXPECT_EQ(Find(Judge(Job("default", "{numNodes: 2}")), "trainer-rdma-resource-erased"), nullptr);
}

// v2.3.0 drops the `node` container's claims even for a resourcesPerNode that holds claims
// only; v2.0 to v2.2 erase nothing then, so the erased-resource error stays silent.
TEST(TrainerRules, AClaimsOnlyResourcesPerNodeWarnsOfTheDroppedClaims) {
  const std::string runtime = fixtures::ClusterTrainingRuntime(
      "torch", "{numNodes: 2, torch: {}}",
      {fixtures::ReplicatedJob("node", fixtures::AncestorStep("trainer"), R"(spec:
  resourceClaims: [{name: nic, resourceClaimTemplateName: nics}]
  containers:
    - name: node
      image: torch:1
      resources:
        limits: {nvidia.com/gpu: 8, rdma/hca_shared_devices_a: 1}
        claims: [{name: nic}]
)")});
  const auto d = Judge(Job("default", "{resourcesPerNode: {claims: [{name: scratch}]}}"), runtime);
  const Finding* f = Find(d, "trainer-claims-dropped");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->pointer, "/spec/trainer/resourcesPerNode");
  EXPECT_NE(f->message.find("v2.3.0 does so even though resourcesPerNode holds no limits"),
            std::string::npos)
      << f->message;
  EXPECT_EQ(Find(d, "trainer-rdma-resource-erased"), nullptr);
  // with limits the qualifier goes: every release drops the claims then
  const auto d2 = Judge(Job("default",
                            "{resourcesPerNode: {limits: {nvidia.com/gpu: 8, "
                            "rdma/hca_shared_devices_a: 1}}}"),
                        runtime);
  const Finding* f2 = Find(d2, "trainer-claims-dropped");
  ASSERT_NE(f2, nullptr);
  EXPECT_EQ(f2->message.find("v2.3.0 does so"), std::string::npos) << f2->message;
}

TEST(TrainerRules, ProcessesOtherThanGpusPerNodeWarn) {
  const auto d = Judge(Job("default",
                           "{numProcPerNode: 4, resourcesPerNode: {limits: "
                           "{nvidia.com/gpu: 8, rdma/hca_shared_devices_a: 1}}}"));
  const Finding* f = Find(d, "trainer-procs-gpu-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->pointer, "/spec/trainer/numProcPerNode");
  EXPECT_NE(f->message.find("4 GPUs per node stay idle"), std::string::npos) << f->message;
  EXPECT_EQ(Find(Judge(Job("default",
                           "{numProcPerNode: 8, resourcesPerNode: {limits: "
                           "{nvidia.com/gpu: 8, rdma/hca_shared_devices_a: 1}}}")),
                 "trainer-procs-gpu-mismatch"),
            nullptr);
}

TEST(TrainerRules, MultiNodeInAHostNetworkNamespaceNeedsTheRuntime) {
  std::string plain = kRuntime;
  plain.erase(plain.find("                      resources:"));
  const auto d =
      Judge(Job("host", "{numNodes: 4, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}"), plain);
  const Finding* f = Find(d, "trainer-runtime-no-rdma-path");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->pointer, "/spec/runtimeRef");
  EXPECT_EQ(
      Find(Judge(Job("host", "{numNodes: 1, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}"),
                 plain),
           "trainer-runtime-no-rdma-path"),
      nullptr);
  // a runtime already on an RDMA path (a shared HCA on the pod network) is for allowedPaths
  EXPECT_EQ(
      Find(Judge(Job("host", "{numNodes: 4, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}")),
           "trainer-runtime-no-rdma-path"),
      nullptr);
}

// The node count follows MPI's runLauncherAsNode: with it, numNodes 1 still runs a launcher and
// a worker that talk to each other; without it, one worker trains alone.
TEST(TrainerRules, MpiLauncherAsNodeCountsTheLauncherAsANode) {
  auto runtime = [](const char* launcher_as_node) {
    const std::string pod = "spec:\n  containers: [{name: node, image: ds:1}]\n";
    return fixtures::ClusterTrainingRuntime(
        "torch", std::string("{numNodes: 1, mpi: {runLauncherAsNode: ") + launcher_as_node + "}}",
        {fixtures::ReplicatedJob("node", "", pod),
         fixtures::ReplicatedJob("launcher", fixtures::AncestorStep("trainer"), pod)});
  };
  const std::string job =
      Job("host", "{numNodes: 1, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}");
  const auto judged = Judge(job, runtime("true"));  // Find points into it: keep it alive
  const Finding* f = Find(judged, "trainer-runtime-no-rdma-path");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("the 2 nodes of this job"), std::string::npos) << f->message;
  EXPECT_EQ(Find(Judge(job, runtime("false")), "trainer-runtime-no-rdma-path"), nullptr);
}

TEST(TrainerRules, RuntimeValuesPointAtRuntimeRefAndNameTheRuntimeField) {
  // the runtime's node container lacks IPC_LOCK: only the runtime (or a runtimePatches entry)
  // can add it
  const auto d = Judge(Job("default",
                           "{resourcesPerNode: {limits: {nvidia.com/gpu: 8, "
                           "rdma/hca_shared_devices_a: 1}}}"));
  const Finding* f = Find(d, "ipc-lock-missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->pointer, "/spec/runtimeRef");
  EXPECT_NE(f->message.find("(written in ClusterTrainingRuntime 'torch' at "
                            "/spec/template/spec/replicatedJobs/0/template/spec/template/spec/"
                            "containers/0"),
            std::string::npos)
      << f->message;
}

TEST(TrainerRules, TrainerEnvValuesPointIntoSpecTrainerEnv) {
  const auto d = Judge(Job("default",
                           "{env: [{name: A, value: b}, {name: NCCL_IB_DISABLE, value: "
                           "'true'}], resourcesPerNode: {limits: {nvidia.com/gpu: 8, "
                           "rdma/hca_shared_devices_a: 1}}}"));
  const Finding* f = Find(d, "invalid-nccl-value");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->pointer.rfind("/spec/trainer/env/1", 0), 0u) << f->pointer;
}

TEST(TrainerRules, UnknownRuntimeIsUnknownNamingIt) {
  const auto d = RuntimeNotFound(workload::ReadRuntimeRef(Yaml(Job("default", "{}")), "default"),
                                 "not among the inputs");
  EXPECT_EQ(d.path, policy::Path::kUnknown);
  EXPECT_TRUE(d.findings.empty());
  EXPECT_NE(
      d.evidence.at(0).find("ClusterTrainingRuntime 'torch' not found (not among the inputs)"),
      std::string::npos);
}

}  // namespace
}  // namespace rw::rules
