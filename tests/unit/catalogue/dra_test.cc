// The typed DRA views read the driver and attributes a class's CEL selectors require, and the
// requests, constraints and config of a claim spec, as resource.k8s.io/v1 writes them.
#include "rdma_webhook/catalogue/dra.h"

#include <gtest/gtest.h>

namespace rw::catalogue {
namespace {

using nlohmann::json;

json Selectors(std::initializer_list<std::string> expressions) {
  json out = json::array();
  for (const auto& e : expressions) out.push_back({{"cel", {{"expression", e}}}});
  return out;
}

struct SelectorCase {
  const char* name;
  std::vector<std::string> expressions;
  std::vector<std::string> drivers;
  std::vector<std::string> attributes;
  bool uncertain;
};

class ReadSelectorsTest : public testing::TestWithParam<SelectorCase> {};

TEST_P(ReadSelectorsTest, ReadsWhatEveryDeviceMustHave) {
  const auto& c = GetParam();
  json selectors = json::array();
  for (const auto& e : c.expressions) selectors.push_back({{"cel", {{"expression", e}}}});
  const DeviceRequirements r = ReadSelectors(selectors);
  EXPECT_EQ(r.drivers, c.drivers);
  EXPECT_EQ(r.attributes, c.attributes);
  EXPECT_EQ(r.uncertain, c.uncertain);
}

INSTANTIATE_TEST_SUITE_P(
    Cel, ReadSelectorsTest,
    testing::Values(
        SelectorCase{"Driver", {R"(device.driver == "dra.net")"}, {"dra.net"}, {}, false},
        SelectorCase{"DriverSingleQuotes",
                     {"device.driver == 'gpu.nvidia.com'"},
                     {"gpu.nvidia.com"},
                     {},
                     false},
        SelectorCase{"DriverOnTheRight", {R"("dra.net" == device.driver)"}, {"dra.net"}, {}, false},
        SelectorCase{"DriverAndAttributeInOne",
                     {R"(device.driver == "dra.net" && device.attributes["dra.net"].rdma == true)"},
                     {"dra.net"},
                     {"rdma"},
                     false},
        SelectorCase{
            "AttributeBare", {R"(device.attributes["dra.net"].rdma)"}, {}, {"rdma"}, false},
        SelectorCase{"AttributeIndexed",
                     {R"(device.attributes["x.io"]["rdmaCapable"] == true)"},
                     {},
                     {"rdmaCapable"},
                     false},
        SelectorCase{"AttributeNegated", {R"(!device.attributes["dra.net"].rdma)"}, {}, {}, false},
        SelectorCase{
            "AttributeFalse", {R"(device.attributes["dra.net"].rdma == false)"}, {}, {}, false},
        SelectorCase{
            "AttributeNotTrue", {R"(device.attributes["dra.net"].rdma != true)"}, {}, {}, false},
        SelectorCase{"AttributeComparedWithAString",
                     {R"(device.attributes["dra.net"].ifName == "eth1")"},
                     {},
                     {},
                     false},
        SelectorCase{"TwoSelectorsBothHold",
                     {R"(device.driver == "dra.net")", R"(device.attributes["dra.net"].rdma)"},
                     {"dra.net"},
                     {"rdma"},
                     false},
        SelectorCase{"DisjunctionRequiresNothing",
                     {R"(device.driver == "dra.net" || device.driver == "other.io")"},
                     {},
                     {},
                     true},
        SelectorCase{"ConditionalRequiresNothing",
                     {R"(device.attributes["dra.net"].rdma ? true : false)"},
                     {},
                     {},
                     true}),
    [](const auto& test_case) { return std::string(test_case.param.name); });

TEST(ReadDeviceClass, ReadsNameSelectorsAndExtendedResourceName) {
  const json c = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "DeviceClass"},
      {"metadata", {{"name", "sriov-port1"}}},
      {"spec",
       {{"selectors", Selectors({R"(device.driver == "sriovnetwork.k8snetworkplumbingwg.io")"})},
        {"extendedResourceName", "example.com/sriov-port1"}}}};
  const DeviceClassView v = ReadDeviceClass(c);
  EXPECT_EQ(v.name, "sriov-port1");
  EXPECT_EQ(v.requirements.drivers,
            std::vector<std::string>{"sriovnetwork.k8snetworkplumbingwg.io"});
  EXPECT_EQ(v.extended_resource_name, "example.com/sriov-port1");
  EXPECT_EQ(ImplicitExtendedResourceName("gpu"), "deviceclass.resource.kubernetes.io/gpu");
}

TEST(ReadDeviceClass, WithoutSpecReadsNoRequirement) {
  const DeviceClassView v = ReadDeviceClass({{"metadata", {{"name", "x"}}}});
  EXPECT_TRUE(v.requirements.drivers.empty());
  EXPECT_TRUE(v.extended_resource_name.empty());
}

TEST(ReadClaimSpec, ReadsExactlyFirstAvailableConstraintsAndConfig) {
  const json spec = json::parse(R"({
    "devices": {
      "requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 8}},
        {"name": "nic", "exactly": {"deviceClassName": "dranet", "allocationMode": "All",
                                    "selectors": [{"cel": {"expression":
                                      "device.attributes[\"dra.net\"].rdma == true"}}]}},
        {"name": "fallback", "firstAvailable": [
          {"name": "eight", "deviceClassName": "dranet", "count": 8},
          {"name": "four", "deviceClassName": "dranet", "count": 4}]}
      ],
      "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
      "config": [{"requests": ["nic"], "opaque": {"driver": "dra.net",
                                                  "parameters": {"interface": {"name": "eth1"}}}}]
    }})");
  const ClaimSpecView v = ReadClaimSpec(spec);
  ASSERT_EQ(v.requests.size(), 3u);
  EXPECT_EQ(v.requests[0].name, "gpu");
  ASSERT_EQ(v.requests[0].alternatives.size(), 1u);
  EXPECT_EQ(v.requests[0].alternatives[0].device_class, "gpu.nvidia.com");
  EXPECT_EQ(v.requests[0].alternatives[0].count, 8);
  EXPECT_TRUE(v.requests[1].alternatives[0].all);
  EXPECT_EQ(v.requests[1].alternatives[0].requirements.attributes,
            std::vector<std::string>{"rdma"});
  ASSERT_EQ(v.requests[2].alternatives.size(), 2u);
  EXPECT_EQ(v.requests[2].alternatives[1].name, "four");
  EXPECT_EQ(v.requests[2].alternatives[1].count, 4);
  ASSERT_EQ(v.constraints.size(), 1u);
  EXPECT_EQ(v.constraints[0].requests, (std::vector<std::string>{"gpu", "nic"}));
  EXPECT_EQ(v.constraints[0].match_attribute, "resource.kubernetes.io/pcieRoot");
  ASSERT_EQ(v.config.size(), 1u);
  EXPECT_EQ(v.config[0].driver, "dra.net");
  ASSERT_NE(v.config[0].parameters, nullptr);
  EXPECT_EQ((*v.config[0].parameters)["interface"]["name"], "eth1");
}

TEST(ReadClaimSpec, ReadsV1beta1RequestsWithTheClassBesideTheName) {
  const json spec = {
      {"devices", {{"requests", {{{"name", "nic"}, {"deviceClassName", "dranet"}}}}}}};
  const ClaimSpecView v = ReadClaimSpec(spec);
  ASSERT_EQ(v.requests.size(), 1u);
  ASSERT_EQ(v.requests[0].alternatives.size(), 1u);
  EXPECT_EQ(v.requests[0].alternatives[0].device_class, "dranet");
}

TEST(ReadClaimObject, ATemplateHoldsItsSpecOneLevelDown) {
  const json tmpl = {{"kind", "ResourceClaimTemplate"},
                     {"spec", {{"spec", {{"devices", {{"requests", {{{"name", "a"}}}}}}}}}}};
  const json claim = {{"kind", "ResourceClaim"},
                      {"spec", {{"devices", {{"requests", {{{"name", "b"}}}}}}}}};
  ASSERT_TRUE(ReadClaimObject(tmpl));
  EXPECT_EQ(ReadClaimObject(tmpl)->requests.at(0).name, "a");
  ASSERT_TRUE(ReadClaimObject(claim));
  EXPECT_EQ(ReadClaimObject(claim)->requests.at(0).name, "b");
  EXPECT_FALSE(ReadClaimObject({{"kind", "ResourceClaim"}}));
  // A request without a class (a malformed or newer shape) has no alternative to read.
  const json no_class = {{"devices", {{"requests", {{{"name", "c"}}}}}}};
  EXPECT_TRUE(ReadClaimSpec(no_class).requests.at(0).alternatives.empty());
}

}  // namespace
}  // namespace rw::catalogue
