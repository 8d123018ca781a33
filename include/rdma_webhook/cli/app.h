#pragma once
// The command line: `rdma-webhook <command> [flags]` (CONTRACT.md section 1).
namespace rw::cli {

// Parses argv, runs the command and returns the process exit code.
int Run(int argc, char** argv);

}  // namespace rw::cli
