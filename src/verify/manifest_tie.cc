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
  intended += m.rdma ? " (RDMA)" : " (no RDMA device)";
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
    t.matches = rdma_run == m.rdma;
    if (m.rdma && !rdma_run) {
      used += Because(v);
      if (v.outcome == Outcome::kUnknown || v.outcome == Outcome::kOk) {
        v.outcome = Outcome::kFellBack;  // RDMA was intended, TCP carried the data
        if (v.cause == Cause::kNone) v.cause = Cause::kUnknown;
      }
    } else if (!m.rdma && rdma_run) {
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
