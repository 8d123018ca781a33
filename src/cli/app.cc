#include "rdma_webhook/cli/app.h"

#include <iostream>
#include <string_view>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "common.h"

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
