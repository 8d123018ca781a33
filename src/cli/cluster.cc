#include "cluster.h"

#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common.h"
#include "kubectl.h"

namespace rw::cli {
namespace {

using nlohmann::json;

// The label every object of the chart carries (charts/rdma-webhook/templates/_helpers.tpl).
constexpr const char* kChartLabel = "app.kubernetes.io/name=rdma-webhook";

std::string Cell(const std::string& line, std::size_t offset) {
  if (offset >= line.size()) return "";
  const std::size_t end = line.find_first_of(" \t", offset);
  return line.substr(offset, end == std::string::npos ? std::string::npos : end - offset);
}

std::string KindName(const policy::WorkloadKind& k) {
  return k.group.empty() ? k.kind : k.kind + "." + k.group;
}

std::shared_ptr<const policy::Policy> PolicyFromConfigMap(const json& cm,
                                                          const std::string& where) {
  const json* data = cm.contains("data") ? &cm["data"] : nullptr;
  if (data == nullptr || !data->is_object() || !data->contains(kPolicyKey) ||
      !(*data)[kPolicyKey].is_string())
    throw std::runtime_error("ConfigMap " + where + " has no data key " + kPolicyKey);
  try {
    return std::make_shared<const policy::Policy>(
        policy::ParsePolicyText((*data)[kPolicyKey].get<std::string>()));
  } catch (const policy::PolicyError& e) {
    throw std::runtime_error("ConfigMap " + where + ", key " + kPolicyKey + ": " + e.what());
  }
}

json ParseKubectlJson(const std::string& text, const std::string& what) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw std::runtime_error(what + ": kubectl's output is no JSON");
  return parsed;
}

std::string NameOf(const json& object) {
  const auto& meta = object.value("metadata", json::object());
  return meta.value("namespace", std::string()) + "/" + meta.value("name", std::string());
}

}  // namespace

std::vector<std::string> ClusterFlags::Args() const {
  std::vector<std::string> out;
  if (!context.empty()) out.insert(out.end(), {"--context", context});
  if (!kubeconfig.empty()) out.insert(out.end(), {"--kubeconfig", kubeconfig});
  return out;
}

std::vector<ApiResource> ParseApiResources(const std::string& text) {
  std::istringstream in(text);
  std::string header;
  while (std::getline(in, header) && header.rfind("NAME", 0) != 0) {
  }
  const auto api = header.find("APIVERSION"), kind = header.find("KIND");
  if (header.empty() || api == std::string::npos || kind == std::string::npos)
    throw std::runtime_error(
        "kubectl api-resources printed no NAME ... APIVERSION ... KIND header");
  std::vector<ApiResource> out;
  for (std::string line; std::getline(in, line);) {
    ApiResource r{Cell(line, 0), Cell(line, api), Cell(line, kind)};
    if (r.name.empty() || r.kind.empty()) continue;
    const auto slash = r.group.rfind('/');
    r.group = slash == std::string::npos ? "" : r.group.substr(0, slash);  // "apps/v1" -> "apps"
    out.push_back(std::move(r));
  }
  return out;
}

KindPlan PlanKinds(const policy::Policy& policy, const std::vector<ApiResource>& served,
                   std::vector<policy::WorkloadKind>* extra) {
  KindPlan plan;
  std::set<std::string> planned;  // a policy `kinds:` entry may repeat a built-in row
  const auto plan_kind = [&](const policy::WorkloadKind& k) {
    if (!planned.insert(KindName(k)).second) return;
    const ApiResource* found = nullptr;
    for (const auto& r : served)
      if (r.kind == k.kind && r.group == k.group) found = &r;
    if (found == nullptr) {
      plan.skipped.push_back(&k);
    } else {
      plan.served.push_back({&k, k.group.empty() ? found->name : found->name + "." + k.group});
    }
  };
  for (const auto& k : policy.kinds) plan_kind(k);
  if (extra == nullptr) return plan;
  for (auto& k : *extra) {
    for (const auto& r : served)
      if (r.name == k.kind && r.group == k.group) k.kind = r.kind;
    plan_kind(k);
  }
  return plan;
}

std::vector<policy::WorkloadKind> ParseKindList(const std::vector<std::string>& entries) {
  std::vector<policy::WorkloadKind> out;
  for (const auto& e : entries) {
    // A kind has no dot and a group has at least one: the first dot splits them.
    const auto dot = e.find('.');
    policy::WorkloadKind k;
    k.kind = e.substr(0, dot);
    if (dot != std::string::npos) k.group = e.substr(dot + 1);
    if (k.kind.empty() || (dot != std::string::npos && k.group.empty()))
      throw std::invalid_argument("--kinds: '" + e + "' is not KIND or KIND.GROUP");
    out.push_back(std::move(k));
  }
  return out;
}

Discovery Discover(const ClusterFlags& cluster) {
  auto args = cluster.Args();
  args.insert(args.end(), {"api-resources", "-o", "wide"});
  KubectlRun run(args);
  std::string out;
  char buffer[1 << 16];
  for (std::size_t n = 0; (n = run.Read(buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  std::string warning;
  try {
    run.Finish();
  } catch (const KubectlError& e) {
    // An aggregated API that is down makes api-resources fail after listing the others.
    if (out.find("APIVERSION") == std::string::npos) throw;
    warning = e.what();
  }
  return {ParseApiResources(out), std::move(warning)};
}

ClusterPolicy ResolveClusterPolicy(const std::string& file, const std::string& configmap,
                                   const ClusterFlags& cluster, const AuditScope& scope) {
  if (!file.empty()) return {LoadPolicy(file), "file " + file};
  auto args = cluster.Args();
  if (!configmap.empty()) {
    const auto slash = configmap.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == configmap.size())
      throw std::runtime_error("--policy-configmap " + configmap + ": expected NAMESPACE/NAME");
    args.insert(args.end(), {"get", "configmap", configmap.substr(slash + 1), "-n",
                             configmap.substr(0, slash), "-o", "json"});
    const json cm = ParseKubectlJson(RunKubectl(args), "ConfigMap " + configmap);
    return {PolicyFromConfigMap(cm, configmap), "ConfigMap " + configmap};
  }
  // A user with rights in one namespace only may not list ConfigMaps cluster-wide: an audit of
  // one namespace looks there first, and asks for all namespaces only when it finds none.
  std::vector<const json*> found;
  json list;
  const auto find_in = [&](const std::vector<std::string>& where) {
    auto get = args;
    get.insert(get.end(), {"get", "configmaps"});
    get.insert(get.end(), where.begin(), where.end());
    get.insert(get.end(), {"-l", kChartLabel, "-o", "json"});
    list = ParseKubectlJson(RunKubectl(get), "the chart's policy ConfigMap");
    found.clear();
    if (list.contains("items") && list["items"].is_array())
      for (const auto& cm : list["items"])
        if (cm.is_object() && cm.contains("data") && cm["data"].is_object() &&
            cm["data"].contains(kPolicyKey))
          found.push_back(&cm);
  };
  if (scope.all_namespaces) {
    find_in({"--all-namespaces"});
  } else {
    find_in(scope.ns.empty() ? std::vector<std::string>{}
                             : std::vector<std::string>{"--namespace", scope.ns});
    if (found.empty()) {
      try {
        find_in({"--all-namespaces"});
      } catch (const KubectlError& e) {
        if (std::string(e.what()).find("Forbidden") == std::string::npos) throw;
        throw std::runtime_error(
            "the chart's policy ConfigMap is not in the audited namespace, and listing "
            "ConfigMaps in all namespaces is forbidden (" +
            std::string(e.what()) +
            "): name it with --policy-configmap NAMESPACE/NAME or pass --policy FILE");
      }
    }
  }
  if (found.empty())
    return {std::shared_ptr<const policy::Policy>(&policy::DefaultPolicy(), [](auto*) {}),
            "the embedded default"};
  if (found.size() > 1) {
    std::string names;
    for (const auto* cm : found) names += (names.empty() ? "" : ", ") + NameOf(*cm);
    throw std::runtime_error("several rdma-webhook policy ConfigMaps (" + names +
                             "): choose one with --policy-configmap NAMESPACE/NAME");
  }
  const std::string where = NameOf(*found[0]);
  return {PolicyFromConfigMap(*found[0], where), "ConfigMap " + where};
}

}  // namespace rw::cli
