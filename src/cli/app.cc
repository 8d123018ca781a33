#include "rdma_webhook/cli/app.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "common.h"
#include "rdma_webhook/build_info.h"
#include "rdma_webhook/policy/did_you_mean.h"

namespace rw::cli {
namespace {

// Installed as `kubectl-rdma` (a link to this binary), kubectl runs it as `kubectl rdma ...`:
// the same commands, and help that names what the user typed.
std::string ProgramName(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr) return "rdma-webhook";
  std::string_view base = argv[0];
  if (const auto slash = base.rfind('/'); slash != std::string_view::npos)
    base.remove_prefix(slash + 1);
  return base == "kubectl-rdma" ? "kubectl rdma" : "rdma-webhook";
}

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// A first word that is no flag and no command: CLI11 would say "arguments were not expected";
// name it as a command and suggest the closest one.
bool ReportUnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1] == nullptr || argv[1][0] == '-') return false;
  const std::string typed = argv[1];
  const auto names = CommandNames(app);
  if (std::find(names.begin(), names.end(), typed) != names.end()) return false;
  std::cerr << "rdma-webhook: error: unknown command '" << typed << "'"
            << policy::DidYouMean(typed, names) << " (see --help)\n";
  return true;
}

}  // namespace

int Run(int argc, char** argv) {
  const std::string name = ProgramName(argc, argv);
  CLI::App app{"rdma-webhook: RDMA admission webhook for GPU training workloads", name};
  // No require_subcommand(): CLI11 would report a missing command before an unknown flag, and
  // `rdma-webhook --bogus` must name the flag.
  std::function<int()> run;
  AddServeCommand(app, run);
  AddCheckCommand(app, run);
  AddAuditCommand(app, run);
  AddVerifyCommand(app, run);
  AddMutateCommand(app, run);
  AddGidsCommand(app, run);
  AddPolicyCommand(app, run);
  AddVersionCommand(app, run);
  AddRulesCommand(app, run);
  AddCompletionCommand(app, run);
  bool show_version = false;
  app.add_flag("--version", show_version, "print the version and exit (`version` says more)");
  // A bare `rdma-webhook` asks what there is: its help, not an error.
  if (argc == 1) {
    std::cout << app.help();
    return kExitOk;
  }
  if (ReportUnknownCommand(app, argc, argv)) return kExitError;
  // So does a bare command that only groups others (`policy`).
  if (argc == 2 && argv[1][0] != '-') {
    const auto* cmd = app.get_subcommand(argv[1]);
    if (!CommandNames(*cmd).empty()) {
      std::cout << cmd->help();
      return kExitOk;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    // Help of a subcommand arrives as CallForHelp from that subcommand; print its help.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::cerr << "rdma-webhook: error: " << e.what() << " (see --help)\n";
    return kExitError;
  }
  if (show_version) {
    std::cout << "rdma-webhook " << build::kVersion << "\n";
    return kExitOk;
  }
  if (!run) {
    std::cerr << "rdma-webhook: error: no command given (see --help)\n";
    return kExitError;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "rdma-webhook: error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace rw::cli
