// A NetworkAttachmentDefinition says which device resource its network needs (the resourceName
// annotation) and what its CNI config gives the pod; a config that cannot be read is unknown,
// never an error.
#include "rdma_webhook/catalogue/nad.h"

#include <gtest/gtest.h>

namespace rw::catalogue {
namespace {

using nlohmann::json;

json Nad(const std::string& resource, const json& config) {
  json nad = {{"apiVersion", "k8s.cni.cncf.io/v1"},
              {"kind", "NetworkAttachmentDefinition"},
              {"metadata", {{"name", "rail-0"}, {"namespace", "team-a"}}},
              {"spec", json::object()}};
  if (!resource.empty()) nad["metadata"]["annotations"][kNadResourceAnnotation] = resource;
  if (!config.is_null()) nad["spec"]["config"] = config;
  return nad;
}

TEST(ReadNad, AnSriovConfigIsAnRdmaNetworkThatTakesAVfOfItsResource) {
  const auto v = ReadNad(Nad("nvidia.com/rail0", R"({"cniVersion":"1.0.0","type":"sriov"})"));
  EXPECT_EQ(v.nics, NadNics::kRdma);
  EXPECT_EQ(v.resource, "nvidia.com/rail0");
  EXPECT_EQ(v.Types(), "sriov");
  EXPECT_TRUE(v.needs_device);
  EXPECT_EQ(v.name, "rail-0");
  EXPECT_EQ(v.ns, "team-a");
}

TEST(ReadNad, AConflistIsReadPluginByPlugin) {
  const auto ib = ReadNad(Nad(
      "rdma/ib_vf", R"({"cniVersion":"0.4.0","plugins":[{"type":"ib-sriov"},{"type":"tuning"}]})"));
  EXPECT_EQ(ib.nics, NadNics::kRdma);
  EXPECT_EQ(ib.Types(), "ib-sriov + tuning");
  EXPECT_TRUE(ib.needs_device);
  // macvlan alone is a netdev; the rdma plugin in its chain moves the RDMA device along.
  const auto macvlan = ReadNad(Nad("rdma/shared_a", R"({"plugins":[{"type":"macvlan"}]})"));
  EXPECT_EQ(macvlan.nics, NadNics::kNetdev);
  EXPECT_FALSE(macvlan.needs_device);
  const auto chained =
      ReadNad(Nad("rdma/shared_a", R"({"plugins":[{"type":"macvlan"},{"type":"rdma"}]})"));
  EXPECT_EQ(chained.nics, NadNics::kRdma);
  EXPECT_FALSE(chained.needs_device);  // macvlan takes no VF of the resource
}

TEST(ReadNad, AVfTheConfigNamesItselfOrNoResourceNeedsNoClaim) {
  EXPECT_FALSE(
      ReadNad(Nad("rdma/vf", R"({"type":"sriov","deviceID":"0000:3b:02.0"})")).needs_device);
  EXPECT_FALSE(ReadNad(Nad("", R"({"type":"sriov"})")).needs_device);
  EXPECT_TRUE(ReadNad(Nad("", R"({"type":"host-device","device":"ens3f0"})")).nics ==
              NadNics::kRdma);
}

TEST(ReadNad, OnlyAnInfinibandVfOrTheRdmaPluginSaysRdma) {
  // sriov-cni and host-device move a VF bound to vfio-pci (DPDK) with the same config.
  for (const char* config : {R"({"type":"sriov","vlan":100})", R"({"type":"host-device"})"}) {
    const auto v = ReadNad(Nad("intel.com/intel_sriov_dpdk", config));
    EXPECT_EQ(v.nics, NadNics::kRdma) << config;
    EXPECT_FALSE(v.rdma_stated) << config;
  }
  for (const char* config :
       {R"({"type":"ib-sriov"})", R"({"plugins":[{"type":"sriov"},{"type":"rdma"}]})",
        R"({"plugins":[{"type":"macvlan"},{"type":"rdma"}]})"})
    EXPECT_TRUE(ReadNad(Nad("rdma/vf", config)).rdma_stated) << config;
  EXPECT_FALSE(ReadNad(Nad("", R"({"type":"macvlan"})")).rdma_stated);
}

struct Unreadable {
  const char* name;
  json config;
  const char* problem;
};

class UnreadableNadTest : public testing::TestWithParam<Unreadable> {};

TEST_P(UnreadableNadTest, IsUnknownWithTheReason) {
  const auto v = ReadNad(Nad("rdma/vf", GetParam().config));
  EXPECT_EQ(v.nics, NadNics::kUnknown);
  EXPECT_FALSE(v.needs_device);
  EXPECT_TRUE(v.types.empty());
  EXPECT_NE(v.problem.find(GetParam().problem), std::string::npos) << v.problem;
  EXPECT_EQ(v.resource, "rdma/vf");  // the annotation is read all the same
}

INSTANTIATE_TEST_SUITE_P(
    Configs, UnreadableNadTest,
    testing::Values(
        Unreadable{"absent", json(), "no spec.config"},
        Unreadable{"not_a_string", json::object(), "not a string"},
        Unreadable{"not_json", R"({"type": "sriov",)", "not JSON"},
        Unreadable{"a_list", "[1, 2]", "not a JSON object"},
        Unreadable{"no_type", R"({"cniVersion":"1.0.0"})", "names no type"},
        Unreadable{"plugin_without_type", R"({"plugins":[{"type":"sriov"},{}]})", "names no type"},
        Unreadable{"plugins_not_a_list", R"({"plugins":{"type":"sriov"}})", "not a list"},
        Unreadable{"no_plugins", R"({"plugins":[]})", "no plugins"},
        Unreadable{"too_long", std::string(kMaxNadConfigBytes + 1, ' '), "longer than"},
        Unreadable{"deeply_nested", std::string(10000, '['), "not JSON"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(ReadNad, APluginChainPastTheBoundIsUnknown) {
  std::string plugins;
  for (std::size_t i = 0; i <= kMaxNadPlugins; ++i)
    plugins += std::string(plugins.empty() ? "" : ",") + R"({"type":"tuning"})";
  EXPECT_EQ(ReadNad(Nad("", "{\"plugins\":[" + plugins + "]}")).nics, NadNics::kUnknown);
}

}  // namespace
}  // namespace rw::catalogue
