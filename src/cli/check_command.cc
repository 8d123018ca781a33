#include <unistd.h>

#include <iostream>
#include <optional>

#include "check_reports.h"
#include "commands.h"
#include "common.h"
#include "judge.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::cli {
namespace {

using nlohmann::json;
using rules::Severity;

int RunCheck(const ManifestFlags& flags) {
  const auto policy = LoadPolicyOrReport(flags.policy_file);
  if (!policy) return kExitError;
  // Text is printed as each document is judged; the machine formats are one document written at
  // the end, so their results are held (each with only the positions its findings need).
  std::vector<Checked> results;
  std::optional<CheckJsonWriter> json_writer;
  if (flags.output == "json") json_writer.emplace();
  std::vector<InputError> errors_read;
  const bool text = flags.output == "text";
  const bool color = text && isatty(STDOUT_FILENO) == 1;
  // Positions only where they are shown: text, SARIF and JUnit (not JSON, whose pointers suffice).
  const auto positions =
      flags.output == "json" ? codec::Positions::kSkip : codec::Positions::kRecord;
  bool any_document = false;
  std::size_t documents = 0, errors = 0, warnings = 0;
  ForEachInput(ManifestInputs(flags), positions, [&](InputDocument&& doc) {
    if (!doc.object) {
      errors_read.push_back({doc.source, doc.error, doc.file});
      return;
    }
    any_document = true;
    const std::string source = doc.source, file = doc.file;  // `doc` is moved into Judge
    try {
      Checked c = Judge(std::move(doc), *policy, flags.ns, text);
      ++documents;
      errors += c.diagnosis.Count(Severity::kError);
      warnings += c.diagnosis.Count(Severity::kWarning);
      if (text) {
        PrintText(c, color);
      } else if (json_writer) {
        json_writer->Add(c);
      } else if (flags.output == "junit" || !c.diagnosis.findings.empty()) {
        c.diagnosis.evidence.clear();  // SARIF and JUnit do not show it; SARIF only findings
        results.push_back(std::move(c));
      }
    } catch (const workload::ManifestError& e) {
      errors_read.push_back({source, e.what(), file});
    }
  });
  // An empty file (or only comments, or only empty documents) is no error, but say so.
  if (!any_document && errors_read.empty())
    std::cerr << "note: no documents in the input: nothing to check\n";
  if (flags.output == "json") {
    json_writer->Finish(errors_read);
  } else if (flags.output == "sarif") {
    std::cout << ToSarif(results, errors_read).dump(2) << "\n";
  } else if (flags.output == "junit") {
    std::cout << ToJunit(results, errors_read);
  } else {
    std::cout << CountsLine(documents, "document", errors, warnings) << "\n";
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
