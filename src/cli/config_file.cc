#include "config_file.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/policy/did_you_mean.h"
#include "rdma_webhook/policy/policy.h"

namespace rw::cli {
namespace {

using nlohmann::json;

const std::vector<std::string> kKeys = {"policy", "namespace", "failOn", "disableRules", "output"};
const std::vector<std::string> kCommands = {"check", "mutate", "audit"};

// Reads one document, naming every problem at its line and column.
class ConfigReader {
 public:
  ConfigReader(const std::string& file, const codec::PositionMap& positions)
      : file_(file), positions_(positions) {}

  std::string Where(const std::string& pointer, const std::string& field) const {
    std::string at = file_;
    if (const auto p = codec::FindPosition(positions_, pointer)) {
      at += ":" + std::to_string(p->line);
      if (p->column > 0) at += ":" + std::to_string(p->column);
    }
    return at + ": " + field;
  }
  [[noreturn]] void Fail(const std::string& pointer, const std::string& field,
                         const std::string& message) const {
    throw std::runtime_error(Where(pointer, field) + ": " + message);
  }
  ConfigValue String(const json& v, const std::string& pointer, const std::string& field) const {
    if (!v.is_string() || v.get_ref<const std::string&>().empty())
      Fail(pointer, field, "must be a non-empty string, got " + codec::TypeName(v));
    return {v.get<std::string>(), Where(pointer, field)};
  }
  // Every key of `object` must be one of `known`.
  void Keys(const json& object, const std::string& pointer, const std::string& field,
            const std::vector<std::string>& known) const {
    if (!object.is_object())
      Fail(pointer, field, "must be a mapping, got " + codec::TypeName(object));
    for (const auto& [key, value] : object.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      Fail(pointer + "/" + key, field.empty() ? key : field + "." + key,
           "unknown key" + policy::DidYouMean(key, known) + "; known: " + list);
    }
  }

 private:
  const std::string& file_;
  const codec::PositionMap& positions_;
};

std::string ReadBounded(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot be read");
  std::string text;
  text.resize(kMaxConfigBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes)
    throw std::runtime_error(path.string() + ": larger than " +
                             std::to_string(kMaxConfigBytes / 1024) +
                             " KiB: not a configuration file of rdma-webhook");
  return text;
}

}  // namespace

CliConfig ParseCliConfig(std::string_view text, const std::string& file) {
  CliConfig config;
  config.file = file;
  auto docs = codec::ParseStream(text, codec::DuplicateKeys::kRefuse, codec::Positions::kRecord);
  std::erase_if(docs, [](const codec::SourceDocument& d) { return !d.value && d.error.empty(); });
  if (docs.empty()) return config;  // empty, or only comments: no defaults
  if (docs.size() > 1)
    throw std::runtime_error(file + ":" + std::to_string(docs[1].line) +
                             ": one YAML document expected, found another here");
  const auto& doc = docs[0];
  if (!doc.error.empty()) throw std::runtime_error(file + ": " + doc.error);
  const ConfigReader r(file, doc.positions);
  const json& root = *doc.value;
  r.Keys(root, "", "", kKeys);
  if (const auto it = root.find("policy"); it != root.end()) {
    ConfigValue v = r.String(*it, "/policy", "policy");
    // Relative to the file, so that the repository's setting holds from any subdirectory.
    const std::filesystem::path p(v.value);
    if (p.is_relative()) v.value = (std::filesystem::path(file).parent_path() / p).string();
    config.policy = std::move(v);
  }
  if (const auto it = root.find("namespace"); it != root.end())
    config.ns = r.String(*it, "/namespace", "namespace");
  if (const auto it = root.find("failOn"); it != root.end()) {
    config.fail_on = r.String(*it, "/failOn", "failOn");
    if (config.fail_on->value != "error" && config.fail_on->value != "warning")
      r.Fail("/failOn", "failOn",
             "must be error or warning, got '" + config.fail_on->value + "'" +
                 policy::DidYouMean(config.fail_on->value, {"error", "warning"}));
  }
  if (const auto it = root.find("disableRules"); it != root.end()) {
    if (!it->is_array())
      r.Fail("/disableRules", "disableRules",
             "must be a list of rule ids, got " + codec::TypeName(*it));
    std::vector<std::string> ids;
    for (const auto id : policy::KnownRuleIds()) ids.emplace_back(id);
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string pointer = "/disableRules/" + std::to_string(i);
      const std::string field = "disableRules[" + std::to_string(i) + "]";
      const ConfigValue id = r.String((*it)[i], pointer, field);
      if (std::find(ids.begin(), ids.end(), id.value) == ids.end())
        r.Fail(pointer, field,
               "unknown rule id '" + id.value + "'" + policy::DidYouMean(id.value, ids) +
                   " (`rdma-webhook rules` lists them)");
      config.disabled_rules.push_back(id.value);
    }
  }
  if (const auto it = root.find("output"); it != root.end()) {
    r.Keys(*it, "/output", "output", kCommands);
    for (const auto& [command, value] : it->items())
      config.output[command] = r.String(value, "/output/" + command, "output." + command);
  }
  return config;
}

std::optional<std::filesystem::path> FindCliConfig(const std::filesystem::path& start) {
  std::error_code ec;
  for (std::filesystem::path dir = start;; dir = dir.parent_path()) {
    const auto candidate = dir / kConfigFileName;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    if (std::filesystem::exists(dir / ".git", ec)) return std::nullopt;  // the repository's root
    if (dir == dir.parent_path()) return std::nullopt;
  }
}

void AddConfigFlags(CLI::App& cmd, ConfigFlags& flags) {
  auto* file = cmd.add_option("--config", flags.file,
                              "defaults for these flags from FILE (default: the nearest " +
                                  std::string(kConfigFileName) + " up to the git root)");
  cmd.add_flag("--no-config", flags.skip, "read no configuration file")->excludes(file);
}

bool ApplyConfig(const CLI::App& cmd, const ConfigFlags& flags, const ConfigTargets& targets) {
  if (flags.skip) return true;
  CliConfig config;
  try {
    std::optional<std::filesystem::path> path;
    if (!flags.file.empty()) {
      path = flags.file;
    } else {
      std::error_code ec;
      const auto cwd = std::filesystem::current_path(ec);
      if (ec) return true;  // no current directory (removed under us): nothing to discover
      path = FindCliConfig(cwd);
    }
    if (!path) return true;
    // A discovered file is named relative to here when it is here, as a user would type it.
    std::string name = path->string();
    if (flags.file.empty() && path->parent_path() == std::filesystem::current_path())
      name = std::string(kConfigFileName);
    config = ParseCliConfig(ReadBounded(*path), name);
    auto given = [&](const char* option) { return cmd.count(option) > 0; };
    const bool policy_given =
        given("--policy") ||
        std::any_of(targets.explicit_options.begin(), targets.explicit_options.end(),
                    [&](const std::string& o) { return given(o.c_str()); });
    if (targets.policy_file && config.policy && !policy_given)
      *targets.policy_file = config.policy->value;
    if (targets.ns && config.ns && !given("--namespace")) *targets.ns = config.ns->value;
    if (targets.fail_on && config.fail_on && !given("--fail-on"))
      *targets.fail_on = config.fail_on->value;
    if (targets.disabled_rules)
      targets.disabled_rules->insert(targets.disabled_rules->end(), config.disabled_rules.begin(),
                                     config.disabled_rules.end());
    if (const auto it = config.output.find(targets.command);
        targets.output && it != config.output.end() && !given("--output")) {
      const auto& formats = targets.outputs;
      if (std::find(formats.begin(), formats.end(), it->second.value) == formats.end()) {
        std::string list;
        for (const auto& f : formats) list += (list.empty() ? "" : ", ") + f;
        throw std::runtime_error(
            it->second.where + ": " + targets.command + " has no output '" + it->second.value +
            "'" + policy::DidYouMean(it->second.value, formats) + "; it has " + list);
      }
      *targets.output = it->second.value;
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace rw::cli
