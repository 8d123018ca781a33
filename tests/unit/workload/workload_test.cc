// Wrong types never crash the reader: they become a ManifestError naming the field's pointer.
#include <gtest/gtest.h>

#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::workload {
namespace {

nlohmann::json Yaml(const std::string& text) { return *codec::ParseStream(text).at(0).value; }

struct TypeCase {
  const char* name;
  const char* manifest;
  const char* pointer;
};

class WrongTypeTest : public testing::TestWithParam<TypeCase> {};

TEST_P(WrongTypeTest, NamesThePointer) {
  try {
    Workload::Read(Yaml(GetParam().manifest), policy::DefaultPolicy(), "default");
    FAIL() << "accepted";
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.pointer(), GetParam().pointer) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Manifests, WrongTypeTest,
    testing::Values(
        TypeCase{"env_string",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: x}]}}",
                 "/spec/containers/0/env"},
        TypeCase{"containers_map", "{apiVersion: v1, kind: Pod, spec: {containers: {}}}",
                 "/spec/containers"},
        TypeCase{"env_value_number",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, env: [{name: X, value: "
                 "1}]}]}}",
                 "/spec/containers/0/env/0/value"},
        TypeCase{"limit_not_quantity",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, resources: {limits: "
                 "{cpu: lots}}}]}}",
                 "/spec/containers/0/resources/limits/cpu"},
        TypeCase{"annotation_number",
                 "{apiVersion: batch/v1, kind: Job, spec: {template: {metadata: {annotations: "
                 "{a/b: 1}}}}}",
                 "/spec/template/metadata/annotations/a~1b"},
        TypeCase{"host_network_string", "{apiVersion: v1, kind: Pod, spec: {hostNetwork: 'yes'}}",
                 "/spec/hostNetwork"},
        TypeCase{"template_list", "{apiVersion: batch/v1, kind: Job, spec: {template: []}}",
                 "/spec/template"},
        TypeCase{"caps_add_string",
                 "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, securityContext: "
                 "{capabilities: {add: IPC_LOCK}}}]}}",
                 "/spec/containers/0/securityContext/capabilities/add"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(Workload, TemplatesOfEveryReplicaSpecInDocumentOrder) {
  const auto job = Yaml(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j, namespace: team}
spec:
  pytorchReplicaSpecs:
    Master: {template: {spec: {containers: [{name: t}]}}}
    Worker: {template: {spec: {containers: [{name: t}]}}}
)");
  const auto w = Workload::Read(job, policy::DefaultPolicy(), "default");
  ASSERT_EQ(w.templates.size(), 2u);
  EXPECT_EQ(w.templates[0].pointer, "/spec/pytorchReplicaSpecs/Master/template");
  EXPECT_EQ(w.templates[1].pointer, "/spec/pytorchReplicaSpecs/Worker/template");
  EXPECT_EQ(w.ns, "team");
}

TEST(Workload, GpuContainersAreThoseRequestingAGpuResource) {
  const auto pod = Yaml(
      "{apiVersion: v1, kind: Pod, spec: {containers: [{name: side}, "
      "{name: t, resources: {requests: {nvidia.com/gpu: '2'}}}]}}");
  const auto w = Workload::Read(pod, policy::DefaultPolicy(), "default");
  ASSERT_EQ(w.templates.size(), 1u);
  EXPECT_FALSE(w.templates[0].containers[0].gpu);
  EXPECT_TRUE(w.templates[0].containers[1].gpu);
  EXPECT_EQ(w.templates[0].containers[1].Claim("nvidia.com/gpu"), 2);
}

// Both CRI runtimes upper-case a name and read ALL in any case; only CRI-O strips a CAP_
// prefix (containerd's CRI writes CAP_CAP_IPC_LOCK), so a prefixed name is not IPC_LOCK
// everywhere: HasOnlyPrefixedCapability tells the rules and the mutator it was asked for.
TEST(Workload, CapabilitiesCompareWithoutCaseAndAllIncludesIpcLockButAPrefixIsNotTheName) {
  const auto pod = Yaml(
      "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, securityContext: {capabilities: "
      "{add: [cap_ipc_lock]}}}, {name: b, securityContext: {capabilities: {add: [all]}}}, "
      "{name: c, securityContext: {capabilities: {add: [ipc_lock]}}}, "
      "{name: d, securityContext: {capabilities: {add: [CAP_ALL]}}}]}}");
  const auto w = Workload::Read(pod, policy::DefaultPolicy(), "default");
  const auto& c = w.templates[0].containers;
  EXPECT_FALSE(c[0].HasCapability("IPC_LOCK"));
  EXPECT_TRUE(c[0].HasOnlyPrefixedCapability("IPC_LOCK"));
  EXPECT_TRUE(c[1].HasCapability("IPC_LOCK"));
  EXPECT_FALSE(c[1].HasOnlyPrefixedCapability("IPC_LOCK"));
  EXPECT_TRUE(c[2].HasCapability("IPC_LOCK"));
  EXPECT_FALSE(c[2].HasOnlyPrefixedCapability("IPC_LOCK"));
  EXPECT_FALSE(c[3].HasCapability("IPC_LOCK"));  // CAP_ALL is ALL on neither runtime
  EXPECT_FALSE(c[3].HasOnlyPrefixedCapability("IPC_LOCK"));
}

TEST(Workload, QuantitiesRoundUp) {
  const auto pod = Yaml(
      "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, resources: {limits: "
      "{x/a: 500m, x/b: 1k, x/c: 2, x/d: '1Ki'}}}]}}");
  const auto w = Workload::Read(pod, policy::DefaultPolicy(), "default");
  const auto& c = w.templates[0].containers[0];
  EXPECT_EQ(c.Claim("x/a"), 1);
  EXPECT_EQ(c.Claim("x/b"), 1000);
  EXPECT_EQ(c.Claim("x/c"), 2);
  EXPECT_EQ(c.Claim("x/d"), 1024);
}

TEST(Workload, NotAWorkloadHasNoTemplates) {
  const auto w = Workload::Read(Yaml("{apiVersion: v1, kind: ConfigMap, data: {a: b}}"),
                                policy::DefaultPolicy(), "default");
  EXPECT_EQ(w.kind_row, nullptr);
  EXPECT_TRUE(w.templates.empty());
}

}  // namespace
}  // namespace rw::workload
