#include "rdma_webhook/verify/manifest_tie.h"

namespace rw::verify {
namespace {

std::string Because(const Verdict& v) {
  if (v.cause == Cause::kUnknown || v.cause == Cause::kNone) return "";
  return " because " + std::string(Describe(v.cause).meaning) + " (" +
         std::string(ToString(v.cause)) + ")";
}

}  // namespace

Tie TieToManifest(Verdict& v, const ManifestView& m) {
  Tie t;
  std::string intended = "the manifest puts " + m.workload + " on the " + m.path + " path";
  intended += m.rdma ? " (RDMA)" : m.path == "plugin" ? " (a network plugin)" : " (no RDMA device)";
  std::string used;
  if (v.single_node) {
    used = "the run was on a single node, so it shows no inter-node transport";
  } else if (v.inter_node == "unknown" || v.inter_node.starts_with("none")) {
    used = v.inter_node.starts_with("none") ? "the pod never got to NCCL"
                                            : "the log does not show which transport NCCL used";
  } else {
    t.decided = true;
    used = "NCCL used " + v.inter_node + (v.net.empty() ? "" : " (NET/" + v.net + ")");
    const bool rdma_run = IsRdmaTransport(v.inter_node);
    // The plugin path (aws-ofi-nccl, gIB, TCPX/TCPXO, a DRA driver whose NICs NCCL reaches
    // through a plugin) asks for no RDMA device of its own, yet means a network plugin carries
    // the data: any network but Socket is the run it intended, Socket is its fallback.
    const bool plugin_path = m.path == "plugin";
    const bool as_meant = plugin_path ? v.inter_node != "Socket" : rdma_run == m.rdma;
    t.matches = as_meant;
    if ((m.rdma || plugin_path) && !as_meant) {
      used += Because(v);
      if (v.outcome == Outcome::kUnknown || v.outcome == Outcome::kOk) {
        v.outcome = Outcome::kFellBack;  // RDMA was intended, TCP carried the data
        if (v.cause == Cause::kNone) v.cause = Cause::kUnknown;
      }
    } else if (!m.rdma && !plugin_path && rdma_run) {
      used += ", although the manifest asks for no RDMA device";
    }
  }
  t.text = intended + "; " + used;
  if (!m.findings.empty() && (!t.decided || !t.matches || v.outcome != Outcome::kOk)) {
    t.text += "; the manifest's findings:";
    for (const auto& f : m.findings) t.text += " " + f + ";";
    t.text.pop_back();
  }
  return t;
}

}  // namespace rw::verify
