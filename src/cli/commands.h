#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace rw::cli {
// Each Add*Command registers a subcommand and sets `run` to its body when it is selected.
void AddCheckCommand(CLI::App& root, std::function<int()>& run);
void AddMutateCommand(CLI::App& root, std::function<int()>& run);
void AddPolicyCommand(CLI::App& root, std::function<int()>& run);
void AddGidsCommand(CLI::App& root, std::function<int()>& run);
void AddVersionCommand(CLI::App& root, std::function<int()>& run);
void AddServeCommand(CLI::App& root, std::function<int()>& run);
void AddRulesCommand(CLI::App& root, std::function<int()>& run);
void AddAuditCommand(CLI::App& root, std::function<int()>& run);
void AddVerifyCommand(CLI::App& root, std::function<int()>& run);
void AddCompletionCommand(CLI::App& root, std::function<int()>& run);
}  // namespace rw::cli
