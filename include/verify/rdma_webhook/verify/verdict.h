#pragma once
// What a job's logs prove about the transport NCCL used, and why (docs/verify.md). Pure.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::verify {

enum class Outcome { kOk, kFellBack, kError, kHang, kUnknown };
std::string_view ToString(Outcome o);

// The cause vocabulary (docs/verify.md#causes).
enum class Cause {
  kNone,
  kNoRdmaDevice,
  kLibibverbsMissing,
  kHcaFilter,
  kIbDisabled,
  kPluginFailed,
  kGidIndex,
  kFabricUnreachable,
  kVerbsResource,
  kGdrUnavailable,
  kShmTooSmall,
  kSocketInterface,
  kCudaError,
  kTimeout,
  kK8sCni,
  kK8sDevicePlugin,
  kK8sScheduling,
  kNotApplicable,
  kUnknown,
};
std::string_view ToString(Cause c);

struct CauseInfo {
  Cause cause;
  std::string_view id;       // as printed: "no-rdma-device"
  std::string_view meaning;  // one line
  std::string_view fix;      // the usual fix on Kubernetes
};
// Every cause with its meaning and fix, in the order of docs/verify.md.
const std::vector<CauseInfo>& Causes();
const CauseInfo& Describe(Cause c);

// A log line that proves something: where it is ("file:line") and its text (bounded).
struct Proof {
  std::string source;
  std::size_t line = 0;
  std::string text;
};

// GPUDirect RDMA: per direction as the channel lines show it. kNotApplicable ("n/a"): a TCP
// plugin (GPUDirect-TCPX/TCPXO, FastSocket) carried the data; GPUDirect RDMA is a verbs notion,
// so "off" would point to a fix (peer memory) that does not apply there.
enum class Gdr { kUnknown, kOn, kOff, kPartial, kNotApplicable };
std::string_view ToString(Gdr g);

// One NCCL process (host:pid), the unit a rank lives in.
struct ProcessFacts {
  std::string host;
  std::string pid;
  std::string node;        // the OOB/bootstrap IP when printed, else "host:<name>"
  std::vector<int> ranks;  // from comm lines and launcher prefixes
  std::vector<int> cuda_devs;
  std::string version;                    // "2.21.5"
  std::string net;                        // `Using network X`
  std::vector<std::string> devices;       // "mlx5_0:1/RoCE", or socket interfaces "eth0:10.0.0.1"
  std::string link_layer;                 // "RoCE", "IB", "" unknown
  std::vector<std::string> channel_nets;  // distinct NET/<name> in channel lines
  std::optional<int> gid_index;
  Gdr gdr = Gdr::kUnknown;
  std::vector<std::string> intra;  // P2P/IPC, SHM, ...
  std::optional<int> nnodes;       // from `nNodes %d` (2.20+)
  std::optional<int> nranks;       // largest communicator seen
};

// The decision for the whole input (a job's pods, or the files given).
struct Verdict {
  std::string nccl_version;  // "" when not printed
  std::string inter_node;    // IB, RoCE, Socket, EFA, gIB, GPUDirect-TCPX, GPUDirect-TCPXO,
                             // FastSocket, MNNVL, "none (single node)", "none (pod never
                             // started)", "unknown"
  std::string net;           // the network name NCCL printed, "" when not
  std::string link_layer;    // RoCE, IB, EFA, "" unknown
  std::vector<std::string> devices;
  std::vector<std::string> intra_node;
  std::optional<int> gid_index;
  Gdr gdr = Gdr::kUnknown;
  std::optional<int> nodes;  // nodes seen or printed; nullopt when unknown
  bool single_node = false;
  Outcome outcome = Outcome::kUnknown;
  Cause cause = Cause::kUnknown;
  std::vector<Cause> secondary;  // further causes seen (a later step of NCCL's order)
  std::string explanation;       // one or two sentences in the domain's words
  std::vector<Proof> proofs;     // lines that prove the outcome and the cause
  std::vector<ProcessFacts> processes;
  std::size_t lines = 0, nccl_records = 0, lines_cut = 0;
  bool processes_capped = false;
  // Earlier runs of a restarted container set aside (docs/verify.md#restarts): only the last run
  // is judged, from `last_run_from` ("file:line").
  std::size_t previous_runs = 0;
  std::string last_run_from;
};

// RDMA transports (verbs over IB or RoCE, EFA, gIB, multi-node NVLink), as opposed to Socket and
// the TCP plugins (GPUDirect-TCPX/TCPXO, FastSocket).
bool IsRdmaTransport(std::string_view inter_node);

nlohmann::json ToJson(const Verdict& v);

}  // namespace rw::verify
