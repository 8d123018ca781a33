#include <iostream>

#include "commands.h"
#include "rdma_webhook/build_info.h"

namespace rw::cli {

void AddVersionCommand(CLI::App& root, std::function<int()>& run) {
  auto* cmd = root.add_subcommand("version", "Print version, git commit and build type");
  cmd->callback([&run] {
    run = [] {
      std::cout << "rdma-webhook " << build::kVersion << "\ncommit: " << build::kCommit
                << "\nbuild: " << build::kBuildType << "\n";
      return 0;
    };
  });
}

}  // namespace rw::cli
