#include <unistd.h>

#include <iostream>
#include <optional>

#include "check_reports.h"
#include "cluster_catalogue.h"
#include "commands.h"
#include "common.h"
#include "judge.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::cli {
namespace {

using nlohmann::json;
using rules::Severity;

struct CheckFlags : ManifestFlags {
  bool verbose = false;  // every document's block, clean ones too
  bool quiet = false;    // only the finding lines that fail (--fail-on), no blocks, no summary
};

int RunCheck(const CheckFlags& flags) {
  const auto policy = LoadPolicyOrReport(flags.policy_file);
  if (!policy) return kExitError;
  const auto catalogue = ManifestCatalogueOrReport(flags);
  if (!catalogue) return kExitError;
  // Text is printed as each document is judged; the machine formats are one document written at
  // the end, so their results are held (each with only the positions its findings need).
  std::vector<Checked> results;
  std::optional<CheckJsonWriter> json_writer;
  if (flags.output == "json") json_writer.emplace();
  std::vector<InputError> errors_read;
  const bool text = flags.output == "text";
  const bool color = text && UseColor(STDOUT_FILENO);
  // Positions only where they are shown: text, SARIF and JUnit (not JSON, whose pointers suffice).
  const auto positions =
      flags.output == "json" ? codec::Positions::kSkip : codec::Positions::kRecord;
  bool any_document = false;
  std::size_t documents = 0, errors = 0, warnings = 0, failing = 0, unreadable = 0;
  const DocumentVisitor visit = [&](InputDocument&& doc) {
    if (!doc.object) {
      unreadable += doc.whole_file ? 0 : 1;  // a missing file is no document
      errors_read.push_back({doc.source, doc.error, doc.file});
      return;
    }
    any_document = true;
    const std::string source = doc.source, file = doc.file;  // `doc` is moved into Judge
    try {
      Checked c = Judge(std::move(doc), *policy, flags.ns, text && !flags.quiet, *catalogue);
      ++documents;
      errors += c.diagnosis.Count(Severity::kError);
      warnings += c.diagnosis.Count(Severity::kWarning);
      for (const auto& f : c.diagnosis.findings) failing += FailsOn(flags.fail_on, f.severity);
      if (text && flags.quiet) {
        for (const auto& f : c.diagnosis.findings)
          if (FailsOn(flags.fail_on, f.severity)) std::cout << FindingLine(c, f, color) << "\n";
      } else if (text) {
        PrintText(c, color, flags.verbose);
      } else if (json_writer) {
        json_writer->Add(c);
      } else if (flags.output == "junit" || !c.diagnosis.findings.empty()) {
        c.diagnosis.evidence.clear();  // SARIF and JUnit do not show it; SARIF only findings
        results.push_back(std::move(c));
      }
    } catch (const workload::ManifestError& e) {
      ++unreadable;
      errors_read.push_back({source, e.what(), file});
    }
  };
  ForEachInput(ManifestInputs(flags), positions, visit, false, InputDirectories(flags));
  // An empty file (or only comments, or only empty documents) is no error, but say so.
  if (!any_document && errors_read.empty())
    std::cerr << "note: no documents in the input: nothing to check\n";
  if (flags.output == "json") {
    json_writer->Finish(errors_read);
  } else if (flags.output == "sarif") {
    std::cout << ToSarif(results, errors_read).dump(2) << "\n";
  } else if (flags.output == "junit") {
    std::cout << ToJunit(results, errors_read);
  } else if (!flags.quiet) {
    // Unreadable documents count: "0 documents" with exit 2 would read as an empty input.
    std::cout << CountsLine(documents, "document", errors, warnings, unreadable) << "\n";
  }
  PrintInputErrors(errors_read);
  if (!errors_read.empty()) return kExitError;
  return failing > 0 ? kExitFindings : kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& root, std::function<int()>& run) {
  auto flags = std::make_shared<CheckFlags>();
  auto* cmd =
      root.add_subcommand("check", "Diagnose manifests as written: path, RDMA, evidence, findings");
  AddManifestFlags(*cmd, *flags, "text", {"text", "json", "sarif", "junit"});
  auto* verbose = cmd->add_flag("-v,--verbose", flags->verbose,
                                "text: every document, also those without findings");
  cmd->add_flag("-q,--quiet", flags->quiet,
                "text: only the lines of failing findings (see --fail-on), no summary")
      ->excludes(verbose);
  cmd->callback([flags, &run] {
    RequireInputs(*flags);
    run = [flags] { return RunCheck(*flags); };
  });
}

}  // namespace rw::cli
