#pragma once
// `.rdma-webhook.yaml`: a repository's defaults for the flags of check, mutate and audit
// (docs/cli.md#configuration-file), found in the current directory or a parent up to the git
// root. A flag given on the command line always wins over the file.
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace rw::cli {

inline constexpr std::string_view kConfigFileName = ".rdma-webhook.yaml";
// A configuration holds a few flags; a larger file is no configuration of ours (and is not read
// into memory whole).
inline constexpr std::size_t kMaxConfigBytes = 64 * 1024;

// One value of the file and where it is written ("file:line:col: <field>"), so that a value a
// command refuses later (an output format it does not have) is named at its place.
struct ConfigValue {
  std::string value;
  std::string where;
};

struct CliConfig {
  std::string file;                   // as found or given
  std::optional<ConfigValue> policy;  // resolved against the file's directory
  std::optional<ConfigValue> ns;      // check and mutate: --namespace
  std::optional<ConfigValue> fail_on;
  std::vector<std::string> disabled_rules;    // rule ids to turn off in every namespace
  std::map<std::string, ConfigValue> output;  // command -> its --output
};

// Reads the text of `file`. Throws std::runtime_error "file:line:col: field: message" for a
// key it does not know (with did-you-mean), a value of the wrong type, an unknown rule id or
// fail-on level.
CliConfig ParseCliConfig(std::string_view text, const std::string& file);

// The nearest kConfigFileName in `start` or its parents, stopping at the first directory that
// holds `.git` (the repository's root); nullopt when there is none.
std::optional<std::filesystem::path> FindCliConfig(const std::filesystem::path& start);

// The flags a command takes from the file: pointers into its flags, nullptr where it has none.
struct ConfigTargets {
  std::string command;  // check, mutate, audit
  std::string* policy_file = nullptr;
  std::string* ns = nullptr;
  std::string* output = nullptr;
  std::string* fail_on = nullptr;
  std::vector<std::string>* disabled_rules = nullptr;
  std::vector<std::string> outputs;           // the formats the command has
  std::vector<std::string> explicit_options;  // options that, when given, stand for the policy
};

// The --config and --no-config flags of a command.
struct ConfigFlags {
  std::string file;
  bool skip = false;
};
void AddConfigFlags(CLI::App& cmd, ConfigFlags& flags);

// Fills every target whose option was not given on `cmd`'s command line from the file named by
// --config, else the discovered one (none with --no-config). Returns false after printing the
// error on stderr.
bool ApplyConfig(const CLI::App& cmd, const ConfigFlags& flags, const ConfigTargets& targets);

}  // namespace rw::cli
