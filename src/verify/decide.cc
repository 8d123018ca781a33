// From evidence to a verdict: the transport, GPUDirect RDMA, the outcome and its cause, in the
// order NCCL tries things (docs/verify.md#how-the-verdict-is-reached).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "evidence.h"

namespace rw::verify {
namespace {

bool StartsWith(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// The transport class of a network name NCCL printed (`Using network X`, `NET/X/...`).
std::string ClassOf(const std::string& net, const std::set<std::string>& link_layers) {
  if (net == "IB" || StartsWith(net, "IBext")) {
    if (link_layers.count("RoCE")) return "RoCE";
    if (link_layers.count("IB")) return "IB";
    return "IB";  // NCCL's verbs transport; the link layer was not printed
  }
  if (net == "Socket") return "Socket";
  if (net == "AWS Libfabric" || net == "Libfabric" || net == "OFI") return "EFA";
  if (net == "gIB") return "gIB";
  if (StartsWith(net, "GPUDirectTCPX")) return "GPUDirect-TCPX";
  if (net == "FasTrak") return "GPUDirect-TCPXO";
  if (net == "FastSocket") return "FastSocket";
  return net;  // a plugin this reader does not know by name: say what NCCL said
}

void AddProofs(Verdict& v, const Evidence& e, Signal s) {
  for (const auto& p : e.At(s).proofs)
    if (v.proofs.size() < 24) v.proofs.push_back(p);
}

// Node keys: the bootstrap IP, else the IB OOB IP, else the socket IP; a process that printed
// none takes the one IP of its host when there is exactly one, else its host name.
std::map<std::string, ProcessFacts> Processes(const Evidence& e) {
  std::map<std::string, std::set<std::string>> host_ips;
  std::map<std::string, ProcessFacts> out;
  // Records glued to the end of another line get the tail of that line in front of their host
  // ("...nvmlpod-a:390:390 [3]"): such a host that ends with a known host and has that host's
  // pid is the known one.
  std::map<std::string, const ProcessState*> by_key;
  for (const auto& [key, p] : e.processes) by_key[key] = &p;
  for (const auto& [key, p] : e.processes) {
    const std::string ip = !p.bootstrap_ip.empty() ? p.bootstrap_ip
                           : !p.oob_ip.empty()     ? p.oob_ip
                                                   : p.socket_ip;
    if (!ip.empty()) host_ips[p.facts.host].insert(ip);
  }
  for (const auto& [key, p] : e.processes) {
    std::string host = p.facts.host;
    for (const auto& [other_key, q] : by_key)
      if (q != &p && q->facts.pid == p.facts.pid && host.size() > q->facts.host.size() &&
          host.ends_with(q->facts.host))
        host = q->facts.host;
    ProcessFacts f = p.facts;
    f.host = host;
    std::string ip = !p.bootstrap_ip.empty() ? p.bootstrap_ip
                     : !p.oob_ip.empty()     ? p.oob_ip
                                             : p.socket_ip;
    if (ip.empty() && host_ips[host].size() == 1) ip = *host_ips[host].begin();
    f.node = ip.empty() ? "host:" + host : ip;
    auto& slot = out[host + ":" + f.pid];
    if (slot.host.empty()) {
      slot = std::move(f);
    } else {  // merge a glued duplicate into its process
      for (int d : f.cuda_devs) slot.cuda_devs.push_back(d);
      if (slot.node.starts_with("host:") && !f.node.starts_with("host:")) slot.node = f.node;
    }
    auto& s = out[host + ":" + p.facts.pid];
    for (int r : p.ranks)
      if (std::find(s.ranks.begin(), s.ranks.end(), r) == s.ranks.end()) s.ranks.push_back(r);
    for (int d : p.devs)
      if (std::find(s.cuda_devs.begin(), s.cuda_devs.end(), d) == s.cuda_devs.end())
        s.cuda_devs.push_back(d);
    const bool send_seen = p.send_gdr + p.send_plain > 0, recv_seen = p.recv_gdr + p.recv_plain > 0;
    const bool any_gdr = p.send_gdr + p.recv_gdr > 0, any_plain = p.send_plain + p.recv_plain > 0;
    if (any_gdr && !any_plain)
      s.gdr = Gdr::kOn;
    else if (any_gdr && any_plain)
      s.gdr = Gdr::kPartial;
    else if (send_seen && recv_seen)
      s.gdr = Gdr::kOff;
    std::sort(s.ranks.begin(), s.ranks.end());
    std::sort(s.cuda_devs.begin(), s.cuda_devs.end());
  }
  return out;
}

// One or two sentences: what carried the data, and why it is the outcome.
std::string Explain(const Verdict& v, const Evidence& e) {
  std::string t;
  const std::string version = v.nccl_version.empty() ? "NCCL" : "NCCL " + v.nccl_version;
  if (v.single_node) {
    t = "single node: no byte crosses the network, so there is no inter-node transport to "
        "judge";
  } else if (v.inter_node == "unknown") {
    t = e.records == 0 ? "no NCCL INFO output: the transport is not in the log (NCCL_DEBUG unset?)"
                       : "the log does not show which transport carried inter-node data";
    if (!e.cut_net_at.empty())
      t += " (the network name at " + e.cut_net_at + " is cut short, so it proves nothing)";
  } else if (v.inter_node.starts_with("none")) {
    t = "the pod never got to NCCL";
  } else {
    const bool inferred = e.channel_nets.empty() && e.nets.empty();  // from verbs errors only
    t = inferred
            ? version + "'s verbs transport ran (" + v.inter_node + ", from its error lines)"
            : version + " used " + v.inter_node + (v.net.empty() ? "" : " (NET/" + v.net + ")");
    if (!v.devices.empty() && v.inter_node != "Socket") {
      t += " on";
      for (std::size_t i = 0; i < v.devices.size() && i < 4; ++i) t += " " + v.devices[i];
      if (v.devices.size() > 4) t += " ...";
    }
    if (v.inter_node == "IB" && v.link_layer.empty())
      t += " (InfiniBand or RoCE: the log does not print the link layer)";
    if (v.nodes) t += " across " + std::to_string(*v.nodes) + " nodes";
    if (v.inter_node != "Socket") {  // some processes on the fast path, others on Socket
      std::string on_socket;
      std::size_t n = 0;
      for (const auto& p : v.processes) {
        const auto& c = p.channel_nets;
        const bool socket_only =
            c.empty()
                ? p.net == "Socket"
                : std::all_of(c.begin(), c.end(), [](const auto& x) { return x == "Socket"; });
        if (!socket_only) continue;
        if (n++ < 4) on_socket += (on_socket.empty() ? "" : ", ") + p.host + ":" + p.pid;
      }
      if (n > 4) on_socket += ", ...";
      if (n > 0)
        t += ", but " + std::to_string(n) + " process" + (n > 1 ? "es" : "") + " used Socket (" +
             on_socket + ")";
    }
    if (v.gdr == Gdr::kNotApplicable)
      t += ", GPUDirect RDMA not applicable (a TCP plugin, no verbs NIC)";
    else if (v.gdr != Gdr::kUnknown)
      t += ", GPUDirect RDMA " + std::string(ToString(v.gdr));
    if (e.gid_indexes.size() > 1)
      t += ", GID index differs between processes";
    else if (v.gid_index)
      t += ", GID index " + std::to_string(*v.gid_index);
  }
  t += ". ";
  switch (v.outcome) {
    case Outcome::kOk:
      t += "The run completed collectives on that path";
      break;
    case Outcome::kFellBack:
      t += "It fell back: ";
      break;
    case Outcome::kError:
      t += "It failed: ";
      break;
    case Outcome::kHang:
      t += "It stalled: ";
      break;
    case Outcome::kUnknown:
      t += "Outcome unknown: the log shows no completed collective";
      break;
  }
  if (v.outcome != Outcome::kOk && v.outcome != Outcome::kUnknown)
    t += Describe(v.cause).meaning;
  else if (v.cause != Cause::kNone && v.cause != Cause::kUnknown &&
           v.cause != Cause::kNotApplicable)
    t += "; " + std::string(Describe(v.cause).meaning);
  t += ".";
  if (e.previous_runs > 0)
    t += " The lines before " + e.last_run_from + " are " +
         (e.previous_runs == 1 ? std::string("a previous run")
                               : std::to_string(e.previous_runs) + " previous runs") +
         " of the same process (a restarted container): only the last run is judged.";
  else if (!e.restart_unsplit.empty())
    t += " " + e.restart_unsplit +
         " initialised NCCL a second time (a restarted container?) after other pods' lines: "
         "the runs are read together.";
  return t;
}

struct Step {
  Signal signal;
  Cause cause;
};

}  // namespace

Verdict DecideEvidence(const Evidence& e) {
  Verdict v;
  v.lines = e.lines;
  v.nccl_records = e.records;
  v.lines_cut = e.lines_cut;
  v.processes_capped = e.processes_capped;
  v.previous_runs = e.previous_runs;
  v.last_run_from = e.last_run_from;
  v.nccl_version = e.version;
  v.devices = e.devices;
  v.intra_node.assign(e.intra.begin(), e.intra.end());
  if (e.gid_indexes.size() == 1) v.gid_index = *e.gid_indexes.begin();

  const auto procs = Processes(e);
  std::set<std::string> nodes;
  int max_dev = -1;
  for (const auto& [key, p] : procs) {
    nodes.insert(p.node);
    for (int d : p.cuda_devs) max_dev = std::max(max_dev, d);
    v.processes.push_back(p);
  }
  // How many nodes: NCCL's own count (2.20+), else the distinct node keys seen.
  const bool net_channels =
      std::any_of(e.channel_nets.begin(), e.channel_nets.end(), [](const auto&) { return true; });
  if (e.max_nnodes > 0) {
    v.nodes = e.max_nnodes;
    v.single_node = e.max_nnodes == 1;
  } else if (nodes.size() >= 2) {
    v.nodes = static_cast<int>(nodes.size());
  } else if (nodes.size() == 1 && !net_channels && !e.mnnvl) {
    // One node key, and every connection intra-node or a communicator of two ranks or more (one
    // rank is a sub-communicator: no answer); and no communicator larger than the ranks this
    // node shows (its GPUs, or its processes when each sees its own GPU as [0]): a larger one
    // has ranks elsewhere, the excerpt of one pod of a larger job.
    const int here = std::max(max_dev + 1, static_cast<int>(procs.size()));
    const bool local_channels = !e.intra.empty();
    if ((local_channels || e.max_nranks >= 2) && e.max_nranks <= here) {
      v.nodes = 1;
      v.single_node = true;
    }
  }

  // The inter-node transport: channel lines decide; else `Using network`.
  const auto& names = !e.channel_nets.empty() ? e.channel_nets : e.nets;
  std::set<std::string> classes;
  for (const auto& n : names) classes.insert(ClassOf(n, e.link_layers));
  if (names.empty() && (e.Has(Signal::kCompletionRetry) || e.Has(Signal::kCompletionError) ||
                        e.Has(Signal::kModifyQpGid) || e.Has(Signal::kModifyQpFabric)))
    classes.insert(ClassOf("IB", e.link_layers));  // verbs errors: NCCL's IB transport ran
  if (e.mnnvl && !v.single_node && e.channel_nets.empty()) classes.insert("MNNVL");
  std::string rdma_class;
  for (const auto& c : classes)
    if (c != "Socket") rdma_class = c;
  const bool socket = classes.count("Socket") > 0;
  if (!e.channel_nets.empty()) {
    for (const auto& n : e.channel_nets) v.net = n;
  } else if (!e.nets.empty()) {
    v.net = *e.nets.rbegin();
  }
  if (!e.nets.empty()) {  // `Using network` names the network; a plugin's name is kept
    for (const auto& n : e.nets)
      if (n != "Socket") v.net = n;
    if (v.net.empty()) v.net = *e.nets.begin();
  }
  if (v.single_node) {
    v.inter_node = "none (single node)";
  } else if (!rdma_class.empty()) {
    v.inter_node = rdma_class;
  } else if (socket) {
    v.inter_node = "Socket";
  } else if (e.Has(Signal::kK8sCni) || e.Has(Signal::kK8sDevicePlugin)) {
    v.inter_node = "none (pod never started)";
  } else {
    v.inter_node = "unknown";
  }
  // "IB" is NCCL's verbs transport: the link layer only when a device line or a GID says so.
  if (v.inter_node == "RoCE" || (v.inter_node == "IB" && e.link_layers.count("IB")))
    v.link_layer = v.inter_node;
  if (v.inter_node == "EFA") v.link_layer = "EFA";
  if (v.inter_node == "gIB") v.link_layer = "RoCE";

  // GPUDirect RDMA: channel suffixes per direction, then `GDR %d`, then the per-HCA lines.
  // The TCP plugins have no verbs NIC: only what the log says is on (a `/GDRDMA` suffix, `GDR 1`,
  // `Enabled for HCA`: the plugin reads GPU memory itself) is reported; anything else is n/a,
  // never "off" (NCCL prints `Disabled for HCA` for every device that is not RDMA).
  const bool tcp_plugin = v.inter_node == "GPUDirect-TCPX" || v.inter_node == "GPUDirect-TCPXO" ||
                          v.inter_node == "FastSocket";
  if (v.inter_node == "Socket") {
    v.gdr = Gdr::kOff;
  } else if (tcp_plugin) {
    std::size_t on = 0, off = 0;
    for (const auto& p : procs) {
      if (p.second.gdr == Gdr::kOn || p.second.gdr == Gdr::kPartial) ++on;
      if (p.second.gdr == Gdr::kOff || p.second.gdr == Gdr::kPartial) ++off;
    }
    if (on > 0)
      v.gdr = off > 0 ? Gdr::kPartial : Gdr::kOn;
    else if (e.ring_gdr > 0 || e.Has(Signal::kGdrEnabled))
      v.gdr = Gdr::kOn;
    else
      v.gdr = Gdr::kNotApplicable;
    for (auto& p : v.processes)
      if (p.gdr == Gdr::kOff || p.gdr == Gdr::kUnknown) p.gdr = Gdr::kNotApplicable;
  } else if (!v.single_node) {
    std::size_t on = 0, off = 0;
    for (const auto& p : procs) {
      if (p.second.gdr == Gdr::kOn) ++on;
      if (p.second.gdr == Gdr::kOff) ++off;
      if (p.second.gdr == Gdr::kPartial) ++on, ++off;
    }
    if (on > 0)
      v.gdr = off > 0 ? Gdr::kPartial : Gdr::kOn;
    else if (off > 0)
      v.gdr = Gdr::kOff;
    else if (e.ring_gdr >= 0)
      v.gdr = e.ring_gdr > 0 ? Gdr::kOn : Gdr::kOff;
    else if (e.Has(Signal::kGdrDisabledHca) || e.Has(Signal::kGdrDisabledDistance))
      v.gdr = Gdr::kOff;
    else if (e.Has(Signal::kGdrEnabled))
      v.gdr = Gdr::kOn;
  }

  // Outcome and cause.
  const bool success = e.Has(Signal::kSuccess);
  auto add_secondary = [&](Cause c) {
    if (c != v.cause && std::find(v.secondary.begin(), v.secondary.end(), c) == v.secondary.end())
      v.secondary.push_back(c);
  };
  // Errors that stop the job: the first in input order.
  static const Step kErrors[] = {
      {Signal::kK8sCni, Cause::kK8sCni},
      {Signal::kK8sDevicePlugin, Cause::kK8sDevicePlugin},
      {Signal::kCompletionRetry, Cause::kFabricUnreachable},
      {Signal::kModifyQpFabric, Cause::kFabricUnreachable},
      {Signal::kModifyQpGid, Cause::kGidIndex},
      {Signal::kVerbsResource, Cause::kVerbsResource},
      {Signal::kShm, Cause::kShmTooSmall},
      {Signal::kCuda, Cause::kCudaError},
      {Signal::kSocketInterface, Cause::kSocketInterface},
      {Signal::kCompletionError, Cause::kUnknown},
  };
  const Step* first = nullptr;
  for (const auto& s : kErrors)
    if (e.Has(s.signal) && (!first || e.At(s.signal).first < e.At(first->signal).first)) first = &s;
  // A plugin that aborts the process (TCPXO) is an error, not a fallback.
  const bool plugin_abort = e.Has(Signal::kPluginFailed) && names.empty() && !socket;
  // Fallback causes, in the order NCCL tries: configuration, plugin, libibverbs, devices.
  // aws-ofi-nccl's "fi_getinfo ... No data available" (no EFA device) comes before its own
  // "failed" lines, which are its consequences.
  static const Step kFallbacks[] = {
      {Signal::kIbDisabled, Cause::kIbDisabled},
      {Signal::kOfiNoDevice, Cause::kNoRdmaDevice},
      {Signal::kPluginFailed, Cause::kPluginFailed},
      {Signal::kLibibverbsMissing, Cause::kLibibverbsMissing},
      {Signal::kUnableToOpen, Cause::kNoRdmaDevice},
      {Signal::kNoDevice, Cause::kNoRdmaDevice},
  };
  std::vector<Step> fallbacks;
  for (const auto& s : kFallbacks) {
    if (!e.Has(s.signal)) continue;
    Step step = s;
    if (s.signal == Signal::kNoDevice && e.Has(Signal::kHcaSet) && !e.Has(Signal::kIbDevices))
      step.cause = Cause::kHcaFilter;  // the only line that tells a filter from an absence
    fallbacks.push_back(step);
  }

  if (first) {
    v.outcome = Outcome::kError;
    v.cause = first->cause;
    AddProofs(v, e, first->signal);
    // A connect on the link-local GID (fe80::, index 0 before 2.21) that then times out or
    // is retried to exhaustion: the GID index, not the fabric.
    if (v.cause == Cause::kFabricUnreachable && e.Has(Signal::kLinkLocalGid)) {
      v.cause = Cause::kGidIndex;
      AddProofs(v, e, Signal::kLinkLocalGid);
    }
    if (first->cause == Cause::kK8sCni || first->cause == Cause::kK8sDevicePlugin)
      if (v.inter_node == "unknown") v.inter_node = "none (pod never started)";
    if (!v.single_node && socket && rdma_class.empty())
      for (const auto& f : fallbacks) add_secondary(f.cause), AddProofs(v, e, f.signal);
  } else if (plugin_abort) {
    v.outcome = Outcome::kError;
    v.cause = e.Has(Signal::kOfiNoDevice) ? Cause::kNoRdmaDevice : Cause::kPluginFailed;
    AddProofs(v, e, Signal::kOfiNoDevice);
    AddProofs(v, e, Signal::kPluginFailed);
  } else if (e.Has(Signal::kRxdmWait) && names.empty()) {
    v.outcome = Outcome::kHang;  // TCPXO retries every second until its timeout
    v.cause = Cause::kPluginFailed;
    AddProofs(v, e, Signal::kRxdmWait);
  } else if (e.Has(Signal::kWatchdog)) {
    v.outcome = Outcome::kHang;
    v.cause = Cause::kTimeout;
    AddProofs(v, e, Signal::kWatchdog);
  } else if (e.Has(Signal::kFrameworkError) ||
             (e.Has(Signal::kUnclassifiedWarn) && !success && e.Has(Signal::kFrameworkError))) {
    v.outcome = Outcome::kError;
    v.cause = Cause::kUnknown;
    AddProofs(v, e, Signal::kFrameworkError);
    AddProofs(v, e, Signal::kUnclassifiedWarn);
  } else if (v.single_node) {
    v.cause = Cause::kNotApplicable;
    v.outcome = success ? Outcome::kOk : Outcome::kUnknown;
    AddProofs(v, e, Signal::kNodesLine);
    AddProofs(v, e, Signal::kSuccess);
  } else if (socket && rdma_class.empty()) {
    AddProofs(v, e, Signal::kNetLine);
    AddProofs(v, e, Signal::kNetChannel);
    if (!fallbacks.empty()) {
      v.outcome = Outcome::kFellBack;
      v.cause = fallbacks.front().cause;
      AddProofs(v, e, fallbacks.front().signal);
      if (v.cause == Cause::kHcaFilter) AddProofs(v, e, Signal::kHcaSet);
      for (std::size_t i = 1; i < fallbacks.size(); ++i) add_secondary(fallbacks[i].cause);
    } else {
      // Socket with no sign that RDMA was tried: intended or not, the log cannot say.
      v.outcome = Outcome::kUnknown;
      v.cause = Cause::kUnknown;
    }
    if (e.Has(Signal::kSocketSuspicious)) {
      add_secondary(Cause::kSocketInterface);
      AddProofs(v, e, Signal::kSocketSuspicious);
    }
  } else if (!rdma_class.empty()) {
    AddProofs(v, e, Signal::kNetChannel);
    AddProofs(v, e, Signal::kNetLine);
    AddProofs(v, e, Signal::kIbDevices);
    if (e.Has(Signal::kGdrDisabledHca) && !tcp_plugin) {
      v.outcome = Outcome::kFellBack;  // host-staged copies instead of GPUDirect RDMA
      v.cause = Cause::kGdrUnavailable;
      AddProofs(v, e, Signal::kGdrDisabledHca);
    } else {
      v.outcome = success ? Outcome::kOk : Outcome::kUnknown;
      v.cause = Cause::kNone;
      if (e.Has(Signal::kGdrDisabledDistance) && !tcp_plugin) {
        v.cause = Cause::kGdrUnavailable;  // topology: NCCL_NET_GDR_LEVEL, GPU/NIC placement
        AddProofs(v, e, Signal::kGdrDisabledDistance);
      }
      if (!success) v.cause = v.cause == Cause::kNone ? Cause::kUnknown : v.cause;
    }
    AddProofs(v, e, Signal::kSuccess);
    if (socket) {  // some processes on RDMA, others on Socket
      v.outcome = Outcome::kFellBack;
      if (!fallbacks.empty()) v.cause = fallbacks.front().cause;
    }
  } else {
    v.outcome = Outcome::kUnknown;
    v.cause = Cause::kUnknown;
    AddProofs(v, e, Signal::kUnclassifiedWarn);
  }
  if (v.outcome == Outcome::kOk && v.cause == Cause::kUnknown) v.cause = Cause::kNone;
  v.explanation = Explain(v, e);
  return v;
}

}  // namespace rw::verify
