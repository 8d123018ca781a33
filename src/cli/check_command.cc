#include <unistd.h>

#include <iostream>

#include "cluster_catalogue.h"
#include "commands.h"
#include "common.h"
#include "format.h"
#include "judge.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::cli {
namespace {

using rules::Severity;

struct CheckFlags : ManifestFlags {
  bool verbose = false;  // every document's block, clean ones too
  bool quiet = false;    // only the finding lines that fail (--fail-on), no blocks, no summary
};

int RunCheck(const CheckFlags& flags) {
  const auto policy = LoadPolicyOrReport(flags.policy_file, flags.disabled_rules);
  if (!policy) return kExitError;
  const auto catalogue = ManifestCatalogueOrReport(flags);
  if (!catalogue) return kExitError;
  const Format& format = FindFormat(flags.output);
  const auto report =
      format.open({UseColor(STDOUT_FILENO), flags.verbose, flags.quiet, flags.fail_on});
  // Positions only where the format shows them (the pointers suffice for JSON); changes only
  // where it says them, and -q prints no blocks to say them in.
  const auto positions =
      format.shows_positions ? codec::Positions::kRecord : codec::Positions::kSkip;
  const bool count_changes = format.shows_changes && !flags.quiet;
  std::vector<InputError> errors_read;
  bool any_document = false;
  std::size_t documents = 0, errors = 0, warnings = 0, failing = 0, unreadable = 0, suppressed = 0;
  const DocumentVisitor visit = [&](InputDocument&& doc) {
    if (!doc.object) {
      unreadable += doc.whole_file ? 0 : 1;  // a missing file is no document
      errors_read.push_back({doc.source, doc.error, doc.file});
      return;
    }
    any_document = true;
    const std::string source = doc.source, file = doc.file;  // `doc` is moved into Judge
    try {
      Checked c = Judge(std::move(doc), *policy, flags.ns, count_changes, *catalogue);
      ++documents;
      errors += c.diagnosis.Count(Severity::kError);
      warnings += c.diagnosis.Count(Severity::kWarning);
      suppressed += c.diagnosis.suppressed.size();
      for (const auto& f : c.diagnosis.findings) failing += FailsOn(flags.fail_on, f.severity);
      report->Add(std::move(c));
    } catch (const workload::ManifestError& e) {
      ++unreadable;
      errors_read.push_back({source, e.what(), file});
    }
  };
  ForEachInput(ManifestInputs(flags), positions, visit, false, InputDirectories(flags));
  // An empty file (or only comments, or only empty documents) is no error, but say so.
  if (!any_document && errors_read.empty())
    std::cerr << "note: no documents in the input: nothing to check\n";
  report->End({"document", documents, errors, warnings, suppressed, unreadable, errors_read});
  PrintInputErrors(errors_read);
  if (!errors_read.empty()) return kExitError;
  return failing > 0 ? kExitFindings : kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& root, std::function<int()>& run) {
  auto flags = std::make_shared<CheckFlags>();
  auto* cmd =
      root.add_subcommand("check", "Diagnose manifests as written: path, RDMA, evidence, findings");
  static const std::vector<std::string> kOutputs = FormatNames();
  AddManifestFlags(*cmd, *flags, "text", kOutputs, FormatsHelp());
  auto* verbose = cmd->add_flag("-v,--verbose", flags->verbose,
                                "text: every document, also those without findings");
  cmd->add_flag("-q,--quiet", flags->quiet,
                "text: only the lines of failing findings (see --fail-on), no summary")
      ->excludes(verbose);
  cmd->callback([cmd, flags, &run] {
    RequireInputs(*flags);
    run = [cmd, flags] {
      return ApplyManifestConfig(*cmd, "check", *flags, kOutputs) ? RunCheck(*flags) : kExitError;
    };
  });
}

}  // namespace rw::cli
