// The gids module on fake sysfs trees built in a temporary directory.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "rdma_webhook/gids/gid_table.h"

namespace rw::gids {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLinkLocal = "fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f";
constexpr const char* kIpv4Mapped = "0000:0000:0000:0000:0000:ffff:c0a8:010a";   // 192.168.1.10
constexpr const char* kIpv4Mapped2 = "0000:0000:0000:0000:0000:ffff:0a00:0005";  // 10.0.0.5
constexpr const char* kIpv6Global = "2001:0db8:0000:0000:0000:0000:0000:0042";
constexpr const char* kEmpty = "0000:0000:0000:0000:0000:0000:0000:0000";
constexpr const char* kV1 = "IB/RoCE v1";
constexpr const char* kV2 = "RoCE v2";

// A sysfs tree under a fresh temporary directory, removed with the fixture.
class FakeSysfs {
 public:
  FakeSysfs() {
    std::string templ = (fs::temp_directory_path() / "rw-gids-XXXXXX").string();
    root_ = ::mkdtemp(templ.data());
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  const fs::path& root() const { return root_; }
  fs::path ClassDir() const { return root_ / "sys" / "class" / "infiniband"; }
  fs::path PortDir(const std::string& dev, int port) const {
    return ClassDir() / dev / "ports" / std::to_string(port);
  }

  void AddPort(const std::string& dev, int port, const std::string& link_layer) {
    fs::create_directories(PortDir(dev, port) / "gids");
    fs::create_directories(PortDir(dev, port) / "gid_attrs" / "types");
    fs::create_directories(PortDir(dev, port) / "gid_attrs" / "ndevs");
    Write(PortDir(dev, port) / "link_layer", link_layer + "\n");
  }

  // A populated slot; an empty `netdev` leaves the ndevs file out (as InfiniBand has none).
  void AddGid(const std::string& dev, int port, int index, const std::string& gid,
              const std::string& type, const std::string& netdev) {
    const std::string i = std::to_string(index);
    Write(PortDir(dev, port) / "gids" / i, gid + "\n");
    Write(PortDir(dev, port) / "gid_attrs" / "types" / i, type + "\n");
    if (!netdev.empty()) Write(PortDir(dev, port) / "gid_attrs" / "ndevs" / i, netdev + "\n");
  }

  // An empty slot as some kernels show it: all zeros, no attributes.
  void AddZeroSlot(const std::string& dev, int port, int index) {
    Write(PortDir(dev, port) / "gids" / std::to_string(index), std::string(kEmpty) + "\n");
  }

  static void Write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }

 private:
  fs::path root_;
};

// The real reader, except for the files listed in `errors`, which fail with that errno.
FileReader FailingReader(std::map<fs::path, int> errors) {
  return [errors = std::move(errors)](const fs::path& file) {
    if (auto it = errors.find(file); it != errors.end()) return FileRead{"", it->second};
    return ReadSysfsFile(file);
  };
}

// The usual RoCE port: v1 and v2 for the link-local GID, then v1 and v2 for the IPv4 address.
void AddTypicalRocePort(FakeSysfs& sys, const std::string& dev, int port,
                        const std::string& netdev) {
  sys.AddPort(dev, port, "Ethernet");
  sys.AddGid(dev, port, 0, kLinkLocal, kV1, netdev);
  sys.AddGid(dev, port, 1, kLinkLocal, kV2, netdev);
  sys.AddGid(dev, port, 2, kIpv4Mapped, kV1, netdev);
  sys.AddGid(dev, port, 3, kIpv4Mapped, kV2, netdev);
}

TEST(MappedIpv4, Table) {
  struct Case {
    const char* gid;
    const char* ipv4;
  } cases[] = {
      {kIpv4Mapped, "192.168.1.10"},
      {kIpv4Mapped2, "10.0.0.5"},
      {"0000:0000:0000:0000:0000:FFFF:C0A8:010A", "192.168.1.10"},
      {kLinkLocal, ""},
      {kIpv6Global, ""},
      {kEmpty, ""},
      {"0000:0000:0000:0000:0000:fffe:c0a8:010a", ""},
      {"0000:0000:0000:0000:0001:ffff:c0a8:010a", ""},
      {"not a gid", ""},
      {"", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(MappedIpv4(c.gid), c.ipv4) << c.gid;
}

TEST(VersionColumn, Table) {
  EXPECT_EQ(VersionColumn("RoCE v2"), "v2");
  EXPECT_EQ(VersionColumn("IB/RoCE v1"), "v1");
  EXPECT_EQ(VersionColumn(""), "");
  EXPECT_EQ(VersionColumn("something else"), "");
}

TEST(ReadGidTable, TypicalRocePortRecommendsRoceV2Ipv4) {
  FakeSysfs sys;
  AddTypicalRocePort(sys, "mlx5_0", 1, "eth1");
  GidTable t = ReadGidTable(sys.root());
  ASSERT_EQ(t.gids.size(), 4u);
  EXPECT_TRUE(t.notes.empty()) << t.notes.front();
  EXPECT_EQ(t.gids[0].gid, kLinkLocal);
  EXPECT_EQ(t.gids[0].type, kV1);
  EXPECT_EQ(t.gids[0].ipv4, "");
  EXPECT_EQ(t.gids[0].netdev, "eth1");
  EXPECT_EQ(t.gids[3].index, 3);
  EXPECT_EQ(t.gids[3].ipv4, "192.168.1.10");
  EXPECT_EQ(t.gids[3].type, kV2);
  ASSERT_EQ(t.ports.size(), 1u);
  EXPECT_EQ(t.ports[0].link_layer, "Ethernet");
  ASSERT_EQ(t.recommended.size(), 1u);
  EXPECT_EQ(t.recommended[0].device, "mlx5_0");
  EXPECT_EQ(t.recommended[0].port, 1);
  EXPECT_EQ(t.recommended[0].index, 3);
}

TEST(ReadGidTable, LowestRoceV2Ipv4IndexWinsAndIndexesSortNumerically) {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", 1, "Ethernet");
  sys.AddGid("mlx5_0", 1, 10, kIpv4Mapped2, kV2, "eth1");
  sys.AddGid("mlx5_0", 1, 7, kIpv4Mapped, kV2, "eth1");
  sys.AddGid("mlx5_0", 1, 2, kIpv6Global, kV2, "eth1");  // v2 but IPv6: not a candidate
  sys.AddGid("mlx5_0", 1, 1, kIpv4Mapped, kV1, "eth1");  // IPv4 but v1: not a candidate
  GidTable t = ReadGidTable(sys.root());
  ASSERT_EQ(t.gids.size(), 4u);
  EXPECT_EQ(t.gids[0].index, 1);
  EXPECT_EQ(t.gids[1].index, 2);
  EXPECT_EQ(t.gids[2].index, 7);
  EXPECT_EQ(t.gids[3].index, 10);
  ASSERT_EQ(t.recommended.size(), 1u);
  EXPECT_EQ(t.recommended[0].index, 7);
}

TEST(ReadGidTable, ZeroSlotsAreSkipped) {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", 1, "Ethernet");
  sys.AddGid("mlx5_0", 1, 0, kLinkLocal, kV1, "eth1");
  sys.AddZeroSlot("mlx5_0", 1, 1);
  sys.AddZeroSlot("mlx5_0", 1, 2);
  sys.AddGid("mlx5_0", 1, 3, kIpv4Mapped, kV2, "eth1");
  for (int i = 4; i < 16; ++i) sys.AddZeroSlot("mlx5_0", 1, i);
  GidTable t = ReadGidTable(sys.root());
  ASSERT_EQ(t.gids.size(), 2u);
  EXPECT_EQ(t.gids[0].index, 0);
  EXPECT_EQ(t.gids[1].index, 3);
  EXPECT_TRUE(t.notes.empty());
  ASSERT_EQ(t.recommended.size(), 1u);
  EXPECT_EQ(t.recommended[0].index, 3);
}

TEST(ReadGidTable, EinvalSlotsAreEmptyNotErrors) {
  FakeSysfs sys;
  AddTypicalRocePort(sys, "mlx5_0", 1, "eth1");
  sys.AddZeroSlot("mlx5_0", 1, 4);
  const fs::path gids = sys.PortDir("mlx5_0", 1) / "gids";
  GidTable t =
      ReadGidTable(sys.root(), FailingReader({{gids / "3", EINVAL}, {gids / "4", EINVAL}}));
  ASSERT_EQ(t.gids.size(), 3u);
  EXPECT_EQ(t.gids.back().index, 2);
  EXPECT_TRUE(t.notes.empty());
  EXPECT_TRUE(t.recommended.empty());  // index 2 is IPv4 but RoCE v1
}

TEST(ReadGidTable, DevicesAndPortsSortNumerically) {
  FakeSysfs sys;
  AddTypicalRocePort(sys, "mlx5_10", 1, "eth10");
  AddTypicalRocePort(sys, "mlx5_2", 2, "eth2b");
  AddTypicalRocePort(sys, "mlx5_2", 1, "eth2a");
  AddTypicalRocePort(sys, "mlx5_0", 1, "eth0");
  GidTable t = ReadGidTable(sys.root());
  ASSERT_EQ(t.ports.size(), 4u);
  EXPECT_EQ(t.ports[0].device, "mlx5_0");
  EXPECT_EQ(t.ports[1].device, "mlx5_2");
  EXPECT_EQ(t.ports[1].port, 1);
  EXPECT_EQ(t.ports[2].device, "mlx5_2");
  EXPECT_EQ(t.ports[2].port, 2);
  EXPECT_EQ(t.ports[3].device, "mlx5_10");
  ASSERT_EQ(t.gids.size(), 16u);
  EXPECT_EQ(t.gids[8].device, "mlx5_2");
  EXPECT_EQ(t.gids[8].port, 2);
  EXPECT_EQ(t.gids[8].netdev, "eth2b");
  ASSERT_EQ(t.recommended.size(), 4u);
  for (const Recommendation& r : t.recommended) EXPECT_EQ(r.index, 3) << r.device;
  EXPECT_EQ(t.recommended[3].device, "mlx5_10");
}

TEST(ReadGidTable, InfinibandPortGetsNoRecommendation) {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", 1, "InfiniBand");
  sys.AddGid("mlx5_0", 1, 0, "fe80:0000:0000:0000:248a:0703:00f8:1234", kV1, "");
  sys.AddGid("mlx5_0", 1, 1, kIpv4Mapped, kV2, "");  // not meaningful on IB: still no advice
  const fs::path ndevs = sys.PortDir("mlx5_0", 1) / "gid_attrs" / "ndevs";
  GidTable t =
      ReadGidTable(sys.root(), FailingReader({{ndevs / "0", EINVAL}, {ndevs / "1", EINVAL}}));
  ASSERT_EQ(t.gids.size(), 2u);
  EXPECT_EQ(t.gids[0].netdev, "");
  EXPECT_EQ(t.ports[0].link_layer, "InfiniBand");
  EXPECT_TRUE(t.recommended.empty());
  EXPECT_TRUE(t.notes.empty());
}

TEST(ReadGidTable, EthernetPortWithoutCandidateGetsNoRecommendation) {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", 1, "Ethernet");
  sys.AddGid("mlx5_0", 1, 0, kLinkLocal, kV1, "eth1");
  sys.AddGid("mlx5_0", 1, 1, kLinkLocal, kV2, "eth1");
  AddTypicalRocePort(sys, "mlx5_1", 1, "eth2");
  GidTable t = ReadGidTable(sys.root());
  ASSERT_EQ(t.recommended.size(), 1u);
  EXPECT_EQ(t.recommended[0].device, "mlx5_1");
}

TEST(ReadGidTable, UnreadableEntriesBecomeNotesAndTheRestIsRead) {
  FakeSysfs sys;
  AddTypicalRocePort(sys, "mlx5_0", 1, "eth1");
  AddTypicalRocePort(sys, "mlx5_1", 1, "eth2");
  // A directory where a GID file should be: read() fails with EISDIR.
  fs::create_directories(sys.PortDir("mlx5_0", 1) / "gids" / "5");
  const fs::path p0 = sys.PortDir("mlx5_0", 1);
  const fs::path p1 = sys.PortDir("mlx5_1", 1);
  GidTable t = ReadGidTable(sys.root(), FailingReader({
                                            {p0 / "gids" / "1", EACCES},
                                            {p0 / "gid_attrs" / "types" / "3", EIO},
                                            {p1 / "link_layer", EACCES},
                                        }));
  // mlx5_0: 0, 2, 3 (1 unreadable, 5 a directory); mlx5_1: all four.
  ASSERT_EQ(t.gids.size(), 7u);
  EXPECT_EQ(t.gids[0].index, 0);
  EXPECT_EQ(t.gids[1].index, 2);
  EXPECT_EQ(t.gids[2].index, 3);
  EXPECT_EQ(t.gids[2].type, "");  // unknown type: not a RoCE v2 candidate
  EXPECT_EQ(t.gids[2].ipv4, "192.168.1.10");
  ASSERT_EQ(t.notes.size(), 4u);
  auto noted = [&](const fs::path& file) {
    for (const std::string& n : t.notes) {
      if (n.find(file.string()) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(noted(p0 / "gids" / "1"));
  EXPECT_TRUE(noted(p0 / "gids" / "5"));
  EXPECT_TRUE(noted(p0 / "gid_attrs" / "types" / "3"));
  EXPECT_TRUE(noted(p1 / "link_layer"));
  EXPECT_EQ(t.ports[1].link_layer, "");
  // Neither port can be recommended: mlx5_0 has no known RoCE v2 IPv4 GID, mlx5_1's link
  // layer is unknown.
  EXPECT_TRUE(t.recommended.empty());
}

TEST(ReadGidTable, MissingAttributesAreUnknownNotNoted) {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", 1, "Ethernet");
  FakeSysfs::Write(sys.PortDir("mlx5_0", 1) / "gids" / "0", std::string(kIpv4Mapped) + "\n");
  GidTable t = ReadGidTable(sys.root());
  ASSERT_EQ(t.gids.size(), 1u);
  EXPECT_EQ(t.gids[0].type, "");
  EXPECT_EQ(t.gids[0].netdev, "");
  EXPECT_TRUE(t.notes.empty());
}

TEST(ReadGidTable, MissingRootGivesEmptyListsAndANote) {
  GidTable t = ReadGidTable("/nonexistent/rw-gids-root");
  EXPECT_TRUE(t.gids.empty());
  EXPECT_TRUE(t.ports.empty());
  EXPECT_TRUE(t.recommended.empty());
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_NE(t.notes[0].find("/nonexistent/rw-gids-root"), std::string::npos);
}

TEST(ReadGidTable, NoDevicesGivesEmptyListsAndANote) {
  FakeSysfs sys;
  fs::create_directories(sys.ClassDir());
  GidTable t = ReadGidTable(sys.root());
  EXPECT_TRUE(t.gids.empty());
  EXPECT_TRUE(t.ports.empty());
  EXPECT_EQ(t.notes.size(), 1u);
}

TEST(ReadGidTable, NonNumericEntriesAreIgnored) {
  FakeSysfs sys;
  AddTypicalRocePort(sys, "mlx5_0", 1, "eth1");
  FakeSysfs::Write(sys.PortDir("mlx5_0", 1) / "gids" / "README", "x\n");
  fs::create_directories(sys.ClassDir() / "mlx5_0" / "ports" / "lost+found");
  GidTable t = ReadGidTable(sys.root());
  EXPECT_EQ(t.gids.size(), 4u);
  EXPECT_EQ(t.ports.size(), 1u);
  EXPECT_TRUE(t.notes.empty());
}

TEST(Recommend, IsPureAndPerEthernetPort) {
  std::vector<GidEntry> gids = {
      {"mlx5_0", 1, 5, kIpv4Mapped, "192.168.1.10", kV2, "eth1"},
      {"mlx5_0", 1, 4, kIpv4Mapped2, "10.0.0.5", kV2, "eth1"},
      {"mlx5_0", 2, 3, kIpv4Mapped, "192.168.1.10", kV2, "eth2"},
      {"mlx5_1", 1, 3, kIpv4Mapped, "192.168.1.10", kV2, ""},
  };
  std::vector<PortInfo> ports = {
      {"mlx5_0", 1, "Ethernet"}, {"mlx5_0", 2, "Ethernet"}, {"mlx5_1", 1, "InfiniBand"}};
  std::vector<Recommendation> r = Recommend(gids, ports);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].device, "mlx5_0");
  EXPECT_EQ(r[0].port, 1);
  EXPECT_EQ(r[0].index, 4);
  EXPECT_EQ(r[1].port, 2);
  EXPECT_EQ(r[1].index, 3);
  EXPECT_TRUE(Recommend({}, ports).empty());
  EXPECT_TRUE(Recommend(gids, {}).empty());
}

TEST(FormatText, ShowGidsColumnsThenRecommendations) {
  FakeSysfs sys;
  AddTypicalRocePort(sys, "mlx5_0", 1, "eth1");
  sys.AddPort("mlx5_1", 1, "InfiniBand");
  sys.AddGid("mlx5_1", 1, 0, "fe80:0000:0000:0000:248a:0703:00f8:1234", kV1, "");
  sys.AddPort("mlx5_2", 1, "Ethernet");
  sys.AddGid("mlx5_2", 1, 0, kLinkLocal, kV2, "eth3");
  std::string text = FormatText(ReadGidTable(sys.root()));

  std::istringstream in(text);
  std::string header;
  std::getline(in, header);
  std::istringstream words(header);
  std::vector<std::string> columns{std::istream_iterator<std::string>(words), {}};
  EXPECT_EQ(columns,
            (std::vector<std::string>{"DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "NETDEV"}));
  EXPECT_NE(
      text.find("mlx5_0  1     3      " + std::string(kIpv4Mapped) + "  192.168.1.10  v2   eth1\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("mlx5_0  1     0      " + std::string(kLinkLocal)), std::string::npos)
      << text;
  EXPECT_NE(text.find("n_gids_found=6\n"), std::string::npos) << text;
  EXPECT_NE(text.find("mlx5_0 port 1: 3 (192.168.1.10 on eth1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("mlx5_2 port 1: none"), std::string::npos) << text;
  EXPECT_EQ(text.find("mlx5_1 port 1:"), std::string::npos) << text;  // IB: no advice
  // The recommendations come last.
  EXPECT_GT(text.find("Recommended"), text.find("n_gids_found"));
}

TEST(FormatText, EmptyTableHasHeaderAndCount) {
  std::string text = FormatText(GidTable{});
  EXPECT_EQ(text.rfind("DEV", 0), 0u);
  EXPECT_NE(text.find("n_gids_found=0\n"), std::string::npos);
  EXPECT_EQ(text.find("Recommended"), std::string::npos);
}

TEST(ToJson, ContractShape) {
  FakeSysfs sys;
  AddTypicalRocePort(sys, "mlx5_0", 1, "eth1");
  nlohmann::json j = ToJson(ReadGidTable(sys.root()));
  ASSERT_EQ(j.size(), 2u);
  ASSERT_EQ(j.at("gids").size(), 4u);
  EXPECT_EQ(j["gids"][3], (nlohmann::json{{"device", "mlx5_0"},
                                          {"port", 1},
                                          {"index", 3},
                                          {"gid", kIpv4Mapped},
                                          {"ipv4", "192.168.1.10"},
                                          {"type", "RoCE v2"},
                                          {"netdev", "eth1"}}));
  EXPECT_EQ(j["gids"][0]["ipv4"], "");
  EXPECT_EQ(j.at("recommended"),
            (nlohmann::json::array({{{"device", "mlx5_0"}, {"port", 1}, {"index", 3}}})));
}

TEST(ToJson, EmptyTableHasEmptyLists) {
  nlohmann::json j = ToJson(GidTable{});
  EXPECT_EQ(j, (nlohmann::json{{"gids", nlohmann::json::array()},
                               {"recommended", nlohmann::json::array()}}));
}

}  // namespace
}  // namespace rw::gids
