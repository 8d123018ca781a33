#include <iostream>

#include "commands.h"
#include "common.h"
#include "rdma_webhook/policy/schema.h"
#include "rdma_webhook/server/policy_loader.h"

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
        if (file.empty()) {  // LoadPolicy reads "" as the embedded default
          std::cerr << "error: an empty file name\n";
          status = kExitError;
          continue;
        }
        const server::PolicyLoad load =
            server::LoadPolicy(server::Env::Default(), file, server::FileKinds::kAny);
        if (!load.error) {
          std::cout << file << ": valid (" << load.policy->namespaces.size()
                    << " namespace entries, hash " << load.policy->hash << ")\n";
          for (const auto& w : policy::ShadowedNamespaceEntries(*load.policy))
            std::cerr << "warning: " << file << ": " << w << "\n";
          continue;
        }
        std::cerr << "error: " << load.error->Message() << "\n";
        // A file that is no policy is a finding (1); one that cannot be read is an error (2).
        if (load.error->kind != server::PolicyLoadError::Kind::kInvalid) {
          status = kExitError;
        } else if (status == kExitOk) {
          status = kExitFindings;
        }
      }
      return status;
    };
  });

  auto* print_schema =
      cmd->add_subcommand("schema", "Print the JSON Schema (draft-07) of the policy file");
  print_schema->callback([&run] {
    run = [] {
      std::cout << policy::PolicySchema().dump(2) << "\n";
      return kExitOk;
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
