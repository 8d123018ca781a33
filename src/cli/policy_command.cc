#include <iostream>

#include "commands.h"
#include "common.h"

namespace rw::cli {

void AddPolicyCommand(CLI::App& root, std::function<int()>& run) {
  auto* cmd = root.add_subcommand("policy", "Validate a policy file or print the embedded default");
  cmd->require_subcommand(1);

  auto file = std::make_shared<std::string>();
  auto* validate = cmd->add_subcommand("validate", "Validate a policy file (YAML or JSON)");
  validate->add_option("file", *file, "policy file, or - for stdin")->required();
  validate->callback([file, &run] {
    run = [file] {
      std::string text;
      try {
        text = ReadFileText(*file);
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return kExitError;
      }
      try {
        const auto p = policy::ParsePolicyText(text);
        std::cout << *file << ": valid (" << p.namespaces.size() << " namespace entries, hash "
                  << p.hash << ")\n";
        return kExitOk;
      } catch (const policy::PolicyError& e) {
        std::cerr << "error: " << *file << ": " << e.what() << "\n";
        return kExitFindings;
      }
    };
  });

  auto* print_default = cmd->add_subcommand("default", "Print the embedded default policy");
  print_default->callback([&run] {
    run = [] {
      std::cout << policy::DefaultPolicyText();
      return kExitOk;
    };
  });
}

}  // namespace rw::cli
