#pragma once
// Pieces the check and mutate commands share: flags, policy loading, reporting input errors.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cluster.h"
#include "config_file.h"
#include "inputs.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::cli {

struct ManifestFlags {
  std::vector<std::string> inputs;     // positional
  std::vector<std::string> filenames;  // -f/--filename, as kubectl users type it
  std::string policy_file;
  std::string ns = "default";
  std::string output;
  std::string fail_on = "error";  // --fail-on: the lowest severity that makes exit code 1
  bool recursive = false;         // -R: directories with their subdirectories, as in kubectl
  // --cluster: also read the cluster's DeviceClasses, claims and NADs through kubectl
  // (--context, --kubeconfig pick the cluster).
  bool cluster = false;
  ClusterFlags cluster_flags;
  ConfigFlags config;                       // --config, --no-config
  std::vector<std::string> disabled_rules;  // from the configuration file's disableRules
};

// One of the two is required: CLI11 cannot say "either"; the command's callback calls this
// (CLI::RequiredError, a usage error).
void RequireInputs(const ManifestFlags& flags);

// The inputs to read: the -f files in their order, then the positional ones.
std::vector<std::string> ManifestInputs(const ManifestFlags& flags);
// How a directory among them is read: -R descends into its subdirectories.
inline Directories InputDirectories(const ManifestFlags& flags) {
  return flags.recursive ? Directories::kRecursive : Directories::kTopLevel;
}

// Adds the inputs (positional and -f/--filename: at least one is required), --policy,
// --namespace, --output, --fail-on, --cluster (with --context, --kubeconfig), --config and
// --no-config. `output_help`: -o's help.
void AddManifestFlags(CLI::App& cmd, ManifestFlags& flags, const std::string& default_output,
                      const std::vector<std::string>& outputs,
                      const std::string& output_help = "output format");

// ApplyConfig for check and mutate: policy, namespace, output, failOn and disableRules.
bool ApplyManifestConfig(const CLI::App& cmd, const std::string& command, ManifestFlags& flags,
                         const std::vector<std::string>& outputs);

// `policy` with every rule of `ids` turned off in every namespace (the configuration file's
// disableRules), or `policy` itself when there are none.
std::shared_ptr<const policy::Policy> WithRulesOff(std::shared_ptr<const policy::Policy> policy,
                                                   const std::vector<std::string>& ids);

// The policy named by --policy, or the embedded default. Throws std::runtime_error naming the
// file and the field.
std::shared_ptr<const policy::Policy> LoadPolicy(const std::string& file);

// LoadPolicy (with the rules of `disabled` off), or nullptr after printing the error on stderr.
std::shared_ptr<const policy::Policy> LoadPolicyOrReport(
    const std::string& file, const std::vector<std::string>& disabled = {});

// Whether findings of `severity` make the exit code 1 under --fail-on.
bool FailsOn(const std::string& fail_on, rules::Severity severity);

// ANSI colours: only on a terminal, and never when NO_COLOR is set to anything but empty
// (the no-color.org convention).
bool UseColor(int fd);

// Prints "error: <source>: <message>" lines on stderr.
void PrintInputErrors(const std::vector<InputError>& errors);

// Exit codes of check and mutate (docs/cli.md#exit-codes).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitError = 2;

}  // namespace rw::cli
