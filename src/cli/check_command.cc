#include <unistd.h>

#include <iostream>
#include <iterator>

#include "check_reports.h"
#include "commands.h"
#include "common.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::cli {
namespace {

using nlohmann::json;
using rules::Severity;

json ToJson(const Checked& c) {
  json findings = json::array();
  for (const auto& f : c.diagnosis.findings)
    findings.push_back({{"rule", f.rule},
                        {"severity", rules::ToString(f.severity)},
                        {"message", f.message},
                        {"fix", f.fix},
                        {"pointer", f.pointer}});
  return {{"source", c.source},
          {"apiVersion", c.api_version},
          {"kind", c.kind},
          {"namespace", c.ns},
          {"name", c.name},
          {"path", policy::ToString(c.diagnosis.path)},
          {"rdma", c.diagnosis.rdma},
          {"enforcement", policy::ToString(c.diagnosis.enforcement)},
          {"skipped", c.diagnosis.skipped},
          {"evidence", c.diagnosis.evidence},
          {"findings", std::move(findings)}};
}

struct Style {
  bool color;
  std::string operator()(const char* code, const std::string& text) const {
    return color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
};

// One block per document, readable at a glance: what it is, its path, whether RDMA is really
// used, why we think so, and each finding with its fix.
void PrintText(const Checked& c, const Style& s) {
  const auto& d = c.diagnosis;
  std::cout << s("1", c.source) << "  " << (c.kind.empty() ? "(no kind)" : c.kind) << " " << c.ns
            << "/" << (c.name.empty() ? "(unnamed)" : c.name) << "\n";
  std::cout << "  path: " << s("1", std::string(policy::ToString(d.path))) << "   rdma: "
            << (d.rdma ? s("32", "yes") : "no")
            // Enforcement speaks of errors in a workload; other kinds are never judged.
            << "   enforcement: "
            << (c.judged ? std::string(policy::ToString(d.enforcement)) : "not judged")
            << (d.skipped ? "   (opted out: rdma-webhook.io/skip)" : "") << "\n";
  if (!d.evidence.empty()) {
    std::cout << "  evidence:\n";
    for (const auto& e : d.evidence) std::cout << "    - " << e << "\n";
  }
  for (const auto& f : d.findings) {
    const bool error = f.severity == Severity::kError;
    std::cout << "  " << (error ? s("31;1", "ERROR  ") : s("33;1", "WARNING")) << " "
              << s("1", f.rule) << "  at " << (f.pointer.empty() ? "/" : f.pointer);
    if (const auto p = c.Where(f.pointer)) std::cout << " (" << c.file << ":" << p->line << ")";
    std::cout << "\n";
    // The rule table's findings end their message with " Fix: <fix>"; the fix gets its own line.
    std::string message = f.message;
    const std::string glued = " Fix: " + f.fix;
    if (message.size() >= glued.size() &&
        message.compare(message.size() - glued.size(), glued.size(), glued) == 0)
      message.erase(message.size() - glued.size());
    std::cout << "      " << message << "\n      " << s("36", "fix: " + f.fix) << "\n";
  }
  if (d.findings.empty()) std::cout << "  " << s("32", "ok: no findings") << "\n";
  // check judges the manifest as written; the webhook would first rewrite it.
  if (c.changes > 0)
    std::cout << "  "
              << s("36", "in namespace " + c.ns + " the webhook would apply " +
                             std::to_string(c.changes) + (c.changes == 1 ? " change" : " changes") +
                             ": run `rdma-webhook mutate` to see them")
              << "\n";
  std::cout << "\n";
}

// A repeated mapping key: kubectl keeps the last value without a word (the API server never
// sees the duplicate), so the earlier value, perhaps the one meant, is lost. Never an error:
// the object is what kubectl would send.
rules::Finding DuplicateKeyFinding(const codec::DuplicateKey& d) {
  const std::string line = std::to_string(d.line), earlier = std::to_string(d.earlier_line);
  const bool same_line = d.line == d.earlier_line;  // a flow mapping: {a: 1, a: 2}
  return {
      "duplicate-key", Severity::kWarning,
      "key '" + d.key + "' is repeated " +
          (same_line ? "on line " + line : "at line " + line + " (also at line " + earlier + ")") +
          ": the last value is used, as kubectl does silently, and the earlier one is lost",
      "remove the earlier '" + d.key + "' " + (same_line ? "on" : "at") + " line " + earlier +
          (same_line ? "" : " (or merge the two into the one at line " + line + ")"),
      d.pointer};
}

// How many patch operations the webhook would apply to the object (0 when it cannot tell).
std::size_t ChangesInNamespace(const json& object, const policy::Policy& policy,
                               const std::string& ns) {
  try {
    return mutate::Mutate(object, policy, ns).patch.size();
  } catch (const workload::ManifestError&) {
    return 0;  // the diagnosis reports what is wrong with the object
  }
}

int RunCheck(const ManifestFlags& flags) {
  const auto policy = LoadPolicyOrReport(flags.policy_file);
  if (!policy) return kExitError;
  std::vector<Checked> results;
  std::vector<InputError> errors_read;
  const bool text = flags.output == "text";
  // Positions only where they are shown: text, SARIF and JUnit (not JSON, whose pointers suffice).
  const auto positions =
      flags.output == "json" ? codec::Positions::kSkip : codec::Positions::kRecord;
  bool any_document = false;
  for (auto& doc : ReadInputs(ManifestInputs(flags), positions)) {
    if (!doc.object) {
      errors_read.push_back({doc.source, doc.error, doc.file});
      continue;
    }
    any_document = true;
    try {
      const auto w = workload::Workload::Read(*doc.object, *policy, flags.ns);
      Checked c{
          doc.source, doc.file, w.api_version, w.kind, w.ns, w.name, rules::Diagnose(w, *policy)};
      c.judged = w.kind_row != nullptr;
      c.positions = std::move(doc.positions);
      if (text) c.changes = ChangesInNamespace(*doc.object, *policy, flags.ns);
      // Reading problems first: they may explain the findings that follow.
      std::vector<rules::Finding> findings;
      for (const auto& d : doc.duplicate_keys) findings.push_back(DuplicateKeyFinding(d));
      rules::ApplyRuleLevels(findings, policy->ForNamespace(w.ns));  // e.g. duplicate-key: off
      findings.insert(findings.end(), std::make_move_iterator(c.diagnosis.findings.begin()),
                      std::make_move_iterator(c.diagnosis.findings.end()));
      c.diagnosis.findings = std::move(findings);
      results.push_back(std::move(c));
    } catch (const workload::ManifestError& e) {
      errors_read.push_back({doc.source, e.what(), doc.file});
    }
  }
  // An empty file (or only comments, or only empty documents) is no error, but say so.
  if (!any_document && errors_read.empty())
    std::cerr << "note: no documents in the input: nothing to check\n";
  std::size_t errors = 0, warnings = 0;
  for (const auto& r : results) {
    errors += r.diagnosis.Count(Severity::kError);
    warnings += r.diagnosis.Count(Severity::kWarning);
  }
  if (flags.output == "json") {
    json out = {{"results", json::array()}};
    for (const auto& r : results) out["results"].push_back(ToJson(r));
    out["summary"] = {{"documents", results.size()}, {"errors", errors}, {"warnings", warnings}};
    if (!errors_read.empty()) {
      out["errors"] = json::array();
      for (const auto& e : errors_read)
        out["errors"].push_back({{"source", e.source}, {"message", e.message}});
    }
    std::cout << out.dump(2) << "\n";
  } else if (flags.output == "sarif") {
    std::cout << ToSarif(results, errors_read).dump(2) << "\n";
  } else if (flags.output == "junit") {
    std::cout << ToJunit(results, errors_read);
  } else {
    const Style style{isatty(STDOUT_FILENO) == 1};
    for (const auto& r : results) PrintText(r, style);
    std::cout << results.size() << (results.size() == 1 ? " document, " : " documents, ") << errors
              << (errors == 1 ? " error, " : " errors, ") << warnings
              << (warnings == 1 ? " warning" : " warnings") << "\n";
  }
  PrintInputErrors(errors_read);
  if (!errors_read.empty()) return kExitError;
  return errors > 0 ? kExitFindings : kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& root, std::function<int()>& run) {
  auto flags = std::make_shared<ManifestFlags>();
  auto* cmd =
      root.add_subcommand("check", "Diagnose manifests as written: path, RDMA, evidence, findings");
  AddManifestFlags(*cmd, *flags, "text", {"text", "json", "sarif", "junit"});
  cmd->callback([flags, &run] {
    RequireInputs(*flags);
    run = [flags] { return RunCheck(*flags); };
  });
}

}  // namespace rw::cli
