#include <iostream>

#include "commands.h"
#include "rdma_webhook/gids/gid_table.h"

namespace rw::cli {

void AddGidsCommand(CLI::App& root, std::function<int()>& run) {
  struct Flags {
    std::string sysfs_root = "/";
    std::string output = "text";
  };
  auto flags = std::make_shared<Flags>();
  auto* cmd =
      root.add_subcommand("gids", "Print this node's RoCE/IB GID tables and the recommended index");
  cmd->add_option("--sysfs-root", flags->sysfs_root, "root holding sys/class/infiniband")
      ->capture_default_str();
  cmd->add_option("--output,-o", flags->output, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([flags, &run] {
    run = [flags] {
      const auto table = gids::ReadGidTable(flags->sysfs_root);
      for (const auto& note : table.notes) std::cerr << "note: " << note << "\n";
      if (table.gids.empty() && table.ports.empty() && table.notes.empty())
        std::cerr << "note: no RDMA devices under " << flags->sysfs_root
                  << "sys/class/infiniband\n";
      if (flags->output == "json") {
        std::cout << gids::ToJson(table).dump(2) << "\n";
      } else {
        std::cout << gids::FormatText(table);
      }
      return 0;
    };
  });
}

}  // namespace rw::cli
