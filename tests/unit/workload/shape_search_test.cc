// Pod templates of kinds without a row, found by their shape, within the documented bounds.
#include <gtest/gtest.h>

#include "../fixtures/yaml.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::workload {
namespace {

using fixtures::Yaml;

struct ShapeCase {
  const char* name;
  const char* manifest;
  std::vector<std::string> pointers;
};

class ShapeSearchTest : public testing::TestWithParam<ShapeCase> {};

TEST_P(ShapeSearchTest, FindsTheTemplatesInKeyOrder) {
  const auto found = FindPodTemplatesByShape(Yaml(GetParam().manifest));
  EXPECT_EQ(found.pointers, GetParam().pointers);
  EXPECT_FALSE(found.truncated);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ShapeSearchTest,
    testing::Values(
        ShapeCase{"nested_operator_fields",
                  "{apiVersion: x.example.com/v1, kind: Fleet, spec: {template: {spec: {head: "
                  "{template: {spec: {containers: [{name: a}]}}}, groups: [{template: {spec: "
                  "{containers: [{name: b}]}}}]}}}}",
                  {"/spec/template/spec/groups/0/template", "/spec/template/spec/head/template"}},
        ShapeCase{"object_itself", "{kind: Runtime, spec: {containers: [{name: engine}]}}", {""}},
        ShapeCase{"escaped_keys",
                  "{kind: X, spec: {roles: {a/b: {spec: {containers: [{name: c}]}}}}}",
                  {"/spec/roles/a~1b"}},
        ShapeCase{"unnamed_container_is_no_template",
                  "{kind: X, spec: {t: {spec: {containers: [{image: busybox}]}}}}",
                  {}},
        ShapeCase{"empty_containers_is_no_template",
                  "{kind: X, spec: {t: {spec: {containers: []}}}}",
                  {}},
        ShapeCase{
            "containers_not_a_list", "{kind: X, spec: {t: {spec: {containers: {a: 1}}}}}", {}},
        ShapeCase{"metadata_and_status_are_not_searched",
                  "{kind: X, metadata: {t: {spec: {containers: [{name: a}]}}}, status: {t: "
                  "{spec: {containers: [{name: b}]}}}}",
                  {}},
        ShapeCase{"nothing_below_a_template",
                  "{kind: X, spec: {t: {spec: {containers: [{name: a}], inner: {spec: "
                  "{containers: [{name: b}]}}}}}}",
                  {"/spec/t"}}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(ShapeSearch, StopsAtTheTemplateBoundAndSaysSo) {
  nlohmann::json object = {{"kind", "X"}, {"spec", {{"items", nlohmann::json::array()}}}};
  for (std::size_t i = 0; i < kMaxShapeTemplates + 3; ++i)
    object["spec"]["items"].push_back({{"spec", {{"containers", {{{"name", "c"}}}}}}});
  const auto found = FindPodTemplatesByShape(object);
  EXPECT_EQ(found.pointers.size(), kMaxShapeTemplates);
  EXPECT_TRUE(found.truncated);
}

TEST(ShapeSearch, StopsAtTheDepthBoundAndSaysSo) {
  nlohmann::json node = {{"spec", {{"containers", {{{"name", "c"}}}}}}};
  for (std::size_t i = 0; i < kMaxShapeDepth + 1; ++i) node = {{"x", node}};
  node["kind"] = "X";
  const auto found = FindPodTemplatesByShape(node);
  EXPECT_TRUE(found.pointers.empty());
  EXPECT_TRUE(found.truncated);
}

TEST(ShapeSearch, StopsAtTheVisitBoundAndSaysSo) {
  nlohmann::json object = {{"kind", "X"}, {"spec", {{"items", nlohmann::json::array()}}}};
  for (std::size_t i = 0; i < kMaxShapeVisits + 10; ++i)
    object["spec"]["items"].push_back(nlohmann::json::object({{"a", 1}}));
  object["spec"]["last"] = {{"spec", {{"containers", {{{"name", "c"}}}}}}};
  const auto found = FindPodTemplatesByShape(object);
  EXPECT_TRUE(found.truncated);
}

TEST(ShapeSearch, AKindWithoutARowIsReadThroughItsShape) {
  const auto w = Workload::Read(Yaml(R"(
apiVersion: example.com/v1
kind: InferencePool
spec:
  engine:
    template:
      spec:
        containers:
          - name: server
            resources: {limits: {nvidia.com/gpu: 8}}
)"),
                                policy::DefaultPolicy(), "default");
  EXPECT_EQ(w.kind_row, nullptr);
  ASSERT_EQ(w.templates.size(), 1u);
  EXPECT_EQ(w.templates[0].pointer, "/spec/engine/template");
  EXPECT_TRUE(w.templates[0].HasGpu());
  EXPECT_TRUE(w.TemplatesByShape());
}

TEST(ShapeSearch, AShapedObjectWithOtherTypesIsEvidenceNotAnError) {
  const auto w = Workload::Read(
      Yaml("{apiVersion: example.com/v1, kind: X, spec: {t: {spec: {containers: [{name: a, env: "
           "'A=1'}]}}}}"),
      policy::DefaultPolicy(), "default");
  EXPECT_TRUE(w.templates.empty());
  ASSERT_EQ(w.unread_templates.size(), 1u);
  EXPECT_NE(w.unread_templates[0].find("/spec/t/spec/containers/0/env"), std::string::npos);
}

TEST(ShapeSearch, AKindWithARowIsReadOnlyWhereItsRowSays) {
  const auto w = Workload::Read(
      Yaml("{apiVersion: batch/v1, kind: Job, spec: {other: {spec: {containers: [{name: a}]}}}}"),
      policy::DefaultPolicy(), "default");
  EXPECT_NE(w.kind_row, nullptr);
  EXPECT_TRUE(w.templates.empty());
}

struct RowCase {
  const char* name;
  const char* manifest;
  std::vector<std::string> pointers;
};

class NewKindRowTest : public testing::TestWithParam<RowCase> {};

TEST_P(NewKindRowTest, TheRowNamesTheTemplates) {
  const auto w = Workload::Read(Yaml(GetParam().manifest), policy::DefaultPolicy(), "default");
  ASSERT_NE(w.kind_row, nullptr);
  std::vector<std::string> pointers;
  for (const auto& t : w.templates) pointers.push_back(t.pointer);
  EXPECT_EQ(pointers, GetParam().pointers);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, NewKindRowTest,
    testing::Values(
        RowCase{"ray_service",
                "{apiVersion: ray.io/v1, kind: RayService, spec: {rayClusterConfig: "
                "{headGroupSpec: {template: {spec: {containers: [{name: h}]}}}, workerGroupSpecs: "
                "[{template: {spec: {containers: [{name: w}]}}}]}}}",
                {"/spec/rayClusterConfig/headGroupSpec/template",
                 "/spec/rayClusterConfig/workerGroupSpecs/0/template"}},
        RowCase{"ray_cluster_fleet",
                "{apiVersion: orchestration.aibrix.ai/v1alpha1, kind: RayClusterFleet, spec: "
                "{template: {spec: {headGroupSpec: {template: {spec: {containers: [{name: h}]}}}, "
                "workerGroupSpecs: [{template: {spec: {containers: [{name: w}]}}}]}}}}",
                {"/spec/template/spec/headGroupSpec/template",
                 "/spec/template/spec/workerGroupSpecs/0/template"}},
        RowCase{"role_based_group",
                "{apiVersion: workloads.x-k8s.io/v1alpha1, kind: RoleBasedGroup, spec: {roles: "
                "[{name: prefill, template: {spec: {containers: [{name: p}]}}}, {name: decode, "
                "template: {spec: {containers: [{name: d}]}}}]}}",
                {"/spec/roles/0/template", "/spec/roles/1/template"}}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace rw::workload
