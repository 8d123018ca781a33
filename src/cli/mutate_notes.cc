#include "mutate_notes.h"

#include <algorithm>

namespace rw::cli {
namespace {

using rules::Severity;

// Why the webhook wrote nothing: the first reason that holds, in the order the mutator checks.
std::string WhyUnchanged(const workload::Workload& w, const mutate::Mutation& m,
                         const rules::Diagnosis& result, const policy::NamespacePolicy& ns) {
  const std::string where = "namespace " + w.ns;
  if (m.skipped) return "it opts out (rdma-webhook.io/skip) and " + where + " allows that";
  if (ns.mode == policy::Mode::kOff)
    return where + " has mode off: the webhook changes nothing there";
  if (w.kind_row == nullptr)
    return "kind " + w.kind +
           " has no row in the kinds table: its templates, found by shape, are judged but "
           "never mutated (add a `kinds:` entry to the policy to mutate them)";
  if (m.waits_on_claims)
    return "a DRA claim of the pod could not be read (its devices may be the NICs), so the "
           "webhook plans nothing until it can: give the claim's template and DeviceClass as "
           "inputs, or --cluster";
  const bool conflict =
      std::any_of(result.findings.begin(), result.findings.end(),
                  [](const rules::Finding& f) { return f.rule == "policy-conflict"; });
  const auto unknown_nic =
      std::find_if(result.findings.begin(), result.findings.end(),
                   [](const rules::Finding& f) { return f.rule == "unknown-nic-resource"; });
  if (unknown_nic != result.findings.end())
    return "a GPU container claims a NIC resource the policy does not know, so the webhook "
           "plans nothing for it (unknown-nic-resource: " +
           unknown_nic->fix + ")";
  if (result.path == policy::Path::kNone && !conflict) {
    // The last evidence line is the reading that concludes (no RDMA path, GPUs only through
    // DRA claims); the first is only the first sign seen.
    std::string why = "not judged as an RDMA workload";
    if (!result.evidence.empty()) why += ": " + result.evidence.back();
    return why;
  }
  const std::string mode(policy::ToString(ns.mode));
  if (result.path != policy::Path::kNone && result.path != policy::Path::kUnknown &&
      result.path != policy::Path::kMixed && result.path != policy::ModePath(ns.mode))
    return "it is on the " + std::string(policy::ToString(result.path)) + " path, not " + where +
           "'s mode " + mode +
           ": a template on another path is left as written, and allowedPaths judges it";
  if (result.Count(Severity::kError) > 0)
    return "what it sets conflicts with " + where + "'s mode " + mode +
           ", so the webhook leaves it as written for validation to judge";
  return "it already agrees with " + where + "'s mode " + mode;
}

}  // namespace

std::vector<std::string> MutateNotes(const std::string& source, const workload::Workload& w,
                                     const mutate::Mutation& m, const rules::Diagnosis& result,
                                     const policy::Policy& policy) {
  std::vector<std::string> lines;
  if (w.kind_row == nullptr && w.templates.empty()) return lines;
  if (m.patch.empty())
    lines.push_back("note: " + source +
                    ": unchanged: " + WhyUnchanged(w, m, result, policy.ForNamespace(w.ns)));
  for (const auto& f : result.findings)
    if (f.severity == Severity::kError)
      lines.push_back("error: " + source + ": " + f.rule + ": " + f.Text());
  return lines;
}

}  // namespace rw::cli
