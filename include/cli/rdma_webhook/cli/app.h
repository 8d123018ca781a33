#pragma once
// The command line: `rdma-webhook <command> [flags]` (docs/cli.md).
namespace rw::cli {

// Parses argv, runs the command and returns the process exit code.
int Run(int argc, char** argv);

}  // namespace rw::cli
