// `rdma-webhook audit` (`kubectl rdma audit`): judges what already runs in a cluster. The
// objects come from `kubectl get -o json`, read one at a time as kubectl writes them, and are
// judged by the same core as `check`.
#include <unistd.h>

#include <iostream>
#include <map>
#include <set>

#include "cluster.h"
#include "cluster_catalogue.h"
#include "commands.h"
#include "common.h"
#include "format.h"
#include "judge.h"
#include "kubectl.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/verdict.h"

namespace rw::cli {
namespace {

using nlohmann::json;
using rules::Severity;

struct AuditFlags {
  bool all_namespaces = false;
  std::string ns;  // empty: kubectl's current namespace
  std::string fail_on = "error";
  std::string selector;
  ClusterFlags cluster;
  std::string policy_file;
  std::string policy_configmap;
  std::string output = "text";
  bool include_owned = false;
  std::vector<std::string> kinds;           // --kinds: kinds outside the table, judged by shape
  ConfigFlags config;                       // --config, --no-config
  std::vector<std::string> disabled_rules;  // from the configuration file's disableRules
};

constexpr const char* kClusterScoped = "(cluster)";

std::string MetadataString(const json& object, const char* field) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object())
    return "";
  const auto& meta = object["metadata"];
  return meta.contains(field) && meta[field].is_string() ? meta[field].get<std::string>() : "";
}

// Controlled by an object audit also lists (a ReplicaSet's Pods, a Deployment's ReplicaSets,
// a CronJob's Jobs): its template is judged there, so it would only repeat those findings.
bool OwnedByListedKind(const json& object,
                       const std::set<std::pair<std::string, std::string>>& listed) {
  const auto controller = rules::ControllerOf(object);
  return controller && listed.count({controller->group, controller->kind}) > 0;
}

std::vector<std::string> GetArgs(const AuditFlags& flags, const KindPlan& plan) {
  std::string resources;
  for (const auto& s : plan.served) resources += (resources.empty() ? "" : ",") + s.resource;
  auto args = flags.cluster.Args();
  args.insert(args.end(), {"get", resources, "-o", "json"});
  if (flags.all_namespaces) args.push_back("--all-namespaces");
  if (!flags.ns.empty()) args.insert(args.end(), {"--namespace", flags.ns});
  if (!flags.selector.empty()) args.insert(args.end(), {"--selector", flags.selector});
  return args;
}

int RunAudit(const AuditFlags& flags) {
  ClusterPolicy policy;
  KindPlan plan;
  Discovery found;
  std::vector<policy::WorkloadKind> extra;  // outlives `plan`, which points into it
  try {
    extra = ParseKindList(flags.kinds);
    policy = ResolveClusterPolicy(flags.policy_file, flags.policy_configmap, flags.cluster,
                                  {flags.all_namespaces, flags.ns});
    policy.policy = WithRulesOff(policy.policy, flags.disabled_rules);
    found = Discover(flags.cluster);
    plan = PlanKinds(*policy.policy, found.served, &extra);
    plan.warning = found.warning;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitError;
  }
  std::cerr << "note: policy: " << policy.from << "\n";
  for (const auto& w : policy::ShadowedNamespaceEntries(*policy.policy))
    std::cerr << "warning: " << policy.from << ": " << w << "\n";
  if (!plan.warning.empty())
    std::cerr << "warning: discovery was partial, kinds of the failing API groups are skipped: "
              << plan.warning << "\n";
  if (plan.served.empty()) {
    std::cerr << "error: the cluster serves none of the policy's workload kinds\n";
    return kExitError;
  }
  // The cluster's DeviceClasses, claims and NADs, listed where the workloads are.
  ClusterCatalogue cluster =
      ReadClusterCatalogue(flags.cluster, found.served, {flags.all_namespaces, flags.ns, false});
  for (const auto& w : cluster.warnings) std::cerr << "warning: " << w << "\n";
  std::set<std::pair<std::string, std::string>> listed;
  for (const auto& s : plan.served) listed.insert({s.kind->group, s.kind->kind});

  // Positions are never recorded: kubectl's JSON is no file a reader opens, and no change is
  // counted (a running object went through the webhook, or did not).
  const auto report =
      FindFormat(flags.output).open({UseColor(STDOUT_FILENO), false, false, flags.fail_on});
  std::map<std::string, NamespaceSummary> namespaces;
  std::vector<InputError> errors_read;
  std::size_t objects = 0, owned = 0, errors = 0, warnings = 0, suppressed = 0;
  const auto args = GetArgs(flags, plan);
  try {
    KubectlRun run(args);
    const auto pull = [&run](char* buffer, std::size_t capacity) {
      return run.Read(buffer, capacity);
    };
    ForEachDocumentOf(
        run.command(), pull, /*json_list=*/true, codec::Positions::kSkip, [&](InputDocument&& doc) {
          if (!doc.object) {
            errors_read.push_back({doc.source, doc.error, doc.file});
            return;
          }
          if (!flags.include_owned && OwnedByListedKind(*doc.object, listed)) {
            ++owned;
            return;
          }
          std::string ns = MetadataString(*doc.object, "namespace");
          if (ns.empty()) ns = kClusterScoped;
          const std::string source = doc.source;
          try {
            Checked c = Judge(std::move(doc), *policy.policy, "default", false, cluster.catalogue);
            // A live object is named as kubectl names it, not by its place in
            // kubectl's output.
            c.source = (ns == kClusterScoped ? "" : ns + "/") + c.kind + "/" + c.name;
            c.file = c.source;
            auto& s = namespaces[ns];
            ++s.objects;
            ++s.paths[std::string(policy::ToString(c.diagnosis.path))];
            const auto e = c.diagnosis.Count(Severity::kError);
            const auto w = c.diagnosis.Count(Severity::kWarning);
            s.errors += e;
            s.warnings += w;
            errors += e;
            warnings += w;
            suppressed += c.diagnosis.suppressed.size();
            ++objects;
            report->Add(std::move(c));
          } catch (const workload::ManifestError& e) {
            errors_read.push_back({source, e.what(), source});
          }
        });
    run.Finish();
  } catch (const std::exception& e) {  // kubectl failed, or its output could not be read
    errors_read.push_back({"kubectl", e.what(), "kubectl"});
  }

  const ClusterRun listing{namespaces, plan, policy.from, owned};
  report->End({"object", objects, errors, warnings, suppressed, 0, errors_read, &listing});
  PrintInputErrors(errors_read);
  if (!errors_read.empty()) return kExitError;
  return errors > 0 || (warnings > 0 && FailsOn(flags.fail_on, Severity::kWarning)) ? kExitFindings
                                                                                    : kExitOk;
}

}  // namespace

void AddAuditCommand(CLI::App& root, std::function<int()>& run) {
  auto flags = std::make_shared<AuditFlags>();
  auto* cmd = root.add_subcommand(
      "audit", "Judge the workloads running in a cluster (lists them with kubectl get)");
  auto* all = cmd->add_flag("-A,--all-namespaces", flags->all_namespaces,
                            "every namespace (default: kubectl's current namespace)");
  cmd->add_option("-n,--namespace", flags->ns, "only this namespace")->excludes(all);
  cmd->add_option("-l,--selector", flags->selector, "label selector, as kubectl takes it");
  cmd->add_option("--context", flags->cluster.context, "kubeconfig context (kubectl's)");
  cmd->add_option("--kubeconfig", flags->cluster.kubeconfig, "kubeconfig file (kubectl's)");
  auto* file = cmd->add_option("--policy", flags->policy_file, "policy file");
  cmd->add_option("--policy-configmap", flags->policy_configmap,
                  "NAMESPACE/NAME of the ConfigMap holding the policy (key policy.yaml); default: "
                  "the chart's, found by its label, else the embedded policy")
      ->excludes(file);
  cmd->add_option("--kinds", flags->kinds,
                  "also list these kinds, which the policy's table does not know: KIND or "
                  "KIND.GROUP, comma-separated; their pod templates are found by shape")
      ->delimiter(',');
  cmd->add_flag("--include-owned", flags->include_owned,
                "also judge objects a listed workload controls (its Pods, ReplicaSets, Jobs)");
  cmd->add_option("--fail-on", flags->fail_on,
                  "exit 1 on findings of this severity or worse (warning: warnings too)")
      ->check(CLI::IsMember({"error", "warning"}))
      ->capture_default_str();
  static const std::vector<std::string> kOutputs = FormatNames();
  cmd->add_option("--output,-o", flags->output, FormatsHelp())
      ->check(CLI::IsMember(kOutputs))
      ->capture_default_str();
  AddConfigFlags(*cmd, flags->config);
  cmd->callback([cmd, flags, &run] {
    run = [cmd, flags] {
      // The file's namespace is the one for manifests without one, not audit's scope (-n).
      const bool applied = ApplyConfig(*cmd, flags->config,
                                       {"audit",
                                        &flags->policy_file,
                                        nullptr,
                                        &flags->output,
                                        &flags->fail_on,
                                        &flags->disabled_rules,
                                        kOutputs,
                                        {"--policy-configmap"}});
      return applied ? RunAudit(*flags) : kExitError;
    };
  });
}

}  // namespace rw::cli
