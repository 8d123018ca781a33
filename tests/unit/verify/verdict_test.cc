// Verdicts on logs written for these tests from NCCL's and the plugins' format strings (the
// release each format belongs to is named in the test); hosts, addresses and numbers are made
// up. They cover formats the shared corpus does not.
#include <gtest/gtest.h>

#include <string>

#include "rdma_webhook/verify/manifest_tie.h"
#include "rdma_webhook/verify/reader.h"

namespace rw::verify {
namespace {

Verdict Of(const std::string& text) { return VerifyText(text, "test.log"); }

TEST(Verdict, RocePathWithGdrAndBandwidthIsOk) {  // 2.26 formats
  const auto v =
      Of("tr-0:40:40 [0] NCCL INFO Bootstrap: Using eth0:10.9.0.4<0>\n"
         "tr-0:40:90 [0] NCCL INFO NET/IB : Using [0]mlx5_3:1/RoCE [RO]; OOB eth0:10.9.0.4<0>\n"
         "tr-0:40:90 [0] NCCL INFO Using network IB\n"
         "tr-0:40:90 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 "
         "MNNVL 0\n"
         "tr-0:40:90 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
         "tr-0:40:90 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
         "tr-1:41:41 [0] NCCL INFO Bootstrap: Using eth0:10.9.0.5<0>\n"
         "tr-1:41:91 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.\n"
         "# Avg bus bandwidth    : 21.5\n");
  EXPECT_EQ(v.outcome, Outcome::kOk);
  EXPECT_EQ(v.cause, Cause::kNone);
  EXPECT_EQ(v.inter_node, "RoCE");
  EXPECT_EQ(v.gdr, Gdr::kOn);
  EXPECT_EQ(v.nodes, 2);
  EXPECT_EQ(v.gid_index, 3);
  EXPECT_FALSE(v.proofs.empty());
}

TEST(Verdict, InitOnlyIsNeverOk) {
  const auto v =
      Of("a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
         "a:1:1 [0] NCCL INFO Using network IB\n"
         "b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>\n"
         "a:1:1 [0] NCCL INFO comm 0x5 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n");
  EXPECT_EQ(v.inter_node, "IB");
  EXPECT_EQ(v.outcome, Outcome::kUnknown);
}

TEST(Verdict, EfaThroughAwsOfiNccl114) {  // aws-ofi-nccl 1.14 lower-case "provider", net Libfabric
  const auto v =
      Of("p-0:7:7 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)\n"
         "p-0:7:7 [0] NCCL INFO Using network Libfabric\n"
         "p-0:7:7 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Libfabric/0/GDRDMA\n"
         "p-1:9:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [receive] via NET/Libfabric/0/GDRDMA\n"
         "# Avg bus bandwidth    : 40.1\n");
  EXPECT_EQ(v.inter_node, "EFA");
  EXPECT_EQ(v.gdr, Gdr::kOn);
  EXPECT_EQ(v.outcome, Outcome::kOk);
}

TEST(Verdict, OfiWithoutEfaDeviceFallsBackToSocket) {
  const auto v =
      Of("p-0:7:7 [0] NCCL INFO NET/OFI OFI fi_getinfo() call failed: No data available\n"
         "p-0:7:7 [0] NCCL INFO Using network Socket\n"
         "p-0:7:7 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL "
         "0\n");
  EXPECT_EQ(v.inter_node, "Socket");
  EXPECT_EQ(v.outcome, Outcome::kFellBack);
  EXPECT_EQ(v.cause, Cause::kNoRdmaDevice);
}

TEST(Verdict, Nccl230MisspelledLibibverbsMessage) {  // "Count not open" is in 2.30's source
  const auto v = Of(
      "w-0:3:3 [0] NCCL INFO Count not open libibverbs.so\n"
      "w-0:3:3 [0] NCCL INFO Count not open libibverbs.so.1\n"
      "w-0:3:3 [0] NCCL INFO Failed to initialize NET plugin IB\n"
      "w-0:3:3 [0] NCCL INFO Initialized NET plugin Socket\n"
      "w-0:3:3 [0] NCCL INFO Using network Socket\n"
      "w-0:3:3 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0\n");
  EXPECT_EQ(v.outcome, Outcome::kFellBack);
  EXPECT_EQ(v.cause, Cause::kLibibverbsMissing);
}

TEST(Verdict, SingleNodeIsNeverAFallback) {
  const auto v = Of(
      "one:5:5 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
      "one:5:5 [0] NCCL INFO Using network Socket\n"
      "one:5:5 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n");
  EXPECT_TRUE(v.single_node);
  EXPECT_EQ(v.cause, Cause::kNotApplicable);
  EXPECT_NE(v.outcome, Outcome::kFellBack);
  EXPECT_EQ(v.inter_node, "none (single node)");
}

TEST(Verdict, MultiNodeNvlinkIsNotIntraNode) {  // 2.21+ P2P/MNNVL with nNodes 2
  const auto v = Of(
      "gb-0:4:4 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 1\n"
      "gb-0:4:4 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] via P2P/MNNVL\n"
      "# Avg bus bandwidth    : 700.2\n");
  EXPECT_FALSE(v.single_node);
  EXPECT_EQ(v.inter_node, "MNNVL");
  EXPECT_EQ(v.outcome, Outcome::kOk);
}

TEST(Verdict, TcpxoPluginAbortIsAnError) {
  const auto v =
      Of("a3m-0:10:10 [0] NCCL INFO NET/FasTrak 2025-01-01T00:00:00Z: Initializing network "
         "FasTrak, version: 1.0.15\n"
         "a3m-0:10:10 [0] NCCL INFO NET/FasTrak 2025-01-01T00:00:01Z: RxDM not ready after 1 "
         "seconds (status: UNAVAILABLE), retrying... (timeout 30 s)\n"
         "a3m-0:10:10 [0] tcpdirect_plugin/fastrak_offload/init.cc:95 NCCL WARN Timeout: RxDM not "
         "ready on a3m-0 after 30 seconds: UNAVAILABLE\n");
  EXPECT_EQ(v.outcome, Outcome::kError);
  EXPECT_EQ(v.cause, Cause::kPluginFailed);
}

TEST(Verdict, Completion229FormatStatus12IsFabric) {  // 2.29: status=NAME(N)
  const auto v =
      Of("\nn-1:8:8 [2] transport/net_ib/p2p.cc:1200 NCCL WARN NET/IB: Got completion from peer "
         "10.5.0.2<4242> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 "
         " localGid ::ffff:10.5.0.1 remoteGids ::ffff:10.5.0.2 hca mlx5_2\n");
  EXPECT_EQ(v.outcome, Outcome::kError);
  EXPECT_EQ(v.cause, Cause::kFabricUnreachable);
  EXPECT_EQ(v.inter_node, "RoCE");
}

TEST(Verdict, ModifyQpInvalidArgumentIsGidIndex) {  // 2.12 ibvwrap.cc macro
  const auto v =
      Of("r-0:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE [RO]; OOB net1:192.168.5.2<0>\n"
         "r-0:2:9 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 1.\n"
         "\nr-0:2:9 [0] misc/ibvwrap.cc:252 NCCL WARN Call to ibv_modify_qp failed with error "
         "Invalid argument\n");
  EXPECT_EQ(v.outcome, Outcome::kError);
  EXPECT_EQ(v.cause, Cause::kGidIndex);
  EXPECT_EQ(v.gid_index, 1);
}

TEST(Verdict, MemlockShowsAsVerbsResource) {
  const auto v =
      Of("\nm-0:2:2 [0] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr_iova2 failed with error "
         "Cannot allocate memory\n");
  EXPECT_EQ(v.cause, Cause::kVerbsResource);
}

TEST(Verdict, ExplicitIbDisableAndNcclNet) {
  EXPECT_EQ(Of("a:1:1 [0] NCCL INFO NCCL_NET set by environment to Socket\n"
               "a:1:1 [0] NCCL INFO Using network Socket\n"
               "b:2:2 [0] NCCL INFO Bootstrap : Using eth0:10.1.1.2<0>\n"
               "a:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.1.1.1<0>\n")
                .cause,
            Cause::kIbDisabled);
  // NCCL_IB_DISABLE=0 is no finding.
  EXPECT_NE(Of("a:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n").cause,
            Cause::kIbDisabled);
}

TEST(Verdict, HcaFilterNeedsTheSetToLine) {
  const std::string tail =
      "a:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "a:1:1 [0] NCCL INFO Using network Socket\n"
      "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n";
  EXPECT_EQ(Of(tail).cause, Cause::kNoRdmaDevice);
  EXPECT_EQ(Of("a:1:1 [0] NCCL INFO NCCL_IB_HCA set to =mlx5_9\n" + tail).cause, Cause::kHcaFilter);
}

TEST(Verdict, EmptyDeviceListOf224IsNoProofOfIb) {  // 2.24+ prints Using with no device
  const auto v = Of(
      "d-0:1:1 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1\n"
      "d-0:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "d-0:1:1 [0] NCCL INFO NET/IB : Using [RO]; OOB eth0:10.2.0.1<0>\n"
      "d-0:1:1 [0] NCCL INFO Using network Socket\n"
      "d-0:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n");
  EXPECT_EQ(v.cause, Cause::kHcaFilter);
  EXPECT_TRUE(v.devices.empty());
}

TEST(Verdict, MergedDevicesOf220) {
  const auto v =
      Of("f-0:1:1 [0] NCCL INFO NET/IB : Using [0]={[0] mlx5_0:1/RoCE, [1] mlx5_1:1/RoCE} [RO]; "
         "OOB eth0:10.3.0.1<0>\n");
  EXPECT_EQ(v.devices.size(), 2u);
}

TEST(Verdict, Nccl24SocketLineIsNotAFallback) {  // 2.4 prints NET/Socket : Using for every rank
  const auto v =
      Of("m:1:1 [0] NCCL INFO NET/Socket : Using [0]ib0:10.4.0.1<0>\n"
         "m:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.4.0.1<0>\n"
         "m:1:1 [0] NCCL INFO Ring 00 : 4 -> 0 [receive] via NET/IB/0\n"
         "w:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.4.0.2<0>\n");
  EXPECT_EQ(v.inter_node, "IB");
  EXPECT_NE(v.outcome, Outcome::kFellBack);
}

TEST(Verdict, SocketWithoutAnyReasonIsUnknownNotAGuess) {
  const auto v = Of(
      "a:1:1 [0] NCCL INFO Using network Socket\n"
      "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n");
  EXPECT_EQ(v.outcome, Outcome::kUnknown);
}

TEST(Verdict, NoNcclOutputAtAll) {
  const auto v = Of("starting training\nepoch 1\n");
  EXPECT_EQ(v.outcome, Outcome::kUnknown);
  EXPECT_EQ(v.inter_node, "unknown");
}

TEST(Verdict, InsufficientRdmaResourceEvent) {
  const auto v =
      Of("Warning  FailedScheduling  2m  default-scheduler  0/4 nodes are available: 4 "
         "Insufficient rdma/vf.\n");
  EXPECT_EQ(v.outcome, Outcome::kError);
  EXPECT_EQ(v.cause, Cause::kK8sDevicePlugin);
}

TEST(Verdict, HostnamesThatRepeatAreKeyedOnTheirAddress) {
  const auto v =
      Of("ubuntu:1:1 [0] NCCL INFO Bootstrap : Using ens5:192.168.1.1<0>\n"
         "ubuntu:2:2 [0] NCCL INFO Bootstrap : Using ens5:192.168.1.2<0>\n");
  EXPECT_EQ(v.nodes, 2);
}

TEST(Verdict, GluedHostIsFoldedIntoItsProcess) {
  const auto v = Of(
      "pod-a:388:519 [1] NCCL INFO comm 0x3a rank 1 nranks 4 cudaDev 1 nvmlpod-a:390:390 [3] NCCL "
      "INFO cudaDriverVersion 12040\n"
      "pod-a:390:390 [3] NCCL INFO Bootstrap : Using eth0:10.1.0.9<0>\n");
  ASSERT_EQ(v.processes.size(), 2u);
  for (const auto& p : v.processes) EXPECT_EQ(p.host, "pod-a");
}

TEST(Verdict, OfiNoDeviceComesBeforeThePluginsOwnFailures) {  // aws-ofi-nccl 1.13+
  const auto v =
      Of("e-0:5:5 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.13.2-aws\n"
         "e-0:5:5 [0] NCCL INFO NET/OFI OFI fi_getinfo() call failed: No data available\n"
         "e-0:5:5 [0] NCCL INFO NET/OFI Failed to initialize rdma protocol\n"
         "e-0:5:5 [0] NCCL INFO NET/OFI Initializing plugin failed\n"
         "e-0:5:5 [0] NCCL INFO Using network Socket\n"
         "e-0:5:5 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL "
         "0\n");
  EXPECT_EQ(v.cause, Cause::kNoRdmaDevice);
  EXPECT_EQ(v.outcome, Outcome::kFellBack);
}

TEST(Verdict, LinkLocalGidThenTimeoutIsTheGidIndex) {  // 2.12-2.20: default index 0 = fe80::
  const auto v =
      Of("g-0:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.7.0.1<0>\n"
         "g-0:1:2 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 99 mtu 3 GID 0 (80FE/A2B4C1FFFE7D2E10)\n"
         "\ng-0:1:2 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error "
         "Connection timed out\n");
  EXPECT_EQ(v.cause, Cause::kGidIndex);
}

TEST(Verdict, TcpxoWaitingForRxdmIsAHang) {
  const auto v =
      Of("a3m-0:10:10 [0] NCCL INFO NET/FasTrak 2025-01-01T00:00:01Z: RxDM not ready after 1 "
         "seconds (status: UNAVAILABLE), retrying... (timeout 30 s)\n");
  EXPECT_EQ(v.outcome, Outcome::kHang);
  EXPECT_EQ(v.cause, Cause::kPluginFailed);
}

TEST(Verdict, Nccl22WarnWithoutTheNcclWord) {
  const auto v =
      Of("c1:7:7 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]\n"
         "c1:7:7 [0] NCCL INFO Using internal Network Socket\n"
         "c2:8:8 [0] NCCL INFO NET : Using interface eth0:10.8.0.2<0>\n"
         "c1:7:7 [0] NCCL INFO NET : Using interface eth0:10.8.0.1<0>\n");
  EXPECT_EQ(v.cause, Cause::kLibibverbsMissing);
  EXPECT_EQ(v.outcome, Outcome::kFellBack);
}

TEST(Verdict, LibibverbsOwnWarningsOutsideNccl) {
  const auto v = Of(
      "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so': libmlx5-rdmav34.so: cannot "
      "open shared object file\n"
      "h-0:1:1 [0] NCCL INFO Using network Socket\n"
      "h-0:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n");
  EXPECT_EQ(v.cause, Cause::kLibibverbsMissing);
}

TEST(Reader, ChunkBoundariesDoNotChangeTheVerdict) {
  const std::string text =
      "a:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "a:1:1 [0] NCCL INFO Using network Socket\n"
      "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0";
  Reader r;
  r.Begin("x");
  for (const char c : text) r.Feed(std::string_view(&c, 1));
  r.End();
  const auto a = r.Decide(), b = VerifyText(text);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.cause, b.cause);
  EXPECT_EQ(a.lines, 3u);
}

TEST(Reader, OverlongLineIsCutAtTheBound) {
  Reader r;
  r.Begin("x");
  r.Feed(std::string(kMaxLineBytes + 10, 'x') + "\n");
  r.Feed("a:1:1 [0] NCCL INFO Using network IB\n");
  r.End();
  const auto v = r.Decide();
  EXPECT_EQ(v.lines_cut, 1u);
  EXPECT_EQ(v.lines, 2u);
  EXPECT_EQ(v.net, "IB");
}

TEST(Tie, SocketRunOfAnRdmaManifestIsAFallback) {
  auto v = Of(
      "a:1:1 [0] NCCL INFO Using network Socket\n"
      "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n");
  const auto t = TieToManifest(v, {"Job ns/train", "sriov", true, {"network-without-vf: ..."}});
  EXPECT_TRUE(t.decided);
  EXPECT_FALSE(t.matches);
  EXPECT_EQ(v.outcome, Outcome::kFellBack);
  EXPECT_NE(t.text.find("network-without-vf"), std::string::npos);
}

// aws-ofi-nccl, gIB and TCPXO manifests are on the plugin path, which gets no RDMA device of its
// own: EFA carrying the data is the intended run, not a mismatch; Socket is its fallback.
TEST(Tie, PluginPathMatchesAPluginTransportAndFallsBackOnSocket) {
  auto efa = Of(
      "e-0:7:7 [0] NCCL INFO Using network Libfabric\n"
      "e-0:7:7 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "e-0:7:7 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Libfabric/0/GDRDMA\n"
      "# Avg bus bandwidth    : 40.1\n");
  auto t = TieToManifest(efa, {"Job ml/efa", "plugin", false, {}});
  EXPECT_TRUE(t.decided);
  EXPECT_TRUE(t.matches);
  EXPECT_EQ(efa.outcome, Outcome::kOk);
  EXPECT_EQ(t.text.find("although"), std::string::npos);
  auto socket =
      Of("e-0:7:7 [0] NCCL INFO Using network Socket\n"
         "e-0:7:7 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL "
         "0\n");
  t = TieToManifest(socket, {"Job ml/efa", "plugin", false, {}});
  EXPECT_FALSE(t.matches);
  EXPECT_EQ(socket.outcome, Outcome::kFellBack);
}

}  // namespace
}  // namespace rw::verify
