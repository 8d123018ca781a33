// A TrainJob mutated in Trainer's terms. The oracle is Trainer's own merge (as EffectiveTemplates
// renders it): the mutated TrainJob, built into its JobSet, must carry what the namespace's mode
// needs, and a second mutation must change nothing.
#include <gtest/gtest.h>

#include "../fixtures/device_classes.h"
#include "../fixtures/trainer.h"
#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/assessment.h"

namespace rw::mutate {
namespace {

using nlohmann::json;

constexpr const char* kPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
resources: {vf: [rdma/vf], shared: [rdma/hca_shared_devices_*]}
defaults: {mode: off, validation: warn}
namespaces:
  - names: [sriov]
    mode: sriov
    injectShm: true
    sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]}
  - names: [shared]
    mode: shared
    shared: {resource: rdma/hca_shared_devices_a, count: 1}
  - names: [host]
    mode: hostNetwork
    hostNetwork: {socketIfname: bond0}
)";

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(kPolicy);
  return p;
}

using fixtures::Yaml;

// `node_extra`: more lines of the `node` container (indented 22).
std::string Runtime(const std::string& node_extra = "") {
  return fixtures::ClusterTrainingRuntime(
             "torch", "{numNodes: 1, torch: {}}",
             {fixtures::ReplicatedJob("node", fixtures::AncestorStep("trainer"),
                                      R"(spec:
  containers:
    - name: node
      image: torch:1
      securityContext: {capabilities: {add: [SYS_PTRACE]}}
)")}) + node_extra;
}

std::string Job(const std::string& ns, const std::string& extra = "") {
  return R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llama, namespace: )" +
         ns + R"(}
spec:
  runtimeRef: {name: torch}
  trainer:
    numNodes: 4
    env: [{name: NCCL_DEBUG, value: INFO}]
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
)" + extra;
}

Mutation MutateJob(const json& job, const json& runtime) {
  return MutateTrainJob(job, runtime, workload::ReadRuntimeRef(job, "default"), TestPolicy(),
                        "default");
}

// The mutated TrainJob rendered as Trainer renders it: its node pod template.
json Rendered(const json& job, const json& runtime, workload::ResourcesPerNode rule) {
  const auto t =
      workload::EffectiveTemplates(job, runtime, workload::ReadRuntimeRef(job, "default"), rule);
  return t.jobset->at(json::json_pointer(t.facts.node_template));
}

TEST(MutateTrainJob, SriovGoesIntoTrainerFieldsAndOneOwnRuntimePatch) {
  const json runtime = Yaml(Runtime());
  const json job = Yaml(Job(
      "sriov", "  runtimePatches:\n" +
                   fixtures::Indented(fixtures::RuntimePatch(
                                          "kueue.x-k8s.io/manager",
                                          {fixtures::ReplicatedJob(
                                              "node", "", "spec: {nodeSelector: {pool: a}}\n")}),
                                      4)));
  const Mutation m = MutateJob(job, runtime);
  ASSERT_FALSE(m.patch.empty());
  const json& spec = m.result["spec"];
  EXPECT_EQ(spec["trainer"]["env"][0], Yaml("{name: NCCL_DEBUG, value: INFO}"));
  EXPECT_EQ(spec["trainer"]["resourcesPerNode"]["limits"],
            Yaml("{nvidia.com/gpu: 8, rdma/vf: '1'}"));
  ASSERT_EQ(spec["runtimePatches"].size(), 2u);
  EXPECT_EQ(spec["runtimePatches"][0], job["spec"]["runtimePatches"][0]);  // Kueue's untouched
  EXPECT_EQ(spec["runtimePatches"][1]["manager"], kRuntimePatchManager);
  // The patch holds no env for `node` (Trainer refuses it there) and no resources.
  const json& own = spec["runtimePatches"][1]["trainingRuntimeSpec"]["template"]["spec"]
                        ["replicatedJobs"][0]["template"]["spec"]["template"];
  EXPECT_FALSE(own["spec"]["containers"][0].contains("env"));
  EXPECT_FALSE(own["spec"]["containers"][0].contains("resources"));

  // Rendered with Trainer's merge, on either rule for resourcesPerNode:
  for (auto rule : {workload::ResourcesPerNode::kReplace, workload::ResourcesPerNode::kMerge}) {
    const json pod = Rendered(m.result, runtime, rule);
    const json& node = pod["spec"]["containers"][0];
    EXPECT_EQ(node["securityContext"]["capabilities"]["add"], Yaml("[SYS_PTRACE, IPC_LOCK]"));
    EXPECT_EQ(node["resources"]["limits"]["rdma/vf"], "1");
    EXPECT_EQ(node["resources"]["limits"]["nvidia.com/gpu"], 8);
    EXPECT_EQ(pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"], "sriov-rdma-net@eth1");
    EXPECT_EQ(pod["spec"]["nodeSelector"]["pool"], "a");
    bool ifname = false, shm = false;
    for (const auto& e : node["env"]) ifname = ifname || e["name"] == "NCCL_SOCKET_IFNAME";
    for (const auto& v : node["volumeMounts"]) shm = shm || v["mountPath"] == "/dev/shm";
    EXPECT_TRUE(ifname);
    EXPECT_TRUE(shm);
  }
  // judged again, the rendered pods need nothing more, and a reinvocation writes nothing
  const Mutation again = MutateJob(m.result, runtime);
  EXPECT_EQ(again.patch.Json(), json::array()) << again.patch.text();
  EXPECT_EQ(m.path, policy::Path::kSriov);
}

TEST(MutateTrainJob, OwnEntryIsReplacedNotDuplicated) {
  const json runtime = Yaml(Runtime());
  json job = Yaml(Job("sriov"));
  json first = MutateJob(job, runtime).result;
  // an older webhook wrote a different entry: it is replaced in place
  first["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
       ["template"]["spec"]["template"]["spec"]
           .erase("volumes");
  const Mutation m = MutateJob(first, runtime);
  ASSERT_EQ(m.result["spec"]["runtimePatches"].size(), 1u);
  EXPECT_TRUE(m.result["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
                      ["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                          .contains("volumes"));
}

// An entry another manager put after the webhook's would win over it (Trainer applies them in
// order, and a later capabilities.add replaces the list): the webhook's entry moves last and
// carries every capability, so the rendered pod keeps IPC_LOCK and the other's SYS_NICE.
TEST(MutateTrainJob, OwnEntryMovesLastAndKeepsTrainersTime) {
  const json runtime = Yaml(Runtime());
  json first = MutateJob(Yaml(Job("sriov")), runtime).result;
  first["spec"]["runtimePatches"][0]["time"] = "2026-01-01T00:00:00Z";  // Trainer v2.3 stamps it
  EXPECT_EQ(MutateJob(first, runtime).patch.Json(), json::array())
      << "same entry: time kept, no op";
  first["spec"]["runtimePatches"].push_back(Yaml(
      fixtures::RuntimePatch("example.com/profiler", {fixtures::ReplicatedJob("node", "", R"(spec:
  containers:
    - name: node
      securityContext: {capabilities: {add: [SYS_NICE]}}
)")}))[0]);
  const Mutation m = MutateJob(first, runtime);
  const json& list = m.result["spec"]["runtimePatches"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["manager"], "example.com/profiler");
  EXPECT_EQ(list[1]["manager"], kRuntimePatchManager);
  EXPECT_FALSE(list[1].contains("time")) << "a changed entry is Trainer's to stamp again";
  EXPECT_EQ(m.patch.Json()[0], Yaml("{op: remove, path: /spec/runtimePatches/0}"))
      << m.patch.text();
  const json pod = Rendered(m.result, runtime, workload::ResourcesPerNode::kMerge);
  EXPECT_EQ(pod["spec"]["containers"][0]["securityContext"]["capabilities"]["add"],
            Yaml("[SYS_NICE, IPC_LOCK]"));
  EXPECT_EQ(MutateJob(m.result, runtime).patch.Json(), json::array());
}

// On UPDATE spec.trainer and an existing entry's containers and volumes are immutable
// (Trainer's CRD rejects the whole update otherwise): the webhook adds its entry when there is
// none, and leaves an existing one as it is.
Mutation MutateUpdate(const json& job, const json& runtime) {
  return MutateTrainJob(job, runtime, workload::ReadRuntimeRef(job, "default"), TestPolicy(),
                        "default", catalogue::Catalogue::Empty(), TrainJobOperation::kUpdate);
}

TEST(MutateTrainJob, UpdateAddsTheOwnEntryAndNothingElse) {
  const json runtime = Yaml(Runtime());
  const json job = Yaml(Job("sriov"));
  const Mutation m = MutateUpdate(job, runtime);
  ASSERT_FALSE(m.patch.empty());
  for (const auto& op : m.patch.Json())
    EXPECT_EQ(op["path"].get<std::string>().rfind("/spec/runtimePatches", 0), 0u) << op.dump();
  EXPECT_EQ(m.result["spec"]["trainer"], job["spec"]["trainer"]);
  EXPECT_EQ(m.result["spec"]["runtimePatches"][0]["manager"], kRuntimePatchManager);
  // an entry already there is left as it is, even one an older webhook wrote differently
  json stale = MutateJob(job, runtime).result;
  stale["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
       ["template"]["spec"]["template"]["spec"]
           .erase("volumes");
  EXPECT_EQ(MutateUpdate(stale, runtime).patch.Json(), json::array());
  EXPECT_FALSE(MutateJob(stale, runtime).patch.empty()) << "a CREATE rewrites it";
}

TEST(MutateTrainJob, SharedCarriesTheRuntimesRdmaResourceIntoResourcesPerNode) {
  const json runtime = Yaml(Runtime(R"(                      resources:
                        limits: {rdma/hca_shared_devices_a: 1, cpu: "8"}
)"));
  const Mutation m = MutateJob(Yaml(Job("shared")), runtime);
  EXPECT_EQ(m.result["spec"]["trainer"]["resourcesPerNode"]["limits"],
            Yaml("{nvidia.com/gpu: 8, rdma/hca_shared_devices_a: '1'}"));
  const json pod = Rendered(m.result, runtime, workload::ResourcesPerNode::kReplace);
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["rdma/hca_shared_devices_a"], "1");
}

TEST(MutateTrainJob, WhatOnlyTheRuntimeCanCarryIsAFindingNamingIt) {
  const Mutation m = MutateJob(Yaml(Job("host")), Yaml(Runtime()));
  for (const auto& op : m.patch.Json()) {
    EXPECT_EQ(op["path"].get<std::string>().find("hostNetwork"), std::string::npos);
    EXPECT_EQ(op.dump().find("hostNetwork"), std::string::npos) << op.dump();
  }
  bool named = false;
  for (const auto& f : m.overrides)
    named = named || (f.rule == "trainer-runtime-no-rdma-path" &&
                      f.message.find("hostNetwork") != std::string::npos &&
                      f.message.find("ClusterTrainingRuntime 'torch'") != std::string::npos &&
                      f.pointer == "/spec/runtimeRef");
  EXPECT_TRUE(named);
  EXPECT_EQ(m.path, policy::Path::kNone);
  // the host's interface is not written for pods that stay on the pod network: NCCL would
  // find no such interface and the validating webhook would refuse the TrainJob
  EXPECT_EQ(m.result.dump().find("NCCL_SOCKET_IFNAME"), std::string::npos) << m.result.dump();
  EXPECT_NE(m.result.dump().find("IPC_LOCK"), std::string::npos);
}

// The runtime's node container gets its GPUs through a DRA claim. Trainer drops a container's
// resources.claims whenever spec.trainer.resourcesPerNode is set (v2.0 to v2.2 replace the
// resources with it, v2.3.0 keeps only limits and requests), so a resourcesPerNode the webhook
// created would take the GPUs away: the resource the mode adds is for the runtime to carry.
TEST(MutateTrainJob, AResourcesPerNodeIsNotCreatedOverTheRuntimesDraClaims) {
  const json runtime = Yaml(Runtime(R"(                      resources:
                        limits: {cpu: "8"}
                        claims: [{name: gpus}]
                  resourceClaims: [{name: gpus, resourceClaimTemplateName: gpus}]
)"));
  const auto catalogue =
      catalogue::Catalogue::From(fixtures::YamlObjects(fixtures::kDeviceClasses + std::string(R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus, namespace: shared}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}]
)")),
                                 catalogue::Source::kInputs);
  json job = Yaml(Job("shared"));
  job["spec"]["trainer"].erase("resourcesPerNode");
  const Mutation m = MutateTrainJob(job, runtime, workload::ReadRuntimeRef(job, "default"),
                                    TestPolicy(), "default", catalogue);
  EXPECT_FALSE(m.result["spec"]["trainer"].contains("resourcesPerNode")) << m.result.dump();
  for (auto rule : {workload::ResourcesPerNode::kReplace, workload::ResourcesPerNode::kMerge}) {
    const json pod = Rendered(m.result, runtime, rule);
    EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["claims"], Yaml("[{name: gpus}]"))
        << pod.dump();
  }
  bool named = false;
  for (const auto& f : m.overrides)
    named = named || (f.rule == "trainer-runtime-no-rdma-path" &&
                      f.message.find("resources.claims") != std::string::npos &&
                      f.message.find("rdma/hca_shared_devices_a") != std::string::npos &&
                      f.message.find("ClusterTrainingRuntime 'torch'") != std::string::npos);
  EXPECT_TRUE(named) << m.overrides.size();
  // The claim is still what the pod's GPUs come from: the mutation added IPC_LOCK all the same.
  EXPECT_NE(m.result.dump().find("IPC_LOCK"), std::string::npos) << m.result.dump();
}

// A claim the TrainJob's own resourcesPerNode names is the user's to keep: the webhook sets the
// resources it adds one by one beside it.
TEST(MutateTrainJob, TheResourcesPerNodeClaimsOfTheTrainJobSurvive) {
  json job = Yaml(Job("sriov"));
  job["spec"]["trainer"]["resourcesPerNode"]["claims"] = Yaml("[{name: nics}]");
  const Mutation m = MutateJob(job, Yaml(Runtime()));
  const json& rpn = m.result["spec"]["trainer"]["resourcesPerNode"];
  EXPECT_EQ(rpn["limits"]["rdma/vf"], "1") << rpn.dump();
  EXPECT_EQ(rpn["claims"], Yaml("[{name: nics}]")) << rpn.dump();
}

// A resourcesPerNode of claims only replaces nothing on v2.0 to v2.2 until the webhook adds a
// limit to it: the new limits start as a copy of the runtime's, beside the user's claims, which
// are never overwritten.
TEST(MutateTrainJob, AClaimsOnlyResourcesPerNodeKeepsItsClaimsAndTheRuntimesLimits) {
  json job = Yaml(Job("sriov"));
  job["spec"]["trainer"]["resourcesPerNode"] = Yaml("{claims: [{name: nics}]}");
  const json runtime = Yaml(Runtime(R"(                      resources:
                        limits: {cpu: "8", nvidia.com/gpu: 8}
)"));
  const Mutation m = MutateJob(job, runtime);
  const json& rpn = m.result["spec"]["trainer"]["resourcesPerNode"];
  EXPECT_EQ(rpn["claims"], Yaml("[{name: nics}]")) << rpn.dump();
  EXPECT_EQ(rpn["limits"]["rdma/vf"], "1") << rpn.dump();
  const json& before =
      runtime.at(json::json_pointer("/spec/template/spec/replicatedJobs/0/template/spec/template/"
                                    "spec/containers/0/resources/limits"));
  ASSERT_EQ(before.size(), 2u);
  for (auto it = before.begin(); it != before.end(); ++it)
    EXPECT_EQ(rpn["limits"][it.key()], *it) << it.key() << " " << rpn.dump();
}

TEST(MutateTrainJob, OffNamespaceIsLeftAlone) {
  const json job = Yaml(Job("default"));
  const Mutation m = MutateJob(job, Yaml(Runtime()));
  EXPECT_EQ(m.patch.Json(), json::array());
  EXPECT_EQ(m.result, job);
}

}  // namespace
}  // namespace rw::mutate
