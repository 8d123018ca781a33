#pragma once
// The run against the manifest: what `check` says the workload should use (its path and
// whether RDMA is really asked for) compared with what NCCL did. Pure.
#include <string>
#include <vector>

#include "rdma_webhook/verify/verdict.h"

namespace rw::verify {

// What the diagnosis of the workload says, in the CLI's words (the CLI fills it from
// rules::Diagnose, so verify needs no rules of its own).
struct ManifestView {
  std::string workload;               // "Job train/llama"
  std::string path;                   // sriov, shared, hostNetwork, plugin, tcp, none, mixed ...
  bool rdma = false;                  // the manifest really gets an RDMA device
  std::vector<std::string> findings;  // "rule: message" of its error findings
};

struct Tie {
  bool decided = false;  // the log showed enough to compare
  bool matches = false;
  std::string text;  // "the manifest puts ... ; NCCL used ... because ..."
};

// Compares, and turns a Socket run of a workload meant for RDMA into a fallback (the manifest
// says RDMA was intended even when the log shows no reason). `v` may be changed that way.
Tie TieToManifest(Verdict& v, const ManifestView& m);

}  // namespace rw::verify
