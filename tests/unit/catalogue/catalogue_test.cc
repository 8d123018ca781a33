// The catalogue holds the cluster objects the core looks up by group, kind, namespace and name,
// and keeps apart "listed and absent" from "never listed".
#include "rdma_webhook/catalogue/catalogue.h"

#include <gtest/gtest.h>

namespace rw::catalogue {
namespace {

using nlohmann::json;

json Object(const std::string& api_version, const std::string& kind, const std::string& name,
            const std::string& ns = "", json spec = json::object()) {
  json o = {{"apiVersion", api_version}, {"kind", kind}, {"metadata", {{"name", name}}}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  if (!spec.empty()) o["spec"] = std::move(spec);
  return o;
}

const json kDranetClass =
    Object("resource.k8s.io/v1", "DeviceClass", "dranet", "",
           {{"selectors", {{{"cel", {{"expression", "device.driver == \"dra.net\""}}}}}}});

TEST(Catalogue, EmptyKnowsNothingAndFindsNothing) {
  const Catalogue& c = Catalogue::Empty();
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.source(), Source::kNone);
  EXPECT_EQ(c.Find("resource.k8s.io", "DeviceClass", "", "dranet"), nullptr);
  EXPECT_FALSE(c.Knows("resource.k8s.io", "DeviceClass"));
}

TEST(Catalogue, FindsEachWatchedKindByGroupKindNamespaceAndName) {
  const std::vector<json> objects = {
      kDranetClass,
      Object("resource.k8s.io/v1", "ResourceClaimTemplate", "nics", "team-a"),
      Object("resource.k8s.io/v1", "ResourceClaim", "shared-nics", "team-a"),
      Object("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "sriov-rdma", "team-a"),
      Object("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", "torch-distributed"),
      Object("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "torch", "team-a"),
      Object("resource.nvidia.com/v1beta1", "ComputeDomain", "imex", "team-a"),
  };
  const Catalogue c = Catalogue::From(objects, Source::kCluster);
  EXPECT_EQ(c.size(), objects.size());
  EXPECT_EQ(c.source(), Source::kCluster);
  for (const auto& o : objects) {
    const std::string group(GroupOf(o["apiVersion"].get<std::string>()));
    const std::string kind = o["kind"], name = o["metadata"]["name"];
    const std::string ns = o["metadata"].value("namespace", "");
    const json* found = c.Find(group, kind, ns, name);
    ASSERT_NE(found, nullptr) << kind << " " << name;
    EXPECT_EQ(*found, o);
    EXPECT_EQ(c.FindEntry(group, kind, ns, name)->source, Source::kCluster);
  }
  // Another namespace, another name, another kind of the same name: not found.
  EXPECT_EQ(c.Find("resource.k8s.io", "ResourceClaimTemplate", "team-b", "nics"), nullptr);
  EXPECT_EQ(c.Find("resource.k8s.io", "ResourceClaimTemplate", "team-a", "gpus"), nullptr);
  EXPECT_EQ(c.Find("resource.k8s.io", "ResourceClaim", "team-a", "nics"), nullptr);
  EXPECT_EQ(c.Find("k8s.cni.cncf.io", "DeviceClass", "", "dranet"), nullptr);
}

TEST(Catalogue, ClusterScopedKindsIgnoreTheNamespace) {
  json with_ns = kDranetClass;
  with_ns["metadata"]["namespace"] = "ignored";  // an API server never sets one; a file may
  const Catalogue c = Catalogue::From({with_ns}, Source::kInputs);
  EXPECT_NE(c.Find("resource.k8s.io", "DeviceClass", "", "dranet"), nullptr);
  EXPECT_NE(c.Find("resource.k8s.io", "DeviceClass", "team-a", "dranet"), nullptr);
}

TEST(Catalogue, NamespacedObjectsWithoutANamespaceGoToTheDefaultOne) {
  const auto tmpl = Object("resource.k8s.io/v1", "ResourceClaimTemplate", "nics");
  const Catalogue c = Catalogue::From({tmpl}, Source::kInputs, {}, "team-a");
  EXPECT_NE(c.Find("resource.k8s.io", "ResourceClaimTemplate", "team-a", "nics"), nullptr);
  EXPECT_EQ(c.Find("resource.k8s.io", "ResourceClaimTemplate", "default", "nics"), nullptr);
}

TEST(Catalogue, IgnoresOtherKindsAndObjectsWithoutAName) {
  json no_name = kDranetClass;
  no_name["metadata"].erase("name");
  json number_name = kDranetClass;
  number_name["metadata"]["name"] = 3;
  const std::vector<json> objects = {
      Object("v1", "ConfigMap", "x", "team-a"),
      Object("apps/v1", "Deployment", "x", "team-a"),
      Object("example.com/v1", "DeviceClass", "dranet"),  // the kind, in another group
      no_name,
      number_name,
      json::array(),
      json("text"),
      {{"kind", "DeviceClass"}},
  };
  const Catalogue c = Catalogue::From(objects, Source::kInputs);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.source(), Source::kNone);
}

TEST(Catalogue, AcceptsEveryVersionOfAKindsGroup) {
  const auto beta = Object("resource.k8s.io/v1beta1", "DeviceClass", "old");
  const Catalogue c = Catalogue::From({beta}, Source::kCluster);
  EXPECT_NE(c.Find("resource.k8s.io", "DeviceClass", "", "old"), nullptr);
}

TEST(Catalogue, ListsContributeTheirItems) {
  const json list = {{"apiVersion", "v1"},
                     {"kind", "List"},
                     {"items", {kDranetClass, Object("v1", "Pod", "p", "team-a")}}};
  const json typed = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaimTemplateList"},
      {"items", {Object("resource.k8s.io/v1", "ResourceClaimTemplate", "nics", "team-a")}}};
  const Catalogue c = Catalogue::From({list, typed}, Source::kCluster);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_NE(c.Find("resource.k8s.io", "DeviceClass", "", "dranet"), nullptr);
  EXPECT_NE(c.Find("resource.k8s.io", "ResourceClaimTemplate", "team-a", "nics"), nullptr);
}

TEST(Catalogue, LaterDuplicatesReplaceEarlierOnes) {
  json newer = kDranetClass;
  newer["metadata"]["resourceVersion"] = "2";
  const Catalogue c = Catalogue::From({kDranetClass, newer}, Source::kCluster);
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(*c.Find("resource.k8s.io", "DeviceClass", "", "dranet"), newer);
}

TEST(Catalogue, KnowsOnlyTheKindsListedAndWhere) {
  const Catalogue c = Catalogue::From(
      {}, Source::kCluster,
      {{"resource.k8s.io", "DeviceClass", std::nullopt},
       {"resource.k8s.io", "ResourceClaimTemplate", std::vector<std::string>{"team-a"}}});
  EXPECT_EQ(c.source(), Source::kCluster);  // listed, even with nothing in it
  EXPECT_FALSE(c.empty());
  EXPECT_TRUE(c.Knows("resource.k8s.io", "DeviceClass"));
  EXPECT_TRUE(c.Knows("resource.k8s.io", "DeviceClass", "any"));  // cluster-scoped
  EXPECT_TRUE(c.Knows("resource.k8s.io", "ResourceClaimTemplate"));
  EXPECT_TRUE(c.Knows("resource.k8s.io", "ResourceClaimTemplate", "team-a"));
  EXPECT_FALSE(c.Knows("resource.k8s.io", "ResourceClaimTemplate", "team-b"));
  EXPECT_FALSE(c.Knows("k8s.cni.cncf.io", "NetworkAttachmentDefinition"));
  EXPECT_FALSE(c.Knows("k8s.cni.cncf.io", "NetworkAttachmentDefinition", "team-a"));
}

TEST(Catalogue, InputsKnowNoKindEvenWhenTheyHoldSome) {
  // A directory with one DeviceClass is not the cluster's list of them.
  const Catalogue c = Catalogue::From({kDranetClass}, Source::kInputs);
  EXPECT_NE(c.Find("resource.k8s.io", "DeviceClass", "", "dranet"), nullptr);
  EXPECT_FALSE(c.Knows("resource.k8s.io", "DeviceClass"));
  EXPECT_EQ(c.source(), Source::kInputs);
}

TEST(Catalogue, OverlaidInputsReplaceClusterObjectsAndKeepItsListings) {
  json edited = kDranetClass;
  edited["metadata"]["labels"] = {{"edited", "yes"}};
  const Catalogue cluster =
      Catalogue::From({kDranetClass, Object("resource.k8s.io/v1", "DeviceClass", "gpu")},
                      Source::kCluster, {{"resource.k8s.io", "DeviceClass", std::nullopt}});
  const Catalogue inputs = Catalogue::From(
      {edited, Object("resource.k8s.io/v1", "ResourceClaimTemplate", "nics", "team-a")},
      Source::kInputs);
  const Catalogue both = cluster.Overlaid(inputs);
  EXPECT_EQ(both.size(), 3u);
  EXPECT_EQ(both.source(), Source::kCluster);
  EXPECT_EQ(*both.Find("resource.k8s.io", "DeviceClass", "", "dranet"), edited);
  EXPECT_EQ(both.FindEntry("resource.k8s.io", "DeviceClass", "", "dranet")->source,
            Source::kInputs);
  EXPECT_EQ(both.FindEntry("resource.k8s.io", "DeviceClass", "", "gpu")->source, Source::kCluster);
  EXPECT_TRUE(both.Knows("resource.k8s.io", "DeviceClass"));
  EXPECT_FALSE(both.Knows("resource.k8s.io", "ResourceClaimTemplate"));
  // The originals are values: overlaying changed neither.
  EXPECT_EQ(*cluster.Find("resource.k8s.io", "DeviceClass", "", "dranet"), kDranetClass);
}

TEST(Catalogue, AllListsOneKindInKeyOrder) {
  const Catalogue c = Catalogue::From(
      {Object("resource.k8s.io/v1", "ResourceClaimTemplate", "b", "team-a"), kDranetClass,
       Object("resource.k8s.io/v1", "ResourceClaimTemplate", "a", "team-b"),
       Object("resource.k8s.io/v1", "ResourceClaimTemplate", "a", "team-a")},
      Source::kCluster);
  const auto all = c.All("resource.k8s.io", "ResourceClaimTemplate");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->object["metadata"]["name"], "a");
  EXPECT_EQ(all[0]->object["metadata"]["namespace"], "team-a");
  EXPECT_EQ(all[1]->object["metadata"]["name"], "b");
  EXPECT_EQ(all[2]->object["metadata"]["namespace"], "team-b");
  EXPECT_EQ(c.All("resource.k8s.io", "DeviceClass").size(), 1u);
  EXPECT_TRUE(c.All("k8s.cni.cncf.io", "NetworkAttachmentDefinition").empty());
}

TEST(Catalogue, GroupOfAnApiVersion) {
  EXPECT_EQ(GroupOf("resource.k8s.io/v1"), "resource.k8s.io");
  EXPECT_EQ(GroupOf("v1"), "");
  EXPECT_EQ(GroupOf(""), "");
}

}  // namespace
}  // namespace rw::catalogue
