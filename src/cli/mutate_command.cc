#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cluster_catalogue.h"
#include "commands.h"
#include "common.h"
#include "mutate_notes.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/codec/yaml_layout.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/trainjob.h"

namespace rw::cli {
namespace {

// The layout of the document last rendered: a List's items share their document's.
struct LayoutCache {
  const std::vector<codec::DocumentText>* texts = nullptr;
  std::size_t document = 0;
  std::optional<codec::YamlLayout> layout;
};

// A document's text as written. The splitter gives the stream's last line its own line break,
// which the text did not have after its final one.
std::string AsWritten(const InputDocument& doc) {
  std::string body = (*doc.texts)[doc.document].body;
  const bool last = doc.document + 1 == doc.texts->size();
  if (last && body.size() >= 2 && body.compare(body.size() - 2, 2, "\n\n") == 0) body.pop_back();
  return body;
}

// `-o yaml` of one result, with the `---` before it: a document the webhook leaves alone as
// written (separator, comments, layout), a changed one in its own key order with its comments
// and the added keys last (codec::YamlLayout), and ToYaml (sorted keys, no comments) when
// that cannot be done faithfully. A List's items are written as documents of their own.
std::string YamlOf(const InputDocument& doc, const mutate::Mutation& m, bool first,
                   LayoutCache& cache) {
  const std::string separator = first ? "" : "---\n";
  if (!doc.texts || doc.document >= doc.texts->size()) return separator + codec::ToYaml(m.result);
  const auto& text = (*doc.texts)[doc.document];
  const bool whole = doc.item.empty();
  const bool marker = text.explicit_start || !first;
  if (m.patch.empty() && whole && !text.json) {
    // An explicit start keeps its own `---` line (body is what followed it on that line).
    if (text.explicit_start) return text.leading + "---" + AsWritten(doc);
    return text.leading + (marker ? "---\n" : "") + AsWritten(doc);
  }
  if (cache.texts != doc.texts.get() || cache.document != doc.document) {
    cache = {doc.texts.get(), doc.document, codec::YamlLayout::Read(text)};
  }
  const std::string before = whole ? text.leading + (marker ? "---\n" : "") : separator;
  if (cache.layout) {
    if (auto rendered = cache.layout->Render(doc.item, *doc.object, m.patch.Json(), m.result))
      return before + *rendered;
  }
  return before + codec::ToYaml(m.result);
}

int RunMutate(const ManifestFlags& flags) {
  const auto policy = LoadPolicyOrReport(flags.policy_file, flags.disabled_rules);
  if (!policy) return kExitError;
  const auto catalogue = ManifestCatalogueOrReport(flags);
  if (!catalogue) return kExitError;
  std::vector<InputError> errors_read;
  bool findings = false;
  bool first = true;
  // Line N of a patch stream stays document N: an unreadable document is `null`. A file that
  // could not be read at all has no documents to stand for.
  auto unreadable = [&](const InputDocument& doc, const std::string& message) {
    errors_read.push_back({doc.source, message});
    if (flags.output == "patch" && !doc.whole_file) std::cout << "null\n";
  };
  LayoutCache layouts;
  const bool yaml = flags.output == "yaml";
  const auto visit = [&](InputDocument&& doc) {
    if (!doc.object) {
      unreadable(doc, doc.error);
      return;
    }
    mutate::Mutation m;
    std::vector<std::string> notes;
    try {
      const auto w = workload::Workload::Read(*doc.object, *policy, flags.ns);
      const bool trainjob = workload::IsTrainJob(*doc.object);
      m = trainjob ? mutate::MutateTrainJob(*doc.object, *policy, flags.ns, *catalogue)
                   : mutate::Mutate(w, *doc.object, *policy, *catalogue);
      // The exit code speaks of the result, as the validating webhook would judge it.
      const auto d = trainjob ? rules::DiagnoseTrainJob(m.result, *policy, flags.ns, *catalogue)
                              : rules::Diagnose(m.result, *policy, flags.ns, *catalogue);
      for (const auto& f : d.findings) findings = findings || FailsOn(flags.fail_on, f.severity);
      notes = MutateNotes(doc.source, w, m, d, *policy);
    } catch (const workload::ManifestError& e) {
      unreadable(doc, e.what());
      return;
    }
    for (const auto& line : notes) std::cerr << line << "\n";
    for (const auto& o : m.overrides)
      std::cerr << "warning: " << doc.source << ": " << o.rule << ": " << o.message << "\n";
    if (flags.output == "json") {
      std::cout << m.result.dump() << "\n";
    } else if (flags.output == "patch") {
      std::cout << m.patch.text() << "\n";
    } else {
      std::cout << YamlOf(doc, m, first, layouts);
    }
    first = false;
  };
  ForEachInput(ManifestInputs(flags), codec::Positions::kSkip, visit, yaml,
               InputDirectories(flags));
  PrintInputErrors(errors_read);
  if (!errors_read.empty()) return kExitError;
  return findings ? kExitFindings : kExitOk;
}

}  // namespace

void AddMutateCommand(CLI::App& root, std::function<int()>& run) {
  auto flags = std::make_shared<ManifestFlags>();
  auto* cmd = root.add_subcommand("mutate", "Print what the webhook would make of the manifests");
  static const std::vector<std::string> kOutputs = {"yaml", "json", "patch"};
  AddManifestFlags(*cmd, *flags, "yaml", kOutputs);
  cmd->footer(
      "-o yaml writes a document the webhook leaves alone as it is written, and a changed one\n"
      "in its own key order with its comments and blank lines, block scalars, quoting and\n"
      "flow lists; added keys come after a mapping's others. Lost in a changed document (the\n"
      "YAML reader does not report them): anchors and aliases (written expanded), merge keys\n"
      "(their keys written out), tags, folded `>` scalars (written `|`), flow collections that\n"
      "hold collections (written as blocks), the indentation width of mappings (2 spaces),\n"
      "blank lines right after a block scalar. A List is written as its items. -o json\n"
      "writes keys sorted.");
  cmd->callback([cmd, flags, &run] {
    RequireInputs(*flags);
    run = [cmd, flags] {
      return ApplyManifestConfig(*cmd, "mutate", *flags, kOutputs) ? RunMutate(*flags) : kExitError;
    };
  });
}

}  // namespace rw::cli
