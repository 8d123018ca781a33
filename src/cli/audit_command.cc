// `rdma-webhook audit` (`kubectl rdma audit`): judges what already runs in a cluster. The
// objects come from `kubectl get -o json`, read one at a time as kubectl writes them, and are
// judged by the same core as `check`.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "check_reports.h"
#include "cluster.h"
#include "cluster_catalogue.h"
#include "commands.h"
#include "common.h"
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

// One namespace's line of the summary.
struct NamespaceSummary {
  std::size_t objects = 0, errors = 0, warnings = 0;
  std::map<std::string, std::size_t> paths;  // path -> objects on it
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

std::string KindName(const policy::WorkloadKind& k) {
  return k.group.empty() ? k.kind : k.kind + "." + k.group;
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

std::string PathsText(const NamespaceSummary& s) {
  std::string out;
  for (const auto& [path, n] : s.paths)
    out += (out.empty() ? "" : ", ") + path + " " + std::to_string(n);
  return out;
}

void PrintSummaryTable(const std::map<std::string, NamespaceSummary>& namespaces) {
  std::vector<std::vector<std::string>> rows = {
      {"NAMESPACE", "OBJECTS", "ERRORS", "WARNINGS", "PATHS"}};
  for (const auto& [ns, s] : namespaces)
    rows.push_back({ns, std::to_string(s.objects), std::to_string(s.errors),
                    std::to_string(s.warnings), PathsText(s)});
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i + 1 < row.size() ? row[i] + std::string(width[i] - row[i].size() + 3, ' ') : row[i];
    std::cout << line << "\n";
  }
}

json NamespacesJson(const std::map<std::string, NamespaceSummary>& namespaces) {
  json out = json::array();
  for (const auto& [ns, s] : namespaces)
    out.push_back({{"namespace", ns},
                   {"objects", s.objects},
                   {"errors", s.errors},
                   {"warnings", s.warnings},
                   {"paths", s.paths}});
  return out;
}

json KindsJson(const KindPlan& plan) {
  json listed = json::array(), skipped = json::array();
  for (const auto& s : plan.served) listed.push_back(s.resource);
  for (const auto* k : plan.skipped)
    skipped.push_back(
        {{"group", k->group}, {"kind", k->kind}, {"reason", "not served by the cluster"}});
  return {{"listed", listed}, {"skipped", skipped}};
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

  const bool text = flags.output == "text";
  const bool color = text && UseColor(STDOUT_FILENO);
  std::map<std::string, NamespaceSummary> namespaces;
  std::vector<Checked> results;  // sarif and junit: text prints as it goes, json is spooled
  std::optional<CheckJsonWriter> json_writer;
  if (flags.output == "json") json_writer.emplace();
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
            if (json_writer) {
              json_writer->Add(c);
            } else if (flags.output == "junit") {
              c.diagnosis.evidence.clear();     // JUnit shows only findings
              results.push_back(std::move(c));  // clean objects pass as cases
            } else if (c.diagnosis.findings.empty() && c.diagnosis.suppressed.empty()) {
              // nothing to show in text or SARIF: the summary counts it
            } else if (text) {
              PrintText(c, color, false);
            } else {
              results.push_back(std::move(c));
            }
          } catch (const workload::ManifestError& e) {
            errors_read.push_back({source, e.what(), source});
          }
        });
    run.Finish();
  } catch (const std::exception& e) {  // kubectl failed, or its output could not be read
    errors_read.push_back({"kubectl", e.what(), "kubectl"});
  }

  std::vector<std::string> skipped;
  for (const auto* k : plan.skipped) skipped.push_back(KindName(*k));
  if (flags.output == "json") {
    json_writer->Finish(errors_read, {{"namespaces", NamespacesJson(namespaces)},
                                      {"kinds", KindsJson(plan)},
                                      {"policy", policy.from},
                                      {"owned", owned}});
  } else if (flags.output == "sarif") {
    json out = ToSarif(results, errors_read);
    out["runs"][0]["properties"] = {{"namespaces", NamespacesJson(namespaces)},
                                    {"kinds", KindsJson(plan)},
                                    {"policy", policy.from}};
    std::cout << out.dump(2) << "\n";
  } else if (flags.output == "junit") {
    std::cout << ToJunit(results, errors_read);
  } else {
    if (!namespaces.empty()) PrintSummaryTable(namespaces);
    std::cout << CountsLine(objects, "object", errors, warnings, 0, suppressed) << " in "
              << namespaces.size() << (namespaces.size() == 1 ? " namespace" : " namespaces")
              << " (policy: " << policy.from << ")\n";
    if (owned > 0)
      std::cout << owned << (owned == 1 ? " object is" : " objects are")
                << " judged through its controller (--include-owned lists them too)\n";
    if (!skipped.empty()) {
      std::string names;
      for (const auto& k : skipped) names += (names.empty() ? "" : ", ") + k;
      std::cout << "kinds the cluster does not serve, skipped: " << names << "\n";
    }
  }
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
  static const std::vector<std::string> kOutputs = {"text", "json", "sarif", "junit"};
  cmd->add_option("--output,-o", flags->output, "output format")
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
