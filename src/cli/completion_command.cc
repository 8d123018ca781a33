// `rdma-webhook completion bash`: a bash completion script made from the commands and flags the
// binary has, so it cannot list a flag that does not exist or miss a new one.
#include <iostream>
#include <string>

#include "commands.h"
#include "common.h"

namespace rw::cli {
namespace {

// The flags of one command, "-n --namespace --policy ...", help included.
std::string FlagWords(const CLI::App& cmd) {
  std::string words;
  for (const auto* opt : cmd.get_options()) {
    for (const auto& s : opt->get_snames()) words += " -" + s;
    for (const auto& l : opt->get_lnames()) words += " --" + l;
  }
  return words;
}

std::string SubcommandWords(const CLI::App& cmd) {
  std::string words;
  for (const auto* sub : cmd.get_subcommands([](const CLI::App*) { return true; }))
    words += " " + sub->get_name();
  return words;
}

// The first word that is no flag picks the command; `policy` has words of its own. Anything
// that is not a flag completes as a file name (`complete -o default`).
std::string BashScript(const CLI::App& root) {
  std::string s =
      "# bash completion for rdma-webhook and kubectl-rdma; written by `rdma-webhook completion "
      "bash`.\n# Use: source <(rdma-webhook completion bash), or save it in "
      "/etc/bash_completion.d/.\n"
      "_rdma_webhook() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} cmd= sub= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in\n"
      "      -*) ;;\n"
      "      *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; elif [[ -z $sub ]]; then "
      "sub=${COMP_WORDS[i]}; fi ;;\n"
      "    esac\n"
      "  done\n"
      "  local words\n"
      "  case $cmd in\n"
      "    '') words='" +
      SubcommandWords(root) + FlagWords(root) + "' ;;\n";
  for (const auto* cmd : root.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string subs = SubcommandWords(*cmd);
    s += "    " + cmd->get_name() + ")";
    if (subs.empty()) {
      s += " words='" + FlagWords(*cmd) + "' ;;\n";
      continue;
    }
    s += "\n      case $sub in\n        '') words='" + subs + FlagWords(*cmd) + "' ;;\n";
    for (const auto* sub : cmd->get_subcommands([](const CLI::App*) { return true; }))
      s += "        " + sub->get_name() + ") words='" + FlagWords(*sub) + "' ;;\n";
    s += "      esac ;;\n";
  }
  s += "  esac\n"
       "  if [[ $cur == -* || -z $cmd || ( $cmd == policy && -z $sub ) ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
       "  fi\n"
       "}\n"
       "complete -o default -F _rdma_webhook rdma-webhook kubectl-rdma\n";
  return s;
}

}  // namespace

void AddCompletionCommand(CLI::App& root, std::function<int()>& run) {
  auto* cmd = root.add_subcommand("completion", "Print a shell completion script (bash)");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "the shell")->required()->check(CLI::IsMember({"bash"}));
  cmd->callback([shell, &root, &run] {
    run = [&root] {
      std::cout << BashScript(root);
      return kExitOk;
    };
  });
}

}  // namespace rw::cli
