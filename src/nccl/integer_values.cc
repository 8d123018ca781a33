#include <cerrno>
#include <cstdlib>
#include <string>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {

bool IsDecimalInteger(std::string_view value, bool allow_negative) {
  if (allow_negative && !value.empty() && value.front() == '-') value.remove_prefix(1);
  if (value.empty() || value.size() > 18) return false;
  if (value.size() > 1 && value.front() == '0') return false;  // NCCL would read it as octal
  for (char c : value)
    if (c < '0' || c > '9') return false;
  return true;
}

long long NcclReadsInteger(std::string_view value) {
  const std::string text(value);
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 0);
  return v;
}

namespace {

std::string Quote(std::string_view v) { return "'" + std::string(v) + "'"; }

}  // namespace

ValueCheck CheckIbDisable(std::string_view value) {
  ValueCheck check;
  if (IsDecimalInteger(value, true)) {
    check.valid = true;
    check.number = std::stoll(std::string(value));
    return check;
  }
  const long long reads = NcclReadsInteger(value);
  check.problem =
      "NCCL_IB_DISABLE=" + Quote(value) +
      " is not a decimal integer; NCCL parses it with strtoll and reads " + std::to_string(reads) +
      (reads == 0 ? ", so InfiniBand/RoCE stays ENABLED" : ", so InfiniBand/RoCE is disabled") +
      "; write 0 to use RDMA or 1 to disable it";
  return check;
}

ValueCheck CheckGidIndex(std::string_view value) {
  ValueCheck check;
  if (IsDecimalInteger(value, false) || value == "-1") {
    check.valid = true;
    check.number = std::stoll(std::string(value));
    return check;
  }
  check.problem =
      "NCCL_IB_GID_INDEX=" + Quote(value) +
      " is not a GID index (a decimal integer >= 0, or -1 for auto); NCCL reads it as " +
      std::to_string(NcclReadsInteger(value)) +
      "; unset it to let NCCL >= 2.21 pick the RoCE v2 IPv4 GID, or set the index "
      "`rdma-webhook gids` recommends";
  return check;
}

ValueCheck CheckGdrLevel(std::string_view value) {
  ValueCheck check;
  // ncclGetLevel (src/graph/paths.cc) compares the value with every path type name up to SYS
  // (topoPathTypeStr in src/graph/topo.cc: C2C from 2.20, P2C later; an older release ignores
  // a name it lacks, so every name any release takes is valid here), then reads anything that
  // starts with a digit with strtol(str, NULL, 0) as an old-style level, clamped to the last.
  for (std::string_view level : kGdrLevelNames) {
    if (value == level) {
      check.valid = true;
      return check;
    }
  }
  if (!value.empty() && value.front() >= '0' && value.front() <= '9') {
    check.valid = true;
    if (IsDecimalInteger(value, false) && value.size() < 19)
      check.number = std::stoll(std::string(value));
    return check;
  }
  check.problem = "NCCL_NET_GDR_LEVEL=" + Quote(value) +
                  " is not a path type NCCL names (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, "
                  "SYS: upper case) nor a number; NCCL silently ignores it and keeps its default "
                  "GPUDirect level";
  return check;
}

}  // namespace rw::nccl
