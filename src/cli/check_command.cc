#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "common.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::cli {
namespace {

using nlohmann::json;
using rules::Severity;

struct Checked {
  std::string source;
  std::string api_version, kind, ns, name;
  rules::Diagnosis diagnosis;
};

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
  std::cout << "  path: " << s("1", std::string(policy::ToString(d.path)))
            << "   rdma: " << (d.rdma ? s("32", "yes") : "no")
            << "   enforcement: " << policy::ToString(d.enforcement)
            << (d.skipped ? "   (opted out: rdma-webhook.io/skip)" : "") << "\n";
  if (!d.evidence.empty()) {
    std::cout << "  evidence:\n";
    for (const auto& e : d.evidence) std::cout << "    - " << e << "\n";
  }
  for (const auto& f : d.findings) {
    const bool error = f.severity == Severity::kError;
    std::cout << "  " << (error ? s("31;1", "ERROR  ") : s("33;1", "WARNING")) << " "
              << s("1", f.rule) << "  at " << (f.pointer.empty() ? "/" : f.pointer) << "\n";
    std::string message = f.message;
    const auto fix_at = message.rfind(" Fix: ");
    if (fix_at != std::string::npos) message.erase(fix_at);
    std::cout << "      " << message << "\n      " << s("36", "fix: " + f.fix) << "\n";
  }
  if (d.findings.empty()) std::cout << "  " << s("32", "ok: no findings") << "\n";
  std::cout << "\n";
}

int RunCheck(const ManifestFlags& flags) {
  const auto policy = LoadPolicyOrReport(flags.policy_file);
  if (!policy) return kExitError;
  Inputs inputs = ReadInputs(flags.inputs);
  std::vector<Checked> results;
  for (const auto& doc : inputs.documents) {
    try {
      const auto w = workload::Workload::Read(doc.object, *policy, flags.ns);
      Checked c{doc.source, w.api_version, w.kind, w.ns, w.name, rules::Diagnose(w, *policy)};
      results.push_back(std::move(c));
    } catch (const workload::ManifestError& e) {
      inputs.errors.push_back({doc.source, e.what()});
    }
  }
  std::size_t errors = 0, warnings = 0;
  for (const auto& r : results) {
    errors += r.diagnosis.Count(Severity::kError);
    warnings += r.diagnosis.Count(Severity::kWarning);
  }
  if (flags.output == "json") {
    json out = {{"results", json::array()}};
    for (const auto& r : results) out["results"].push_back(ToJson(r));
    out["summary"] = {{"documents", results.size()}, {"errors", errors}, {"warnings", warnings}};
    if (!inputs.errors.empty()) {
      out["errors"] = json::array();
      for (const auto& e : inputs.errors)
        out["errors"].push_back({{"source", e.source}, {"message", e.message}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
    const Style style{isatty(STDOUT_FILENO) == 1};
    for (const auto& r : results) PrintText(r, style);
    std::cout << results.size() << (results.size() == 1 ? " document, " : " documents, ") << errors
              << (errors == 1 ? " error, " : " errors, ") << warnings
              << (warnings == 1 ? " warning" : " warnings") << "\n";
  }
  PrintInputErrors(inputs.errors);
  if (!inputs.errors.empty()) return kExitError;
  return errors > 0 ? kExitFindings : kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& root, std::function<int()>& run) {
  auto flags = std::make_shared<ManifestFlags>();
  auto* cmd =
      root.add_subcommand("check", "Diagnose manifests as written: path, RDMA, evidence, findings");
  AddManifestFlags(*cmd, *flags, "text", {"text", "json"});
  cmd->callback([flags, &run] { run = [flags] { return RunCheck(*flags); }; });
}

}  // namespace rw::cli
