#pragma once
// What the reader has gathered: per process facts and job-wide signals, each with its first
// proof lines. Shared by observe.cc (which fills it) and decide.cc (which judges it).
#include <array>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_webhook/verify/records.h"
#include "rdma_webhook/verify/verdict.h"

namespace rw::verify {

// One kind of evidence; the names say what the line shows (SIGNALS of docs/verify.md).
enum class Signal : std::size_t {
  kLibibverbsMissing,
  kNoDevice,      // NET/IB : No device found.
  kUnableToOpen,  // NET/IB : Unable to open device
  kHcaSet,        // NCCL_IB_HCA set to
  kIbDisabled,    // NCCL_IB_DISABLE=1, NCCL_NET=Socket
  kPluginFailed,
  kOfiNoDevice,     // fi_getinfo ... No data available
  kGdrDisabledHca,  // peer memory missing
  kGdrDisabledDistance,
  kGdrEnabled,
  kCompletionRetry,  // completion status 12
  kCompletionError,  // other completion errors
  kModifyQpGid,      // No such device / Invalid argument
  kModifyQpFabric,   // timed out / unreachable
  kVerbsResource,
  kShm,
  kCuda,
  kSocketInterface,
  kSocketSuspicious,  // lo, docker0, virbr0 in the socket list
  kUnclassifiedWarn,
  kFrameworkError,
  kWatchdog,
  kInitComplete,
  kSuccess,
  kRxdmWait,      // GPUDirect-TCPXO waiting for its RxDM sidecar
  kLinkLocalGid,  // GID N (80FE/...): fe80:: link-local, RoCE v1 or no IP on the GID
  kK8sCni,
  kK8sDevicePlugin,
  kNetLine,     // Using network X (and its older forms)
  kNetChannel,  // a channel over NET/<name>
  kIbDevices,   // NET/IB : Using [0]...
  kNodesLine,   // comm ... nNodes N
  kCount
};

struct SignalSeen {
  std::size_t count = 0;
  std::size_t first = 0;  // order of the first occurrence (Evidence::order)
  std::vector<Proof> proofs;
};

struct ProcessState {
  ProcessFacts facts;
  std::string bootstrap_ip, oob_ip, socket_ip;
  std::size_t send_gdr = 0, send_plain = 0, recv_gdr = 0, recv_plain = 0;
  std::set<int> ranks, devs;
};

struct Evidence {
  std::string source;
  std::string_view raw;  // the line being read, as written: what a proof quotes
  // Where the quote of `raw` starts: 0, or for a line longer than a proof's bound the header of
  // the record being read (a record after a long progress bar would else quote only the bar).
  std::size_t quote_from = 0;
  std::size_t line_no = 0;
  std::size_t order = 0;  // records and lines read, over all sources
  std::size_t lines = 0, records = 0, lines_cut = 0;
  bool after_last_error = false;  // the framework's "Last error:" line came just before
  std::string cut_net_at;  // "file:line" of the first cut line whose network name was not believed
  bool line_cut = false;   // the current line may be cut short: over-long, or no newline at the end
  std::array<SignalSeen, static_cast<std::size_t>(Signal::kCount)> signals{};
  std::map<std::string, ProcessState> processes;  // "host:pid"
  bool processes_capped = false;
  std::string version;
  std::set<std::string> nets, channel_nets, plugins, intra, link_layers;
  std::vector<std::string> devices;
  std::set<int> gid_indexes;
  int ring_gdr = -1;  // `Connected all rings, use ring PXN %d GDR %d`
  int max_nnodes = -1, max_nranks = -1;
  bool mnnvl = false;
  // Restarts: a process (host:pid) that prints NCCL's version banner a second time is a new run
  // (NCCL prints it once per process). When every process read so far is on that host, the
  // earlier run is set aside and only the last is judged; else the runs stay read together.
  std::size_t previous_runs = 0;
  std::string last_run_from;    // "file:line" where the last run of a set-aside restart begins
  std::string restart_unsplit;  // "host:pid at file:line" of a restart that could not be split

  SignalSeen& At(Signal s) { return signals[static_cast<std::size_t>(s)]; }
  const SignalSeen& At(Signal s) const { return signals[static_cast<std::size_t>(s)]; }
  bool Has(Signal s) const { return At(s).count > 0; }
  // Counts `s` and keeps the current line as its proof (the first kMaxProofsPerSignal).
  void Note(Signal s);
};

// Reads one line (prefixes stripped, records found) into the evidence.
void Observe(Evidence& e, const Line& line);

// Classification of a message outside NCCL's records: Kubernetes events, device plugin logs,
// framework exceptions. Returns true when it recognised the line.
bool ObserveOther(Evidence& e, std::string_view text);

// The job-wide decision.
Verdict DecideEvidence(const Evidence& e);

}  // namespace rw::verify
