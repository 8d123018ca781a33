// The line grammar: prefixes of launchers and collectors, records found anywhere in a line.
#include <gtest/gtest.h>

#include "rdma_webhook/verify/records.h"

namespace rw::verify {
namespace {

TEST(ReadLine, PlainInfoRecord) {
  const auto l = ReadLine("worker-0:77:113 [3] NCCL INFO Using network IB");
  ASSERT_EQ(l.records.size(), 1u);
  EXPECT_EQ(l.records[0].level, Level::kInfo);
  EXPECT_EQ(l.records[0].host, "worker-0");
  EXPECT_EQ(l.records[0].pid, "77");
  EXPECT_EQ(l.records[0].cuda_dev, 3);
  EXPECT_EQ(l.records[0].message, "Using network IB");
}

TEST(ReadLine, WarnCarriesSourceFileAndLine) {
  const auto l = ReadLine(
      "node-a:5:9 [1] transport/net_ib.cc:426 NCCL WARN NET/IB : Unable to open device mlx5_0");
  ASSERT_EQ(l.records.size(), 1u);
  EXPECT_EQ(l.records[0].level, Level::kWarn);
  EXPECT_EQ(l.records[0].where, "transport/net_ib.cc:426");
  EXPECT_EQ(l.records[0].host, "node-a");
  EXPECT_EQ(l.records[0].message, "NET/IB : Unable to open device mlx5_0");
}

TEST(ReadLine, WarnWithTimestampOf226AndAFunctionNameAsWhere) {
  // 2.26+ puts "[date time] " before the host; TCPX names a C++ function with a space in it.
  const auto a = ReadLine(
      "[2026-01-02 03:04:05] gpu-n1:10:11 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp "
      "failed");
  ASSERT_EQ(a.records.size(), 1u);
  EXPECT_EQ(a.records[0].host, "gpu-n1");
  EXPECT_EQ(a.records[0].where, "ibvwrap.c:262");
  const auto b =
      ReadLine("h:1:2 [0] tcpxResult_t tcpxCommProgress(tcpxComm*):1238 NCCL WARN rx ctrl timeout");
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].where, "tcpxResult_t tcpxCommProgress(tcpxComm*):1238");
}

TEST(ReadLine, StripsKubectlTimestampAndMpirunTag) {
  const auto l = ReadLine(
      "2022-05-27T14:22:07.037803007Z [1,8]<stdout>:w-1:46:46 [0] NCCL INFO Bootstrap : Using "
      "eth0:10.0.0.2<0>");
  EXPECT_EQ(l.launcher_rank, 8);
  ASSERT_EQ(l.records.size(), 1u);
  EXPECT_EQ(l.records[0].host, "w-1");
  EXPECT_EQ(l.text.substr(0, 4), "w-1:");
}

TEST(ReadLine, StripsTorchrunRayAndKubectlPrefix) {
  EXPECT_EQ(ReadLine("[rank28]: Traceback (most recent call last):").launcher_rank, 28);
  EXPECT_EQ(ReadLine("[default0]:Last error:").text, "Last error:");
  EXPECT_EQ(ReadLine("(RayTrainWorker pid=4411, ip=10.1.2.3) p2p-bench: done").text,
            "p2p-bench: done");
  EXPECT_EQ(ReadLine("[pod/train-0/trainer] NCCL version 2.21.5+cuda12.2").text,
            "NCCL version 2.21.5+cuda12.2");
  EXPECT_EQ(ReadLine("2024-11-05T08:41:17+02:00 hello").text, "hello");
}

TEST(ReadLine, TwoRecordsGluedInOneLine) {
  // Two processes writing one stream: the first record is cut and the second follows at once.
  const auto l = ReadLine(
      "pod-a:388:519 [1] NCCL INFO comm 0x3a rank 1 nranks 4 cudaDev 1 nvmlpod-a:390:390 [3] NCCL "
      "INFO cudaDriverVersion 12040");
  ASSERT_EQ(l.records.size(), 2u);
  // The cut-off tail ("nvml") cannot be told from the host name glued to it; the verdict folds
  // such a host into the known one with the same pid.
  EXPECT_EQ(l.records[0].message, "comm 0x3a rank 1 nranks 4 cudaDev 1");
  EXPECT_TRUE(l.records[1].host.ends_with("pod-a"));
  EXPECT_EQ(l.records[1].pid, "390");
  EXPECT_EQ(l.records[1].cuda_dev, 3);
  EXPECT_EQ(l.records[1].message, "cudaDriverVersion 12040");
}

TEST(ReadLine, NonNcclLinesHaveNoRecord) {
  EXPECT_TRUE(ReadLine("# Avg bus bandwidth    : 2.71").records.empty());
  EXPECT_TRUE(ReadLine("").records.empty());
  EXPECT_TRUE(ReadLine("NCCL version 2.9.9+cuda11.4").records.empty());
}

TEST(ReadLine, BareWarnWithoutHeaderIsStillARecord) {
  const auto l = ReadLine("NCCL WARN Bootstrap : no socket interface found");
  ASSERT_EQ(l.records.size(), 1u);
  EXPECT_TRUE(l.records[0].host.empty());
  EXPECT_EQ(l.records[0].message, "Bootstrap : no socket interface found");
}

TEST(ReadCriRecord, StreamAndPartialTag) {
  const auto out = ReadCriRecord("2026-11-30T10:04:12.000118220Z stdout P abc");
  EXPECT_EQ(out.prefix, 40u);
  EXPECT_EQ(out.stream, 0);
  EXPECT_TRUE(out.partial);
  const auto err = ReadCriRecord("2026-11-30T10:04:12+01:00 stderr F x");
  EXPECT_EQ(err.stream, 1);
  EXPECT_FALSE(err.partial);
  // kubectl --timestamps alone, a launcher tag, a stream without its tag: no CRI record.
  EXPECT_EQ(ReadCriRecord("2026-11-30T10:04:12Z w-0:1:1 [0] NCCL INFO x").prefix, 0u);
  EXPECT_EQ(ReadCriRecord("[1,0]<stdout>:w-0:1:1 [0] NCCL INFO x").prefix, 0u);
  EXPECT_EQ(ReadCriRecord("2026-11-30T10:04:12Z stdout X y").prefix, 0u);
}

}  // namespace
}  // namespace rw::verify
