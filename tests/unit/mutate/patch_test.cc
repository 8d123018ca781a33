// The webhook answers with Patch::text() as it is, and `mutate -o patch` prints it: it must be
// the bytes nlohmann's dump() writes for the same operations, which is what the API server and
// the CLI's users read.
#include "rdma_webhook/mutate/patch.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;
using rw::mutate::Patch;

TEST(Patch, StartsEmptyAsAnEmptyArray) {
  const Patch patch;
  EXPECT_TRUE(patch.empty());
  EXPECT_EQ(patch.size(), 0u);
  EXPECT_EQ(patch.text(), "[]");
  EXPECT_EQ(patch.Json(), json::array());
}

TEST(Patch, WritesWhatDumpWritesForTheSameOperations) {
  const json env = {{"name", "NCCL_IB_HCA"}, {"value", "mlx5_0:1"}};
  const json nested = {{"capabilities", {{"add", {"IPC_LOCK"}}}}, {"n", -3}, {"f", 0.5}};
  const json text = "caf\u00e9 \"quoted\" \\ tab\t";
  Patch patch;
  patch.Record("add", "/spec/containers/0/env/3", &env);
  patch.Record("replace", "/metadata/annotations/k8s.v1.cni.cncf.io~1networks", &text);
  patch.Record("add", "/spec/containers/0/securityContext", &nested);
  patch.Record("remove", "/spec/runtimePatches/0", nullptr);

  json expected = json::array();
  expected.push_back({{"op", "add"}, {"path", "/spec/containers/0/env/3"}, {"value", env}});
  expected.push_back({{"op", "replace"},
                      {"path", "/metadata/annotations/k8s.v1.cni.cncf.io~1networks"},
                      {"value", text}});
  expected.push_back(
      {{"op", "add"}, {"path", "/spec/containers/0/securityContext"}, {"value", nested}});
  expected.push_back({{"op", "remove"}, {"path", "/spec/runtimePatches/0"}});
  EXPECT_EQ(patch.size(), 4u);
  EXPECT_FALSE(patch.empty());
  EXPECT_EQ(patch.text(), expected.dump());
  EXPECT_EQ(patch.Json(), expected);
}

// A value dump() refuses (a string that is not UTF-8) throws dump()'s error and leaves the
// operations recorded before it whole: the text stays an array of exactly those.
TEST(Patch, AValueThatIsNotUtf8ThrowsAndKeepsTheOperationsBefore) {
  Patch patch;
  const json good = "1";
  patch.Record("add", "/a", &good);
  const json bad = {{"name", "X"}, {"value", std::string("\xff\xfe")}};
  EXPECT_THROW(patch.Record("add", "/b", &bad), json::type_error);
  EXPECT_THROW(patch.Record("add", std::string("/\xff"), &good), json::type_error);
  EXPECT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch.text(), R"([{"op":"add","path":"/a","value":"1"}])");
  patch.Record("remove", "/c", nullptr);
  EXPECT_EQ(patch.Json().size(), 2u);
}

}  // namespace
