// Which NCCL line proves which fact, across releases 2.3 to 2.30 (docs/verify.md#what-is-read).
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "evidence.h"
#include "rdma_webhook/verify/reader.h"

namespace rw::verify {
namespace {

using std::string_view;

bool Has(string_view s, string_view what) { return s.find(what) != string_view::npos; }
bool Digit(char c) { return c >= '0' && c <= '9'; }

// The integer right after `key` in `s` (e.g. " nNodes "), -1 when absent.
int IntAfter(string_view s, string_view key) {
  const auto at = s.find(key);
  if (at == string_view::npos) return -1;
  std::size_t i = at + key.size();
  int v = 0, n = 0;
  for (; i < s.size() && Digit(s[i]) && n < 9; ++i, ++n) v = v * 10 + (s[i] - '0');
  return n == 0 ? -1 : v;
}

string_view Trim(string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

// A network name NCCL or a plugin prints in full; a line cut short ("Using network Soc") is
// believed only when what is left is one of them.
bool KnownNetwork(string_view n) {
  return n == "IB" || n == "Socket" || n.starts_with("IBext") || n == "AWS Libfabric" ||
         n == "Libfabric" || n == "OFI" || n == "gIB" || n.starts_with("GPUDirectTCPX") ||
         n == "FasTrak" || n == "FastSocket";
}

// Where a network name was not believed because its line may be cut: the explanation says so.
void NoteCutName(Evidence& e) {
  if (e.line_cut && e.cut_net_at.empty())
    e.cut_net_at = e.source.substr(0, 200) + ":" + std::to_string(e.line_no);
}

// "2.21.5" from "NCCL version 2.21.5+cuda12.2" (and PyTorch's "NCCL version 2.14.3").
std::string VersionIn(string_view s) {
  const auto at = s.find("NCCL version ");
  if (at == string_view::npos) return "";
  std::size_t i = at + 13, j = i;
  while (j < s.size() && (Digit(s[j]) || s[j] == '.')) ++j;
  string_view v = s.substr(i, j - i);
  while (!v.empty() && v.back() == '.') v.remove_suffix(1);
  return std::count(v.begin(), v.end(), '.') >= 1 ? std::string(v) : "";
}

// "iface:a.b.c.d" entries of `NET/Socket : Using [0]eth0:10.0.0.1<0> [1]...`,
// `Bootstrap : Using eth0:10.0.0.1<0>` or `NET : Using interface lo:127.0.0.1<0>`: the address
// of the first one that is not loopback (the OOB/bootstrap IP that keys a node).
std::string FirstAddress(string_view list, bool& suspicious) {
  std::string first;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const auto lt = list.find('<', pos);
    if (lt == string_view::npos) break;
    auto start = list.rfind(' ', lt);
    start = start == string_view::npos ? 0 : start + 1;
    string_view entry = list.substr(start, lt - start);
    if (const auto b = entry.find(']'); b != string_view::npos) entry.remove_prefix(b + 1);
    const auto colon = entry.find(':');
    if (colon != string_view::npos) {
      const string_view iface = entry.substr(0, colon), ip = entry.substr(colon + 1);
      const bool loop = iface == "lo" || ip.starts_with("127.");
      if (loop || iface.starts_with("docker") || iface.starts_with("virbr") ||
          iface.starts_with("br-") || iface.starts_with("flannel"))
        suspicious = true;
      if (!loop && first.empty()) first = std::string(ip);
    }
    pos = lt + 1;
  }
  return first;
}

// `NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>` (2.4+, the
// plugin copies too; `[0]={[0] a:1/RoCE, [1] b:1/RoCE}` for merged devices, 2.20-2.23).
void ReadIbUsing(Evidence& e, ProcessState* p, string_view msg) {
  const auto oob = msg.find("OOB ");
  const string_view list = msg.substr(0, oob == string_view::npos ? msg.size() : oob);
  std::size_t pos = 0;
  bool any = false;  // from 2.24 the line is printed with an empty list too: no proof then
  while ((pos = list.find('/', pos)) != string_view::npos) {
    const string_view ll = list.substr(pos + 1);
    string_view layer;
    if (ll.starts_with("RoCE"))
      layer = "RoCE";
    else if (ll.starts_with("IB"))
      layer = "IB";
    else if (ll.starts_with("UNSPECIFIED"))
      layer = "UNSPECIFIED";
    if (!layer.empty()) {
      auto start = list.find_last_of(" ]", pos);
      start = start == string_view::npos ? 0 : start + 1;
      const std::string dev =
          std::string(list.substr(start, pos - start)) + "/" + std::string(layer);
      if (dev.find(':') != std::string::npos) {
        any = true;
        if (layer != "UNSPECIFIED") e.link_layers.insert(std::string(layer));
        if (e.devices.size() < 64 &&
            std::find(e.devices.begin(), e.devices.end(), dev) == e.devices.end())
          e.devices.push_back(dev);
        if (p) {
          if (p->facts.devices.size() < 32 &&
              std::find(p->facts.devices.begin(), p->facts.devices.end(), dev) ==
                  p->facts.devices.end())
            p->facts.devices.push_back(dev);
          if (layer != "UNSPECIFIED") p->facts.link_layer = std::string(layer);
        }
      }
    }
    ++pos;
  }
  if (any) e.Note(Signal::kIbDevices);
  if (oob != string_view::npos && p) {
    bool ignored = false;
    const std::string ip = FirstAddress(msg.substr(oob + 4), ignored);
    if (!ip.empty() && p->oob_ip.empty()) p->oob_ip = ip;
  }
}

// One port NCCL's IB transport accepted, one line each: `NET/IB: [0] mlx5_0:1/RoCE ` (2.3, the
// only device list that release prints) and, NET subsystem only, `NET/IB: [0]
// mlx5_0:uverbs0:1/RoCE provider=... speed=...` (2.21+). Both come after the NCCL_IB_HCA filter.
void ReadIbPort(Evidence& e, ProcessState* p, string_view msg) {
  string_view entry = msg.substr(msg.find(']') + 1);  // "NET/IB: [" is there
  while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
  entry = entry.substr(0, entry.find(' '));
  const auto slash = entry.rfind('/'), last_colon = entry.rfind(':', slash);
  if (slash == string_view::npos || last_colon == string_view::npos) return;
  const string_view layer = entry.substr(slash + 1);
  if (layer != "RoCE" && layer != "IB") return;
  // name:port/layer, without 2.21's verbs device name in the middle
  const std::string dev =
      std::string(entry.substr(0, entry.find(':'))) + std::string(entry.substr(last_colon));
  std::string list = " " + dev;
  ReadIbUsing(e, p, list);
}

// GIDs in verbs errors: `::ffff:a.b.c.d` (RoCE v2 IPv4) or a global IPv6 GID are RoCE.
void ReadGid(Evidence& e, string_view msg) {
  for (string_view key : {"localGid ", "local GID "}) {
    const auto at = msg.find(key);
    if (at == string_view::npos) continue;
    const string_view gid = msg.substr(at + key.size(), 48);
    if (gid.starts_with("::ffff:") ||
        (gid.find(':') != string_view::npos && !gid.starts_with("fe80") && !gid.starts_with("::")))
      e.link_layers.insert("RoCE");
  }
  if (const int gi = IntAfter(msg, "local GID index "); gi >= 0) e.gid_indexes.insert(gi);
}

// A channel line: `Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA`, `Ring 00 : 6 -> 2
// [receive] via NET/IB/0` (2.4), `... via P2P/CUMEM/read`, `via SHM/direct/direct`.
void ReadChannel(Evidence& e, ProcessState* p, string_view msg) {
  const auto via = msg.find(" via ");
  if (via == string_view::npos) return;
  const string_view how = msg.substr(via + 5);
  const bool send = Has(msg, "[send]"), recv = Has(msg, "[receive]");
  if (p) {  // the process's own rank: the sender of a send, the receiver of a receive
    const auto colon = msg.find(" : "), arrow = msg.find(" -> ");
    if (colon != string_view::npos && arrow != string_view::npos && arrow > colon) {
      const string_view from = msg.substr(colon + 3), to = msg.substr(arrow + 4);
      const int r = IntAfter(recv ? to : from, "");
      if (r >= 0 && p->ranks.size() < 64) p->ranks.insert(r);
    }
  }
  if (how.starts_with("NET/")) {
    string_view rest = how.substr(4);
    std::size_t end = 0;  // the name runs to a '/' before a digit ("AWS Libfabric/3")
    while (end < rest.size() &&
           !(rest[end] == '/' && end + 1 < rest.size() && Digit(rest[end + 1])))
      ++end;
    // NCCL always prints the device number after the name: without it the line was cut inside
    // the name ("via NET/So"), which proves no network.
    if (end == rest.size() || end == 0) return NoteCutName(e);
    const std::string name(rest.substr(0, end));
    e.channel_nets.insert(name);
    if (name != "Socket" || e.At(Signal::kNetChannel).proofs.empty()) e.Note(Signal::kNetChannel);
    if (p && std::find(p->facts.channel_nets.begin(), p->facts.channel_nets.end(), name) ==
                 p->facts.channel_nets.end())
      p->facts.channel_nets.push_back(name);
    if (name == "Socket" || !p || e.line_cut) return;  // a cut line may have lost "/GDRDMA"
    const bool gdr = Has(rest, "/GDRDMA");
    if (send) (gdr ? p->send_gdr : p->send_plain) += 1;
    if (recv) (gdr ? p->recv_gdr : p->recv_plain) += 1;
    return;
  }
  std::string kind;
  if (how.starts_with("P2P/MNNVL")) {
    e.mnnvl = true;
    kind = "P2P/MNNVL";
  } else if (how.starts_with("P2P/")) {
    auto end = how.find(' ');
    kind = std::string(how.substr(0, end));
  } else if (how.starts_with("SHM") || how.starts_with("direct shared memory")) {
    kind = "SHM";
  } else if (how.starts_with("COLLNET")) {
    kind = "COLLNET";
  }
  if (!kind.empty()) {
    if (e.intra.size() < 16) e.intra.insert(kind);
    if (p && std::find(p->facts.intra.begin(), p->facts.intra.end(), kind) == p->facts.intra.end())
      p->facts.intra.push_back(kind);
  }
}

// Messages that count whether INFO or WARN (libibverbs moved from WARN to INFO in 2.11).
void Message(Evidence& e, ProcessState* p, const Record& r) {
  const string_view m = r.message;
  auto note = [&](Signal s) { e.Note(s); };
  if (const auto v = VersionIn(m); !v.empty()) {
    if (e.version.empty()) e.version = v;
    if (p) p->facts.version = v;
  }
  if (m.starts_with("Channel ") || m.starts_with("Ring ")) return ReadChannel(e, p, m);
  if (m.starts_with("Using network ") || m.starts_with("Using internal Network ") ||
      m.starts_with("Assigned NET plugin ")) {
    std::string_view net = m.starts_with("Using network ")   ? m.substr(14)
                           : m.starts_with("Using internal") ? m.substr(23)
                                                             : m.substr(20);
    if (const auto to = net.find(" to comm"); to != string_view::npos) net = net.substr(0, to);
    net = Trim(net);
    if (e.line_cut && !KnownNetwork(net)) return NoteCutName(e);
    if (!net.empty()) {
      e.Note(Signal::kNetLine);
      e.nets.insert(std::string(net));
      if (p) p->facts.net = std::string(net);
    }
    return;
  }
  if (Has(m, "Failed to open libibverbs") || m.starts_with("Count not open") ||
      m.starts_with("dlvsym failed"))
    return note(Signal::kLibibverbsMissing);
  if (Has(m, "No device found")) return note(Signal::kNoDevice);
  if (Has(m, "Unable to open device")) return note(Signal::kUnableToOpen);
  if (m.starts_with("NCCL_IB_HCA set")) return note(Signal::kHcaSet);
  if (m.starts_with("NCCL_IB_DISABLE set by environment to ")) {
    if (IntAfter(m, "to ") > 0) note(Signal::kIbDisabled);
    return;
  }
  if (m.starts_with("NCCL_NET set by environment to ") && Has(m, "Socket"))
    return note(Signal::kIbDisabled);
  if (m.starts_with("NCCL_IB_GID_INDEX set by environment to ")) {
    if (const int gi = IntAfter(m, "to "); gi >= 0) {
      e.gid_indexes.insert(gi);
      if (p) p->facts.gid_index = gi;
    }
    return;
  }
  if (m.starts_with("NET/IB") && Has(m, " Using") && Has(m, "OOB")) {
    return ReadIbUsing(e, p, m);
  }
  if (m.starts_with("NET/IB: [")) return ReadIbPort(e, p, m);
  // The connect line: `qpn` up to 2.29, `qp_num` from 2.30.
  if (m.starts_with("NET/IB: ") && Has(m, " GID ") && (Has(m, "qpn") || Has(m, "qp_num"))) {
    if (Has(m, "(80FE/")) note(Signal::kLinkLocalGid);
    if (const int gi = IntAfter(m, " GID "); gi >= 0) {  // the connect line: the index in use
      e.gid_indexes.insert(gi);
      if (p) p->facts.gid_index = gi;
    }
    return;
  }
  if (m.starts_with("NET/Socket : Using") || m.starts_with("NET : Using interface")) {
    bool suspicious = false;
    const std::string ip = FirstAddress(m, suspicious);
    if (suspicious) note(Signal::kSocketSuspicious);
    if (p && !ip.empty() && p->socket_ip.empty()) p->socket_ip = ip;
    return;
  }
  if (m.starts_with("Bootstrap : Using") || m.starts_with("Bootstrap: Using")) {
    bool ignored = false;
    const std::string ip = FirstAddress(m, ignored);
    if (p && !ip.empty() && p->bootstrap_ip.empty()) p->bootstrap_ip = ip;
    return;
  }
  if (Has(m, "GPU Direct RDMA")) {
    if (m.starts_with("NET/Socket")) return;  // printed for socket devices too: not a NIC
    // Peer memory missing: `Disabled for HCA` (2.8+) and 2.3's `Disabled for GPU 0 / HCA mlx5_0
    // (no module or not supported by GPU)`; a distance is the topology.
    if ((Has(m, "Disabled for HCA") && !Has(m, "distance")) ||
        (Has(m, "Disabled for GPU") && Has(m, "(no module")))
      return note(Signal::kGdrDisabledHca);
    if (Has(m, "Disabled for GPU")) return note(Signal::kGdrDisabledDistance);
    if (Has(m, "Enabled for")) return note(Signal::kGdrEnabled);
    return;
  }
  if (m.starts_with("Connected all rings")) {
    if (const int g = IntAfter(m, " GDR "); g >= 0) e.ring_gdr = std::max(e.ring_gdr, g);
    return;
  }
  if (Has(m, "Init COMPLETE")) note(Signal::kInitComplete);
  if (Has(m, " rank ") || m.starts_with("rank ")) {  // comm lines of every release
    const int rank = m.starts_with("rank ") ? IntAfter(m, "rank ") : IntAfter(m, " rank ");
    int nranks = IntAfter(m, " nranks ");
    if (nranks < 0) nranks = IntAfter(m, " nRanks ");
    if (nranks > 0) {
      if (p && rank >= 0 && p->ranks.size() < 64) p->ranks.insert(rank);
      e.max_nranks = std::max(e.max_nranks, nranks);
      if (p) p->facts.nranks = std::max(p->facts.nranks.value_or(0), nranks);
      if (const int nn = IntAfter(m, " nNodes "); nn > 0) {
        e.Note(Signal::kNodesLine);
        e.max_nnodes = std::max(e.max_nnodes, nn);
        if (p) p->facts.nnodes = nn;
      }
      if (IntAfter(m, " MNNVL ") > 0) e.mnnvl = true;
      return;
    }
  }
  // Net plugins.
  if (Has(m, "Failed to find ncclNetPlugin symbol") || Has(m, "symbols v4 and lower") ||
      Has(m, "is unsupported") || m.starts_with("Failed to initialize any NET plugin") ||
      Has(m, "Plug-in core initialization failed") || Has(m, "Timeout: RxDM not ready"))
    return note(Signal::kPluginFailed);
  if (m.starts_with("Failed to initialize NET plugin ")) {
    const string_view name = Trim(m.substr(32));
    if (name != "IB" && name != "Socket") note(Signal::kPluginFailed);
    return;
  }
  if (m.starts_with("NET/OFI")) {
    if (Has(m, "fi_getinfo") && Has(m, "No data available")) return note(Signal::kOfiNoDevice);
    if (Has(m, "failed") || Has(m, "Couldn't open AV")) return note(Signal::kPluginFailed);
    e.plugins.insert("aws-ofi-nccl");
    return;
  }
  if (m.starts_with("NET/gIB")) e.plugins.insert("gIB");
  if (m.starts_with("NET/GPUDirectTCPX")) e.plugins.insert("GPUDirectTCPX");
  if (m.starts_with("NET/FasTrak")) {
    e.plugins.insert("FasTrak");
    if (Has(m, "RxDM not ready after")) note(Signal::kRxdmWait);
  }
  if (m.starts_with("P2P plugin ")) e.plugins.insert("nccl-rdma-sharp-plugins");
}

// WARN lines that stop the job (SIGNALS 2.9); the others are fallback causes or harmless.
void Warn(Evidence& e, string_view m) {
  auto note = [&](Signal s) { e.Note(s); };
  if (Has(m, "Got completion") || Has(m, "Got CQE with error")) {
    ReadGid(e, m);
    int status = IntAfter(m, "status=");
    if (status < 0) {  // 2.28.7+: status=NAME(N)
      if (const auto at = m.find("status="); at != string_view::npos)
        status = IntAfter(m.substr(at), "(");
    }
    if (status < 0) status = IntAfter(m, "with error ");
    return note(status == 12 ? Signal::kCompletionRetry : Signal::kCompletionError);
  }
  if (Has(m, "Call to ibv_modify_qp")) {
    ReadGid(e, m);
    if (Has(m, "No such device") || Has(m, "Invalid argument")) return note(Signal::kModifyQpGid);
    if (Has(m, "timed out") || Has(m, "unreachable")) return note(Signal::kModifyQpFabric);
    return note(Signal::kUnclassifiedWarn);
  }
  if (Has(m, "ctrl timeout")) return note(Signal::kModifyQpFabric);  // GPUDirect-TCPX rx/tx
  if (Has(m, "Call to ibv_") || Has(m, "ibv_reg_mr")) return note(Signal::kVerbsResource);
  if (Has(m, "shared memory segment") || Has(m, "failed to extend") ||
      Has(m, "posix_fallocate failed"))
    return note(Signal::kShm);
  if (Has(m, "Cuda failure")) return note(Signal::kCuda);
  if (Has(m, "no socket interface found") || Has(m, "No usable listening interface") ||
      Has(m, "Socket creation failed") || Has(m, "is neither AF_INET"))
    return note(Signal::kSocketInterface);
  if (Has(m, "Failed to find CUDA library") || Has(m, "Failed to open libibverbs") ||
      Has(m, "Unable to open device") || Has(m, "dlvsym failed") || Has(m, "NET/Plugin"))
    return;  // harmless here, or a fallback cause read by Message()
  note(Signal::kUnclassifiedWarn);
}

// A second `NCCL version` record of one process (host:pid) starts a new run: a restarted
// container whose previous log comes first (NCCL prints the banner once per process). It is set
// apart only when every process read so far is on that host (one pod's log, previous then
// current): other pods' lines are mixed into the job-wide evidence and cannot be told apart.
void MaybeRestart(Evidence& e, const Record& r) {
  if (r.host.empty() || !r.message.starts_with("NCCL version ")) return;
  const auto it = e.processes.find(std::string(r.host) + ":" + std::string(r.pid));
  if (it == e.processes.end() || it->second.facts.version.empty()) return;
  const std::string at = e.source.substr(0, 200) + ":" + std::to_string(e.line_no);
  for (const auto& [key, p] : e.processes)
    if (p.facts.host != r.host) {
      if (e.restart_unsplit.empty()) e.restart_unsplit = it->first + " at " + at;
      return;
    }
  Evidence fresh;
  fresh.source = e.source;
  fresh.raw = e.raw;
  fresh.line_no = e.line_no;
  fresh.order = e.order;
  fresh.lines = e.lines;
  fresh.records = e.records;
  fresh.lines_cut = e.lines_cut;
  fresh.line_cut = e.line_cut;
  fresh.previous_runs = e.previous_runs + 1;
  fresh.last_run_from = at;
  e = std::move(fresh);
}

}  // namespace

void Evidence::Note(Signal s) {
  std::string_view text = raw.substr(std::min(quote_from, raw.size()));
  auto& seen = At(s);
  if (seen.count++ == 0) seen.first = order;
  if (seen.proofs.size() < kMaxProofsPerSignal) {
    if (text.size() > kMaxProofBytes) {
      // Cut at a character boundary: not inside a UTF-8 sequence the line itself holds whole.
      std::size_t n = kMaxProofBytes;
      while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
      text = text.substr(0, n);
    }
    seen.proofs.push_back({source, line_no, std::string(text)});
  }
}

void Observe(Evidence& e, const Line& line) {
  ++e.order;
  e.quote_from = 0;
  if (line.records.empty()) {
    const string_view t = Trim(line.text);
    if (e.after_last_error && !t.empty()) {
      // The framework repeats NCCL's last WARN after "Last error:" (NCCL_DEBUG unset).
      e.after_last_error = false;
      Warn(e, t);
      return;
    }
    if (t == "Last error:") {
      e.after_last_error = true;
      return;
    }
    if (const auto v = VersionIn(t); !v.empty() && e.version.empty()) e.version = v;
    ObserveOther(e, t);
    return;
  }
  for (const auto& r : line.records) {
    ++e.records;
    MaybeRestart(e, r);
    if (e.raw.size() > kMaxProofBytes) {  // quote from the record's header, which is in `raw`
      const char* from = !r.host.empty() ? r.host.data() : r.message.data();
      if (from >= e.raw.data() && from <= e.raw.data() + e.raw.size())
        e.quote_from = static_cast<std::size_t>(from - e.raw.data());
    }
    ProcessState* p = nullptr;
    if (!r.host.empty()) {
      std::string key = std::string(r.host) + ":" + std::string(r.pid);
      auto it = e.processes.find(key);
      if (it == e.processes.end() && e.processes.size() < kMaxProcesses) {
        it = e.processes.emplace(std::move(key), ProcessState{}).first;
        it->second.facts.host = std::string(r.host);
        it->second.facts.pid = std::string(r.pid);
      } else if (it == e.processes.end()) {
        e.processes_capped = true;
      }
      if (it != e.processes.end()) p = &it->second;
    }
    if (p) {
      if (r.cuda_dev >= 0 && p->devs.size() < 64) p->devs.insert(r.cuda_dev);
      if (line.launcher_rank >= 0 && p->ranks.size() < 64) p->ranks.insert(line.launcher_rank);
    }
    if (r.level == Level::kWarn) {
      Warn(e, r.message);
    }
    Message(e, p, r);
  }
}

}  // namespace rw::verify
