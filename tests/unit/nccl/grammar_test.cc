#include <gtest/gtest.h>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {
namespace {

struct IfnameCase {
  const char* name;
  const char* spec;
  const char* interface;
  bool selected;
};

class SocketIfnameTest : public testing::TestWithParam<IfnameCase> {};

TEST_P(SocketIfnameTest, Selects) {
  const auto& c = GetParam();
  EXPECT_EQ(SocketIfname::Parse(c.spec).Selects(c.interface), c.selected)
      << c.spec << " vs " << c.interface;
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, SocketIfnameTest,
    testing::Values(IfnameCase{"prefix_matches_itself", "eth1", "eth1", true},
                    IfnameCase{"prefix_matches_longer_name", "eth1", "eth10", true},
                    IfnameCase{"prefix_does_not_match_other", "eth1", "eth0", false},
                    IfnameCase{"exact_matches_only_itself", "=eth1", "eth1", true},
                    IfnameCase{"exact_rejects_longer", "=eth1", "eth10", false},
                    IfnameCase{"list_matches_second", "ib,eth1", "eth1", true},
                    IfnameCase{"exclusion_excludes", "^lo,docker", "lo", false},
                    IfnameCase{"exclusion_keeps_others", "^lo,docker", "eth0", true},
                    IfnameCase{"exclusion_exact", "^=eth", "eth0", true},
                    IfnameCase{"spaces_in_list", " eth0 , eth1", "eth1", true},
                    // name:port (NCCL's parseStringList): sockets match the name alone
                    IfnameCase{"port_suffix_is_not_the_name", "eth1:0", "eth1", true},
                    IfnameCase{"exact_with_port", "=eth1:2", "eth10", false},
                    IfnameCase{"port_alone_names_nothing", ":0,eth1", "eth0", false}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(SocketIfname, SelectedAmongPodInterfaces) {
  const std::vector<std::string> ifaces{"eth0", "lo", "eth1", "eth10"};
  EXPECT_EQ(SocketIfname::Parse("eth1").SelectedAmong(ifaces),
            (std::vector<std::string>{"eth1", "eth10"}));
  EXPECT_EQ(SocketIfname::Parse("=eth1").SelectedAmong(ifaces), (std::vector<std::string>{"eth1"}));
  EXPECT_TRUE(SocketIfname::Parse("bond").SelectedAmong(ifaces).empty());
}

struct ValueCase {
  const char* value;
  bool valid;
  const char* mentions;  // part of the problem text, when invalid
};

TEST(IbDisable, DecimalIntegersAreValid) {
  for (const char* v : {"0", "1", "2", "-1"}) EXPECT_TRUE(CheckIbDisable(v).valid) << v;
  EXPECT_EQ(*CheckIbDisable("2").number, 2);
}

TEST(IbDisable, TrueIsInvalidAndSaysIbStaysEnabled) {
  const auto c = CheckIbDisable("true");
  EXPECT_FALSE(c.valid);
  EXPECT_NE(c.problem.find("reads 0"), std::string::npos) << c.problem;
  EXPECT_NE(c.problem.find("ENABLED"), std::string::npos) << c.problem;
}

TEST(IbDisable, HexAndOctalSpellingsAreInvalidButReadLikeStrtoll) {
  EXPECT_FALSE(CheckIbDisable("0x1").valid);
  EXPECT_EQ(NcclReadsInteger("0x1"), 1);
  EXPECT_FALSE(CheckIbDisable("08").valid);
  EXPECT_EQ(NcclReadsInteger("08"), 0);  // octal prefix, then an invalid digit
  EXPECT_FALSE(CheckIbDisable("").valid);
  EXPECT_FALSE(CheckIbDisable("yes").valid);
}

TEST(GidIndex, Grammar) {
  for (const char* v : {"0", "3", "-1", "15"}) EXPECT_TRUE(CheckGidIndex(v).valid) << v;
  for (const char* v : {"-2", "auto", "3 ", "03", "1.5", ""})
    EXPECT_FALSE(CheckGidIndex(v).valid) << v;
}

TEST(GdrLevel, Grammar) {
  // every path type name up to SYS across releases (src/graph/topo.cc's topoPathTypeStr), and
  // whatever starts with a digit (strtol base 0, clamped: a hex number, a long one)
  for (const char* v : {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "0",
                        "5", "0x2", "99999999999999999999999"})
    EXPECT_TRUE(CheckGdrLevel(v).valid) << v;
  EXPECT_EQ(CheckGdrLevel("5").number, 5);
  for (const char* v : {"phb", "NODE1", "-1", "", "Sys", "NET", "DIS", " 2"})
    EXPECT_FALSE(CheckGdrLevel(v).valid) << v;
  EXPECT_NE(CheckGdrLevel("phb").problem.find("silently ignores"), std::string::npos);
}

TEST(NetworksAnnotation, CommaFormWithNamespacesAndDefaultNames) {
  const auto a = NetworksAnnotation::Parse("net-a, ns2/net-b@eth1,net-c", "team", {});
  ASSERT_TRUE(a.error.empty()) << a.error;
  EXPECT_FALSE(a.json_form);
  ASSERT_EQ(a.attachments.size(), 3u);
  EXPECT_EQ(a.attachments[0].ns, "team");
  EXPECT_EQ(a.attachments[0].interface, "net1");
  EXPECT_EQ(a.attachments[1].ns, "ns2");
  EXPECT_EQ(a.attachments[1].interface, "eth1");
  EXPECT_TRUE(a.attachments[1].explicit_interface);
  EXPECT_EQ(a.attachments[2].interface, "net3");  // named items do not shift the numbering
}

// The rules compare attachments with one another: at most kMaxAttachments items are read, in
// either form, and more is an error that names the bound.
TEST(NetworksAnnotation, ReadsAtMostTheBoundOfItems) {
  const auto list = [](std::size_t n, bool json) {
    std::string v = json ? "[" : "";
    for (std::size_t i = 0; i < n; ++i) {
      if (i) v += ",";
      v += json ? "{\"name\":\"n" + std::to_string(i) + "\"}" : "n" + std::to_string(i);
    }
    return json ? v + "]" : v;
  };
  for (const bool json : {false, true}) {
    const auto fits = NetworksAnnotation::Parse(list(kMaxAttachments, json), "team", {});
    EXPECT_TRUE(fits.error.empty()) << fits.error;
    EXPECT_EQ(fits.attachments.size(), kMaxAttachments);
    const auto over = NetworksAnnotation::Parse(list(kMaxAttachments + 1, json), "team", {});
    EXPECT_NE(over.error.find("more than 1024 networks"), std::string::npos) << over.error;
    EXPECT_TRUE(over.attachments.empty());
  }
}

TEST(NetworksAnnotation, DefaultNetworksAreNotCounted) {
  const auto a = NetworksAnnotation::Parse("tke-bridge,rdma-net", "team", {"tke-bridge"});
  ASSERT_EQ(a.attachments.size(), 2u);
  EXPECT_TRUE(a.attachments[0].default_network);
  EXPECT_EQ(a.attachments[1].interface, "net1");
}

TEST(NetworksAnnotation, JsonForm) {
  const auto a = NetworksAnnotation::Parse(
      R"([{"name":"sriov-rdma","namespace":"ns","interface":"eth1"},{"name":"b"}])", "team", {});
  ASSERT_TRUE(a.error.empty()) << a.error;
  EXPECT_TRUE(a.json_form);
  ASSERT_EQ(a.attachments.size(), 2u);
  EXPECT_EQ(a.attachments[0].ns, "ns");
  EXPECT_EQ(a.attachments[1].interface, "net2");
}

TEST(NetworksAnnotation, MalformedValuesAreErrors) {
  for (const char* v : {"a,,b", "[{\"nam\":\"x\"}]", "{\"name\":\"x\"}", "a b", "ns/a/b"})
    EXPECT_FALSE(NetworksAnnotation::Parse(v, "team", {}).error.empty()) << v;
}

TEST(NetworksAnnotation, WhatMultusTrimsOrLeavesEmptyIsNoError) {
  // Multus trims each part and reads an empty namespace or interface as absent.
  const auto a = NetworksAnnotation::Parse("net1 @eth1, ns2/ net2\r, /net3, net4@", "team", {});
  ASSERT_TRUE(a.error.empty()) << a.error;
  ASSERT_EQ(a.attachments.size(), 4u);
  EXPECT_EQ(a.attachments[0].interface, "eth1");
  EXPECT_EQ(a.attachments[1].ns, "ns2");
  EXPECT_EQ(a.attachments[1].name, "net2");
  EXPECT_EQ(a.attachments[2].ns, "team");
  EXPECT_EQ(a.attachments[3].interface, "net4");
  EXPECT_FALSE(a.attachments[3].explicit_interface);
}

TEST(NetworksAnnotation, ParseErrorsAttachNothingLaterErrorsKeepTheItems) {
  const auto parse = NetworksAnnotation::Parse("net1,Net2", "team", {});
  EXPECT_EQ(parse.error_stage, "parse");
  EXPECT_TRUE(parse.attachments.empty());
  const auto iface = NetworksAnnotation::Parse("net1,net2@net1", "team", {});
  EXPECT_EQ(iface.error_stage, "interface");
  EXPECT_EQ(iface.attachments.size(), 2u);
  EXPECT_EQ(NetworksAnnotation::Parse("   ", "team", {}).error_stage, "lookup");
  EXPECT_TRUE(NetworksAnnotation::Parse("", "team", {}).error.empty());
}

TEST(NetworksAnnotation, JsonInterfaceKeyIsTheOneTheUserWrote) {
  const auto a = NetworksAnnotation::Parse(
      R"([{"name":"a","interfaceRequest":"eth1"},{"Name":"b","Interface":"eth2"},)"
      R"({"name":"c","interface":"","interfaceRequest":"eth3"},{"name":"d","interface":null}])",
      "team", {});
  ASSERT_TRUE(a.error.empty()) << a.error;
  ASSERT_EQ(a.attachments.size(), 4u);
  EXPECT_EQ(a.attachments[0].interface, "eth1");
  EXPECT_EQ(a.attachments[0].interface_key, "interfaceRequest");
  EXPECT_EQ(a.attachments[1].name, "b");
  EXPECT_EQ(a.attachments[1].interface_key, "Interface");
  EXPECT_EQ(a.attachments[2].interface, "eth3");
  EXPECT_EQ(a.attachments[2].interface_key, "interfaceRequest");
  EXPECT_EQ(a.attachments[3].interface, "net4");
  EXPECT_EQ(a.attachments[3].interface_key, "");
  EXPECT_FALSE(a.attachments[3].explicit_interface);
}

TEST(NetworksAnnotation, JsonNestedDeeperThanGoAcceptsIsAnErrorWithoutDeepRecursion) {
  // Go's decoder accepts 10000 levels (list, item, then 9998 here); the 200000-level value
  // must not exhaust the stack either.
  const auto nested = [](std::size_t n) {
    return R"([{"name":"a","x":)" + std::string(n, '[') + std::string(n, ']') + "}]";
  };
  EXPECT_EQ(NetworksAnnotation::Parse(nested(9998), "team", {}).error, "");
  EXPECT_EQ(NetworksAnnotation::Parse(nested(9999), "team", {}).error_stage, "parse");
  EXPECT_EQ(NetworksAnnotation::Parse(nested(200000), "team", {}).error_stage, "parse");
}

TEST(LauncherArgs, MpirunAndExportInScripts) {
  const auto found = ParseLauncherArgs(
      {"mpirun", "-np", "16", "-x", "NCCL_SOCKET_IFNAME=eth1", "-x", "NCCL_DEBUG", "-x",
       "NCCL_IB_HCA==mlx5_0", "bash", "-c", "export NCCL_IB_DISABLE=1 FOO='a b'; python train.py"});
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].name, "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(found[0].value, "eth1");
  EXPECT_EQ(found[1].value, "=mlx5_0");
  EXPECT_EQ(found[2].name, "NCCL_IB_DISABLE");
  EXPECT_EQ(found[2].origin, "export");
  EXPECT_EQ(found[3].value, "a b");
}

TEST(IbHca, ReadsTheExclusionAndExactPrefixesAndThePorts) {
  const auto v = IbHca::Parse("^=mlx5_0:1,,mlx5_1");
  EXPECT_TRUE(v.exclude);
  EXPECT_TRUE(v.exact);
  ASSERT_EQ(v.items.size(), 2u);
  EXPECT_EQ(v.items[0].name, "mlx5_0");
  EXPECT_EQ(v.items[0].port, "1");
  EXPECT_EQ(v.items[1].name, "mlx5_1");
  EXPECT_FALSE(v.items[1].port.has_value());
}

TEST(IbHca, ParticularDevicesAreNumberedOrExactNamesNeverAnExclusion) {
  EXPECT_TRUE(IbHca::Parse("mlx5_0,mlx5_1").NamesParticularDevices());
  EXPECT_TRUE(IbHca::Parse("mlx5_3:1").NamesParticularDevices());
  EXPECT_TRUE(IbHca::Parse("=mlx5_bond").NamesParticularDevices());
  EXPECT_TRUE(IbHca::Parse("bnxt_re0").NamesParticularDevices());
  EXPECT_FALSE(IbHca::Parse("mlx5").NamesParticularDevices());
  EXPECT_FALSE(IbHca::Parse("mlx5_,ibp").NamesParticularDevices());
  EXPECT_FALSE(IbHca::Parse("^mlx5_0").NamesParticularDevices());
  EXPECT_FALSE(IbHca::Parse("").NamesParticularDevices());
}

TEST(IbHca, KeepsAtMostItsBoundOfItems) {
  std::string value;
  for (std::size_t i = 0; i < IbHca::kMaxItems + 10; ++i)
    value += "mlx5_" + std::to_string(i) + ",";
  EXPECT_EQ(IbHca::Parse(value).items.size(), IbHca::kMaxItems);
}

}  // namespace
}  // namespace rw::nccl
