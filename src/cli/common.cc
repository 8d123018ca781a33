#include "common.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "rdma_webhook/server/policy_loader.h"

namespace rw::cli {

void AddManifestFlags(CLI::App& cmd, ManifestFlags& flags, const std::string& default_output,
                      const std::vector<std::string>& outputs, const std::string& output_help) {
  cmd.add_option("inputs", flags.inputs, "manifest files, directories, or - for stdin");
  cmd.add_option("-f,--filename", flags.filenames,
                 "manifest file, directory or - (repeatable; as in kubectl)")
      ->allow_extra_args(false);
  cmd.add_flag("-R,--recursive", flags.recursive,
               "read directories with their subdirectories (as in kubectl)");
  cmd.add_option("--policy", flags.policy_file, "policy file (default: the embedded policy)");
  cmd.add_option("--namespace,-n", flags.ns, "namespace for documents without metadata.namespace")
      ->capture_default_str();
  flags.output = default_output;
  cmd.add_option("--output,-o", flags.output, output_help)
      ->check(CLI::IsMember(outputs))
      ->capture_default_str();
  cmd.add_option("--fail-on", flags.fail_on,
                 "exit 1 on findings of this severity or worse (warning: warnings too)")
      ->check(CLI::IsMember({"error", "warning"}))
      ->capture_default_str();
  auto* cluster = cmd.add_flag("--cluster", flags.cluster,
                               "also read the cluster's DeviceClasses, ResourceClaimTemplates, "
                               "ResourceClaims and NetworkAttachmentDefinitions with kubectl");
  cmd.add_option("--context", flags.cluster_flags.context, "kubeconfig context (kubectl's)")
      ->needs(cluster);
  cmd.add_option("--kubeconfig", flags.cluster_flags.kubeconfig, "kubeconfig file (kubectl's)")
      ->needs(cluster);
  AddConfigFlags(cmd, flags.config);
}

bool ApplyManifestConfig(const CLI::App& cmd, const std::string& command, ManifestFlags& flags,
                         const std::vector<std::string>& outputs) {
  return ApplyConfig(cmd, flags.config,
                     {command,
                      &flags.policy_file,
                      &flags.ns,
                      &flags.output,
                      &flags.fail_on,
                      &flags.disabled_rules,
                      outputs,
                      {}});
}

std::shared_ptr<const policy::Policy> WithRulesOff(std::shared_ptr<const policy::Policy> policy,
                                                   const std::vector<std::string>& ids) {
  if (ids.empty()) return policy;
  auto copy = std::make_shared<policy::Policy>(*policy);
  auto off = [&](policy::NamespacePolicy& ns) {
    for (const auto& id : ids) ns.rules[id] = policy::RuleLevel::kOff;
  };
  off(copy->defaults);
  for (auto& ns : copy->namespaces) off(ns);
  return copy;
}

bool FailsOn(const std::string& fail_on, rules::Severity severity) {
  return severity == rules::Severity::kError || fail_on == "warning";
}

bool UseColor(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(fd) == 1 && (no_color == nullptr || *no_color == '\0');
}

void RequireInputs(const ManifestFlags& flags) {
  if (flags.inputs.empty() && flags.filenames.empty())
    throw CLI::RequiredError("a manifest: FILE..., -f FILE or - for stdin");
}

std::vector<std::string> ManifestInputs(const ManifestFlags& flags) {
  std::vector<std::string> out = flags.filenames;
  out.insert(out.end(), flags.inputs.begin(), flags.inputs.end());
  return out;
}

std::shared_ptr<const policy::Policy> LoadPolicy(const std::string& file) {
  // The server's loader: the same file is refused for the same reasons in `check` and `serve`.
  server::PolicyLoad load =
      server::LoadPolicy(server::Env::Default(), file, server::FileKinds::kAny);
  if (load.error) throw std::runtime_error(load.error->Message());
  return std::move(load.policy);
}

std::shared_ptr<const policy::Policy> LoadPolicyOrReport(const std::string& file,
                                                         const std::vector<std::string>& disabled) {
  try {
    auto loaded = WithRulesOff(LoadPolicy(file), disabled);
    for (const auto& w : policy::ShadowedNamespaceEntries(*loaded))
      std::cerr << "warning: " << file << ": " << w << "\n";
    return loaded;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return nullptr;
  }
}

void PrintInputErrors(const std::vector<InputError>& errors) {
  for (const auto& e : errors) std::cerr << "error: " << e.source << ": " << e.message << "\n";
}

}  // namespace rw::cli
