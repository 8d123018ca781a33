#include <iostream>

#include "commands.h"
#include "common.h"

namespace rw::cli {

void AddPolicyCommand(CLI::App& root, std::function<int()>& run) {
  auto* cmd = root.add_subcommand("policy", "Validate a policy file or print the embedded default");
  cmd->require_subcommand(1);

  auto files = std::make_shared<std::vector<std::string>>();
  auto* validate = cmd->add_subcommand("validate", "Validate policy files (YAML or JSON)");
  validate->add_option("files", *files, "policy files, or - for stdin")->required();
  validate->callback([files, &run] {
    run = [files] {
      int status = kExitOk;
      for (const auto& file : *files) {
        std::string text;
        try {
          text = ReadFileText(file);
        } catch (const std::exception& e) {
          std::cerr << "error: " << e.what() << "\n";
          status = kExitError;
          continue;
        }
        try {
          const auto p = policy::ParsePolicyText(text);
          std::cout << file << ": valid (" << p.namespaces.size() << " namespace entries, hash "
                    << p.hash << ")\n";
          for (const auto& w : policy::ShadowedNamespaceEntries(p))
            std::cerr << "warning: " << file << ": " << w << "\n";
        } catch (const policy::PolicyError& e) {
          std::cerr << "error: " << file << ": " << e.what() << "\n";
          if (status == kExitOk) status = kExitFindings;
        }
      }
      return status;
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
