#include <iostream>

#include "commands.h"
#include "common.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/mutate/mutation.h"

namespace rw::cli {
namespace {

int RunMutate(const ManifestFlags& flags) {
  const auto policy = LoadPolicyOrReport(flags.policy_file);
  if (!policy) return kExitError;
  std::vector<InputError> errors_read;
  bool findings = false;
  bool first = true;
  // Line N of a patch stream stays document N: an unreadable document is `null`. A file that
  // could not be read at all has no documents to stand for.
  auto unreadable = [&](const InputDocument& doc, const std::string& message) {
    errors_read.push_back({doc.source, message});
    if (flags.output == "patch" && !doc.whole_file) std::cout << "null\n";
  };
  ForEachInput(ManifestInputs(flags), codec::Positions::kSkip, [&](InputDocument&& doc) {
    if (!doc.object) {
      unreadable(doc, doc.error);
      return;
    }
    mutate::Mutation m;
    try {
      m = mutate::Mutate(*doc.object, *policy, flags.ns);
      // The exit code speaks of the result, as the validating webhook would judge it.
      const auto d = rules::Diagnose(m.result, *policy, flags.ns);
      findings = findings || d.Count(rules::Severity::kError) > 0;
    } catch (const workload::ManifestError& e) {
      unreadable(doc, e.what());
      return;
    }
    for (const auto& o : m.overrides)
      std::cerr << "warning: " << doc.source << ": " << o.rule << ": " << o.message << "\n";
    if (flags.output == "json") {
      std::cout << m.result.dump() << "\n";
    } else if (flags.output == "patch") {
      std::cout << m.patch.dump() << "\n";
    } else {
      if (!first) std::cout << "---\n";
      std::cout << codec::ToYaml(m.result);
    }
    first = false;
  });
  PrintInputErrors(errors_read);
  if (!errors_read.empty()) return kExitError;
  return findings ? kExitFindings : kExitOk;
}

}  // namespace

void AddMutateCommand(CLI::App& root, std::function<int()>& run) {
  auto flags = std::make_shared<ManifestFlags>();
  auto* cmd = root.add_subcommand("mutate", "Print what the webhook would make of the manifests");
  AddManifestFlags(*cmd, *flags, "yaml", {"yaml", "json", "patch"});
  cmd->callback([flags, &run] {
    RequireInputs(*flags);
    run = [flags] { return RunMutate(*flags); };
  });
}

}  // namespace rw::cli
