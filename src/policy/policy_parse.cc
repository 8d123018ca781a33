#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>

#include "fields.h"
#include "modes/mode.h"
#include "parse_over.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/nccl/grammar.h"
#include "rdma_webhook/policy/policy.h"

namespace rw::policy {
namespace {

using nlohmann::json;

using codec::TypeName;

bool ValidEnvName(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Mode ModeFrom(const std::string& s) {
  for (const modes::Row* row : modes::Rows())
    if (row->name == s) return row->mode;
  return Mode::kOff;
}

using modes::ModeNames;

std::string AllowedPathNames() { return Fields::Join(modes::AllowedPathNames()); }

Validation ValidationFrom(const std::string& s) {
  // `warning` is the rules' spelling; accepted here too, so one word works in both places.
  if (s == "warn" || s == "warning") return Validation::kWarn;
  if (s == "off") return Validation::kOff;
  return Validation::kDeny;
}

void ReadNccl(const json& v, const std::string& path, NamespacePolicy& ns) {
  Fields f(v, path);
  const char* fabric = ns.nccl.fabric == Fabric::kIb     ? "ib"
                       : ns.nccl.fabric == Fabric::kRoce ? "roce"
                                                         : "auto";
  const std::string chosen = f.Enum("fabric", fabric, {"roce", "ib", "auto"});
  ns.nccl.fabric = chosen == "ib" ? Fabric::kIb : chosen == "roce" ? Fabric::kRoce : Fabric::kAuto;
  if (const json* gid = f.Get("gidIndex")) {
    if (gid->is_string() && gid->get_ref<const std::string&>() == "auto") {
      ns.nccl.gid_index.reset();
    } else if (gid->is_number_integer() && gid->get<long long>() >= 0 &&
               gid->get<long long>() < 65536) {
      ns.nccl.gid_index = gid->get<long long>();
    } else {
      Fail(f.Path("gidIndex"), "must be auto or an integer >= 0");
    }
  }
  ns.nccl.hca = f.String("hca", ns.nccl.hca);
  ns.nccl.debug_for_verify = f.Bool("debugForVerify", ns.nccl.debug_for_verify);
  ns.nccl.gdr_level = f.String("gdrLevel", ns.nccl.gdr_level);
  if (!ns.nccl.gdr_level.empty()) {
    // What the webhook writes must pass invalid-nccl-value; only a plain number, not the
    // strtol prefixes NCCL also takes.
    const bool numeric = std::all_of(ns.nccl.gdr_level.begin(), ns.nccl.gdr_level.end(),
                                     [](char c) { return c >= '0' && c <= '9'; });
    const bool named = std::find(std::begin(nccl::kGdrLevelNames), std::end(nccl::kGdrLevelNames),
                                 ns.nccl.gdr_level) != std::end(nccl::kGdrLevelNames);
    if (!named && !numeric)
      Fail(f.Path("gdrLevel"),
           "must be LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or an integer >= 0");
  }
  if (const json* extra = f.Get("extraEnv")) {
    if (!extra->is_object()) Fail(f.Path("extraEnv"), "must be a mapping of NAME: value");
    for (auto it = extra->begin(); it != extra->end(); ++it) {
      const std::string field = f.Path("extraEnv") + "." + it.key();
      if (!ValidEnvName(it.key())) Fail(field, "is not a valid environment variable name");
      if (it->is_string()) {
        ns.nccl.extra_env[it.key()] = it->get<std::string>();
      } else if (it->is_number() || it->is_boolean()) {
        ns.nccl.extra_env[it.key()] = it->dump();  // 22 or true written unquoted
      } else {
        Fail(field, "must be a string, got " + TypeName(*it));
      }
    }
  }
  f.Done();
}

// Per-rule severities: `{<rule id>: error|warning|off}`; `off` may arrive as boolean false.
void ReadRules(const json& v, const std::string& path, NamespacePolicy& ns) {
  if (!v.is_object()) Fail(path, "must be a mapping of rule id to error, warning or off");
  const auto& ids = KnownRuleIds();
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string field = path + "." + it.key();
    if (std::find(ids.begin(), ids.end(), it.key()) == ids.end()) {
      const std::string hint = DidYouMean(it.key(), {ids.begin(), ids.end()});
      Fail(field, "unknown rule id '" + it.key() + "'" +
                      (hint.empty() ? " (rdma-webhook rules lists them)" : hint));
    }
    std::string level;
    if (it->is_boolean() && !it->get<bool>())
      level = "off";
    else if (it->is_string())
      level = it->get<std::string>();
    else
      Fail(field, "must be one of error, warning, off, got " + TypeName(*it));
    if (level == "error")
      ns.rules[it.key()] = RuleLevel::kError;
    else if (level == "warning" || level == "warn")  // `warn`: validation's spelling
      ns.rules[it.key()] = RuleLevel::kWarning;
    else if (level == "off")
      ns.rules[it.key()] = RuleLevel::kOff;
    else
      Fail(field, "must be one of error, warning, off, got '" + level + "'");
  }
}

// The paths a mode allows when allowedPaths is not written: its own, or every mode's for off.
std::vector<Path> PathsOfMode(Mode mode) {
  if (const modes::Row* row = modes::RowOf(mode)) return {row->path};
  std::vector<Path> paths;
  for (const modes::Row* row : modes::Rows()) paths.push_back(row->path);
  return paths;
}

// `dra:` (docs/policy.md#dra): a list given replaces the default's whole list, as the resource
// lists do.
void ReadDra(const json& v, Policy& policy) {
  Fields df(v, "dra");
  if (const json* nics = df.Get("nicDrivers")) {
    if (!nics->is_array()) Fail("dra.nicDrivers", "must be a list, got " + TypeName(*nics));
    policy.dra.nic_drivers.clear();
    for (std::size_t i = 0; i < nics->size(); ++i) {
      Fields nf((*nics)[i], "dra.nicDrivers[" + std::to_string(i) + "]");
      DraNicDriver d;
      d.driver = nf.String("driver", "");
      if (d.driver.empty()) Fail(nf.Path("driver"), "is required");
      d.attribute = nf.String("attribute", "");
      d.path = nf.Enum("path", "dra", {"dra", "plugin"}) == "plugin" ? Path::kPlugin : Path::kDra;
      nf.Done();
      policy.dra.nic_drivers.push_back(std::move(d));
    }
  }
  policy.dra.gpu_drivers = df.Strings("gpuDrivers", policy.dra.gpu_drivers);
  df.Done();
}

// The webhook moves a namespace's GPU templates to its mode's path; an allowedPaths without that
// path would deny every template the webhook itself moved (path-not-allowed), so such a policy
// is refused where it is read rather than found out from denied jobs. The list may be the
// entry's own or inherited from `defaults`: the message says which.
void RequireOwnPathAllowed(const NamespacePolicy& ns, const Fields& f, bool written_here) {
  const Path own = ModePath(ns.mode);
  if (ns.Allows(own)) return;
  std::string listed;
  for (const Path p : ns.allowed_paths)
    listed += (listed.empty() ? "" : ", ") + std::string(ToString(p));
  const std::string mode(ToString(ns.mode));
  Fail(
      f.Path("allowedPaths"),
      "must include '" + std::string(ToString(own)) + "', the path of mode " + mode +
          ": the webhook moves templates there and would then deny them (path-not-allowed); got [" +
          listed + "]" + (written_here ? "" : ", inherited from defaults"));
}

// An entry starts from `base` (the policy's defaults; nothing for `defaults` itself): a field
// it omits keeps the base's value, then the contract's default.
NamespacePolicy ReadNamespace(const json& v, const std::string& path, const NamespacePolicy* base,
                              bool& allowed_explicit) {
  NamespacePolicy ns = base != nullptr ? *base : NamespacePolicy{};
  ns.names.clear();
  Fields f(v, path);
  if (base == nullptr) {
    if (v.contains("names")) Fail(f.Path("names"), "is not allowed in defaults");
  } else {
    ns.names = f.Strings("names", {});
    if (ns.names.empty()) Fail(f.Path("names"), "must list at least one namespace name or glob");
  }
  ns.mode = ModeFrom(f.Enum("mode", std::string(ToString(ns.mode)), ModeNames()));
  ns.validation = ValidationFrom(f.Enum("validation", std::string(ToString(ns.validation)),
                                        {"deny", "warn", "warning", "off"}));
  if (const json* allowed_field = f.Get("allowedPaths")) {
    (void)allowed_field;
    const auto allowed = f.Strings("allowedPaths", {});
    ns.allowed_paths.clear();
    for (std::size_t i = 0; i < allowed.size(); ++i) {
      auto p = ParsePath(allowed[i]);
      if (!p || *p == Path::kMixed)
        Fail(f.Path("allowedPaths") + "[" + std::to_string(i) + "]",
             "must be one of " + AllowedPathNames() + ", got '" + allowed[i] + "'");
      ns.allowed_paths.push_back(*p);
    }
    allowed_explicit = !allowed.empty();
  }
  ns.exclusive_nodes = f.Bool("exclusiveNodes", ns.exclusive_nodes);
  ns.on_conflict =
      f.Enum("onConflict", ns.on_conflict == OnConflict::kOverride ? "override" : "reject",
             {"reject", "override"}) == "override"
          ? OnConflict::kOverride
          : OnConflict::kReject;
  ns.opt_out = f.Bool("optOut", ns.opt_out);
  ns.inject_shm = f.Bool("injectShm", ns.inject_shm);
  if (const json* rules = f.Get("rules")) ReadRules(*rules, f.Path("rules"), ns);
  // Every mode's section, whatever the mode: an entry's defaults serve its children.
  for (const modes::Row* row : modes::Rows()) {
    if (row->read == nullptr) continue;
    const std::string key(row->name);
    if (const json* section = f.Get(key)) row->read(*section, f.Path(key), ns);
  }
  if (const json* nccl = f.Get("nccl")) ReadNccl(*nccl, f.Path("nccl"), ns);
  f.Done();

  if (const modes::Row* row = modes::RowOf(ns.mode); row != nullptr && row->require != nullptr)
    row->require(ns, f);
  // allowedPaths not written here or in defaults: [<mode>], every path for mode off.
  if (!allowed_explicit) ns.allowed_paths = PathsOfMode(ns.mode);
  RequireOwnPathAllowed(ns, f, v.contains("allowedPaths"));
  return ns;
}

std::string Fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The chart ships the policy as a ConfigMap whose `policy.yaml` key holds it; a file of that
// ConfigMap (as `kubectl get cm -o yaml` writes it) is accepted as the policy it holds.
std::string PolicyOfConfigMap(const json& cm) {
  const auto data = cm.find("data");
  if (data == cm.end() || !data->is_object())
    throw PolicyError("data: a ConfigMap holding the policy needs data.policy.yaml");
  const auto text = data->find("policy.yaml");
  if (text == data->end() || !text->is_string()) {
    std::string keys;
    for (auto it = data->begin(); it != data->end(); ++it)
      keys += (keys.empty() ? "" : ", ") + it.key();
    throw PolicyError("data: a ConfigMap holding the policy needs the string key policy.yaml" +
                      (keys.empty() ? std::string(" (it has no keys)") : " (it has " + keys + ")"));
  }
  return text->get<std::string>();
}

// The JSON pointer of a field path: namespaces[0].nccl.fabric -> /namespaces/0/nccl/fabric. A
// key holding '.' or '[' splits wrongly; the lookup then lands on an ancestor, still close.
std::string PointerOf(const std::string& field) {
  std::string pointer = "/";
  for (const char c : field) {
    if (c == '.' || c == '[') {
      pointer += '/';
    } else if (c == ']') {
      continue;
    } else if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer += c;
    }
  }
  return pointer;
}

// The policy of one document, an error carrying the line and column of the field it names. The
// document's own start ("") is no answer: a JSON document records only that.
Policy ParseLocated(const codec::SourceDocument& doc, const Policy& base) {
  try {
    return ParsePolicyOver(*doc.value, base);
  } catch (PolicyError& e) {
    if (e.field().empty()) throw;
    std::string pointer = PointerOf(e.field());
    for (; !pointer.empty(); pointer.erase(pointer.rfind('/'))) {
      if (const auto it = doc.positions.find(pointer); it != doc.positions.end()) {
        e.line = it->second.line;
        e.column = it->second.column;
        break;
      }
    }
    throw;
  }
}

}  // namespace

Policy ParsePolicyOver(const json& document, const Policy& base) {
  // An omitted list is the embedded default's, not the struct's short one: a small policy that
  // names only its namespaces must still know the resource names real clusters use, or it
  // reads their jobs as path none and judges nothing.
  Policy policy;
  policy.gpu_resources = base.gpu_resources;
  policy.vf_resources = base.vf_resources;
  policy.shared_resources = base.shared_resources;
  policy.rdma_networks = base.rdma_networks;
  policy.dra = base.dra;
  policy.network_resources_injector = base.network_resources_injector;
  policy.network_resources_injector_stated = base.network_resources_injector_stated;
  Fields f(document, "");
  const std::string api = f.String("apiVersion", "rdma-webhook/v1");
  if (api != "rdma-webhook/v1") Fail("apiVersion", "must be rdma-webhook/v1, got '" + api + "'");
  const std::string kind = f.String("kind", "Policy");
  if (kind != "Policy") Fail("kind", "must be Policy, got '" + kind + "'");
  policy.gpu_resources = f.Strings("gpuResources", policy.gpu_resources);
  if (const json* res = f.Get("resources")) {
    Fields rf(*res, "resources");
    policy.vf_resources = rf.Strings("vf", policy.vf_resources);
    policy.shared_resources = rf.Strings("shared", policy.shared_resources);
    rf.Done();
  }
  policy.rdma_networks = f.Strings("rdmaNetworks", policy.rdma_networks);
  if (f.Get("networkResourcesInjector") != nullptr) policy.network_resources_injector_stated = true;
  policy.network_resources_injector =
      f.Bool("networkResourcesInjector", policy.network_resources_injector);
  if (const json* dra = f.Get("dra")) ReadDra(*dra, policy);
  if (const json* kinds = f.Get("kinds")) {
    if (!kinds->is_array()) Fail("kinds", "must be a list, got " + TypeName(*kinds));
    for (std::size_t i = 0; i < kinds->size(); ++i) {
      const std::string path = "kinds[" + std::to_string(i) + "]";
      Fields kf((*kinds)[i], path);
      WorkloadKind k;
      k.group = kf.String("group", "");
      k.kind = kf.String("kind", "");
      if (k.kind.empty()) Fail(kf.Path("kind"), "is required");
      k.templates = kf.Strings("templates", {});
      if (k.templates.empty()) Fail(kf.Path("templates"), "must list at least one JSON pointer");
      for (std::size_t t = 0; t < k.templates.size(); ++t)
        if (k.templates[t].front() != '/')
          Fail(kf.Path("templates") + "[" + std::to_string(t) + "]",
               "must be a JSON pointer starting with '/'");
      k.multi_node = kf.Bool("multiNode", k.multi_node);
      k.host_network_dns_policy =
          kf.Enum("hostNetworkDnsPolicy", "",
                  {"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"});
      k.replicas = DefaultReplicaCounts(k.templates);
      kf.Done();
      policy.kinds.push_back(std::move(k));
    }
  }
  // Policy rows first so that a cluster can redefine a built-in kind.
  for (const auto& row : BuiltinKinds()) policy.kinds.push_back(row);
  bool defaults_allowed_explicit = false;
  const json* d = f.Get("defaults");
  policy.defaults = ReadNamespace(d != nullptr ? *d : json::object(), "defaults", nullptr,
                                  defaults_allowed_explicit);
  if (const json* list = f.Get("namespaces")) {
    if (!list->is_array()) Fail("namespaces", "must be a list, got " + TypeName(*list));
    for (std::size_t i = 0; i < list->size(); ++i) {
      bool allowed_explicit = defaults_allowed_explicit;
      policy.namespaces.push_back(ReadNamespace((*list)[i], "namespaces[" + std::to_string(i) + "]",
                                                &policy.defaults, allowed_explicit));
    }
  }
  f.Done();
  policy.hash = Fnv1a(document.dump());
  return policy;
}

Policy ParsePolicy(const json& document) { return ParsePolicyOver(document, DefaultPolicy()); }

Policy ParsePolicyTextOver(std::string_view text, const Policy& base) {
  auto docs = codec::ParseStream(text, codec::DuplicateKeys::kRefuse, codec::Positions::kRecord);
  const codec::SourceDocument* found = nullptr;
  for (const auto& d : docs) {
    if (!d.error.empty()) throw PolicyError(d.error);
    if (!d.value) continue;
    if (found != nullptr)
      throw PolicyError("line " + std::to_string(d.line) + ": a policy file holds one document");
    found = &d;
  }
  if (found == nullptr) throw PolicyError("policy: the file holds no document");
  if (found->value->is_object() && found->value->value("kind", json()) == "ConfigMap") {
    try {
      return ParsePolicyTextOver(PolicyOfConfigMap(*found->value), base);
    } catch (PolicyError& e) {
      e.line = e.column = 0;  // a position in the embedded text, not in this file
      throw;
    }
  }
  return ParseLocated(*found, base);
}

Policy ParsePolicyText(std::string_view text) { return ParsePolicyTextOver(text, DefaultPolicy()); }

}  // namespace rw::policy
