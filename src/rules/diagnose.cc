#include <algorithm>
#include <set>

#include "context.h"
#include "modes/mode.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/suppression.h"
#include "signs.h"

namespace rw::rules {
namespace {

using policy::Path;

bool NcclFromReferences(const workload::Container& c) {
  for (const auto& v : c.env)
    if (v.from_ref && v.name.rfind("NCCL_", 0) == 0) return true;
  for (const auto& prefix : c.env_from_prefixes)
    if (prefix.empty() || prefix.rfind("NCCL", 0) == 0) return true;
  return false;
}

std::string ClaimEvidence(const workload::Container& c, const std::string& res) {
  if (auto it = c.limits.find(res); it != c.limits.end())
    return "limits " + res + "=" + std::to_string(it->second);
  if (auto it = c.requests.find(res); it != c.requests.end())
    return "requests " + res + "=" + std::to_string(it->second);
  return {};
}

void Evidence(const TemplateFacts& f, const policy::Policy& policy, const workload::Workload& w,
              std::vector<std::string>& out) {
  const std::string& pod_ns = w.ns;
  auto add = [&](std::string e) {
    if (!e.empty() && std::find(out.begin(), out.end(), e) == out.end())
      out.push_back(std::move(e));
  };
  const auto& t = *f.t;
  add(f.networks.plugin);
  add(f.networks.platform);
  for (const auto& line : f.networks.dra.evidence) add(line);
  if (t.host_network) add("hostNetwork: true");
  // The dnsPolicy the pods get, as hostnetwork-dns decides it.
  const GivenDnsPolicy dns = DnsPolicyGiven(t, w.kind_row);
  if (t.host_network || (t.dns_policy && *t.dns_policy != "ClusterFirst"))
    add("dnsPolicy: " + (dns.by_controller
                             ? *dns.policy + " (what the " +
                                   (w.kind_row->group.empty() ? "" : w.kind_row->group + " ") +
                                   w.kind_row->kind + " controller sets)"
                             : dns.policy.value_or("ClusterFirst (default)")));
  auto claims = [&](const workload::Container& c) {
    for (const auto& r : c.ResourceNames()) {
      if (policy.IsRdmaDeviceResource(r)) {
        add(ClaimEvidence(c, r));
      } else if (c.gpu && !policy.IsGpuResource(r) && LooksLikeNicResource(r) &&
                 f.networks.plugin.empty() && !f.networks.nads.IsVfResource(r)) {
        add("claims " + r + ", which the policy does not know: add it to resources.vf or " +
            "resources.shared");
      }
    }
  };
  for (const auto* c : f.gpu) claims(*c);
  for (const auto& c : t.containers)
    if (!c.gpu) claims(c);
  for (const auto& a : f.networks.all)
    add("annotation attaches " + (a.ns == pod_ns ? "" : a.ns + "/") + a.name + "@" + a.interface);
  for (const auto& n : f.networks.nads.attached) add(n.evidence);
  if (t.Annotation("kubernetes.v1.cni.cncf.io/networks") != nullptr)
    add("legacy annotation kubernetes.v1.cni.cncf.io/networks (ignored by Multus)");
  static constexpr std::string_view kVars[] = {"NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE",
                                               "NCCL_IB_GID_INDEX",  "NCCL_IB_HCA",
                                               "NCCL_NET_GDR_LEVEL", "NCCL_NET"};
  for (const auto* c : f.gpu) {
    for (auto name : kVars) {
      const auto* v = c->FindEnv(name);
      if (v == nullptr) continue;
      add(v->value ? std::string(name) + "=" + std::string(*v->value)
                   : std::string(name) + " from valueFrom");
    }
    if (!c->env_from_prefixes.empty()) add("envFrom (values unknown at admission)");
    if (c->HasCapability("IPC_LOCK")) add("IPC_LOCK added");
    if (c->HasOnlyPrefixedCapability("IPC_LOCK")) add("CAP_IPC_LOCK added");
    if (c->privileged) add("privileged: true");
    add(EfaOverTcp(*c));
  }
  if (f.path == Path::kHostNetwork) {
    if (f.rdma_sign.empty())
      add("hostNetwork without a sign of RDMA (no IPC_LOCK, RDMA device, /dev/infiniband, DRA "
          "claim, NCCL_IB_* variable or multi-node kind): not judged as RDMA");
    else
      add("RDMA on hostNetwork: " + f.rdma_sign);
  }
}

std::string KindName(const workload::Workload& w) {
  return (w.api_version.empty() ? std::string() : w.api_version + " ") +
         (w.kind.empty() ? std::string("(none)") : w.kind);
}

// A kind without a row is judged through the templates its shape shows: say where they are, so
// that a finding on an unfamiliar pointer can be traced, and that nothing will be mutated.
void ShapeEvidence(const workload::Workload& w, std::vector<std::string>& out) {
  if (w.kind_row != nullptr) return;
  if (!w.templates.empty()) {
    std::string where;
    for (const auto& t : w.templates)
      where += (where.empty() ? "" : ", ") + (t.pointer.empty() ? std::string("/") : t.pointer);
    out.push_back("kind " + KindName(w) + " has no row in the kinds table: pod template(s) found " +
                  "by shape at " + where +
                  " are judged but never mutated (a `kinds:` entry in the policy makes them "
                  "mutable)");
  }
  for (const auto& u : w.unread_templates)
    out.push_back("a pod-template-shaped object of kind " + KindName(w) +
                  " is not read as a pod template: " + u);
  if (w.shape_search_truncated)
    out.push_back("the search for pod templates by shape stopped at its bound (" +
                  std::to_string(workload::kMaxShapeDepth) + " levels, " +
                  std::to_string(workload::kMaxShapeTemplates) + " templates, " +
                  std::to_string(workload::kMaxShapeVisits) +
                  " values): templates past it are not judged");
}

// Why a workload is `none` (or not judged): the evidence says so, so that a quiet result is
// never mistaken for a clean one.
void NoneEvidence(const workload::Workload& w, const Context& ctx, std::vector<std::string>& out) {
  if (w.kind_row == nullptr && w.templates.empty()) {
    out.push_back(
        "kind " + KindName(w) + " is not a workload kind the policy knows" +
        (w.unread_templates.empty() ? ", and nothing in it has a pod template's shape" : "") +
        ": not judged");
    return;
  }
  if (w.templates.empty()) {
    // A kind whose row names where its templates are, and this object has none there (another
    // version of the CRD, such as Dynamo's v1alpha1): say so rather than "no GPU container".
    std::string where;
    for (const auto& p : w.kind_row->templates) where += (where.empty() ? "" : ", ") + p;
    out.push_back("kind " + KindName(w) + " keeps its pod templates at " + where +
                  ", and this object has none there: not judged");
    return;
  }
  const bool any_gpu = std::any_of(ctx.templates.begin(), ctx.templates.end(),
                                   [](const TemplateFacts& f) { return !f.gpu.empty(); });
  if (any_gpu) {
    out.push_back(
        "GPU templates without an RDMA path: no RDMA resource, network, hostNetwork, "
        "plugin or NCCL_IB_DISABLE");
    return;
  }
  const bool dra = std::any_of(w.templates.begin(), w.templates.end(), [](const auto& t) {
    return t.HasResourceClaims() ||
           std::any_of(t.containers.begin(), t.containers.end(),
                       [](const workload::Container& c) { return c.HasDraClaims(); });
  });
  std::string gpus;
  for (const auto& g : ctx.policy.gpu_resources) gpus += (gpus.empty() ? "" : ", ") + g;
  if (dra) {
    out.push_back(
        "GPUs only through DRA claims (resources.claims), not a resource of "
        "gpuResources (" +
        gpus + "): not judged");
    for (const auto& f : ctx.templates)
      for (const auto& line : f.networks.dra.evidence)
        if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
  } else
    out.push_back("no GPU container (none requests " + gpus + "): not judged");
}

// Where two rules describe one fact, the more specific wins: policy-conflict yields to any
// other error on the same field (gid-index-mismatch, hostnetwork-dns, invalid-nccl-value).
void DropShadowedConflicts(Findings& findings) {
  std::set<std::string> specific;
  for (const auto& f : findings)
    if (f.rule != "policy-conflict" && f.severity == Severity::kError) specific.insert(f.pointer);
  findings.erase(std::remove_if(findings.begin(), findings.end(),
                                [&](const Finding& f) {
                                  return f.rule == "policy-conflict" && specific.count(f.pointer);
                                }),
                 findings.end());
}

// The paths a sign decides that no mode owns, and whether NCCL uses RDMA on them.
struct OtherPath {
  Path path;
  bool rdma;
  modes::Sign sign;
};

// NCCL goes through a network plugin that is not verbs (TCPX, EFA, a DRA claim of EFA): first.
bool ThroughPlugin(const workload::PodTemplate&, const policy::Policy&,
                   const policy::NamespacePolicy&, const TemplateNetworks& nets) {
  return !nets.plugin.empty() || !nets.dra.plugin.empty();
}

// A variable asks NCCL for InfiniBand: an HCA list, IB enabled, or the IB transport named.
bool AsksForInfiniband(std::string_view name, std::string_view value) {
  if (name == "NCCL_IB_HCA") return !value.empty();
  if (name == "NCCL_IB_DISABLE") return nccl::NcclReadsInteger(value) == 0;
  if (name == "NCCL_NET") return EqualsIgnoreCase(value, "IB");
  return false;
}

// A privileged GPU container that asks NCCL for InfiniBand, in a pod with no other path (the
// last sign tried). Privileged passes every device, /dev/infiniband included, and on an
// InfiniBand fabric the kernel's shared RDMA namespace mode shows the host's HCAs in every
// network namespace: AKS and Nebius document InfiniBand pods this way. The variables are needed
// as well: many GPU pods are privileged for other reasons and never use a NIC.
bool PrivilegedInfiniband(const workload::PodTemplate& t, const policy::Policy&,
                          const policy::NamespacePolicy&, const TemplateNetworks&) {
  return std::any_of(t.containers.begin(), t.containers.end(), [](const workload::Container& c) {
    if (!c.gpu || !c.privileged) return false;
    for (const auto& v : c.env)
      if (v.value && AsksForInfiniband(v.name, *v.value)) return true;
    const auto assignments = nccl::ParseLauncherArgs(c.argv);
    if (std::any_of(assignments.begin(), assignments.end(),
                    [](const auto& a) { return AsksForInfiniband(a.name, a.value); }))
      return true;
    return std::any_of(c.mounts.begin(), c.mounts.end(), [](const workload::VolumeMount& m) {
      return m.mount_path == "/dev/infiniband" || m.mount_path.rfind("/dev/infiniband/", 0) == 0;
    });
  });
}

constexpr OtherPath kOtherPaths[] = {{Path::kPlugin, false, {10, ThroughPlugin}},
                                     {Path::kPrivileged, true, {90, PrivilegedInfiniband}}};

struct Detector {
  Path path;
  const modes::Sign* sign;
};

// Every unit's signs and the other paths', by precedence: the order TemplatePath tries them.
const std::vector<Detector>& Detectors() {
  static const std::vector<Detector> kDetectors = [] {
    std::vector<Detector> all;
    for (const modes::Unit* unit : modes::Units())
      for (const modes::Sign& sign : unit->signs)
        all.push_back({policy::ModePath(unit->mode), &sign});
    for (const OtherPath& other : kOtherPaths) all.push_back({other.path, &other.sign});
    std::stable_sort(all.begin(), all.end(), [](const Detector& a, const Detector& b) {
      return a.sign->precedence < b.sign->precedence;
    });
    return all;
  }();
  return kDetectors;
}

// Whether a template on its path uses RDMA (before NCCL_IB_DISABLE is looked at): what the
// path's mode unit says, or the other path's flag.
bool PathUsesRdma(const TemplateFacts& f) {
  for (const modes::Unit* unit : modes::Units())
    if (policy::ModePath(unit->mode) == f.path)
      return unit->rdma && (unit->rdma_shown == nullptr || unit->rdma_shown(f));
  for (const OtherPath& other : kOtherPaths)
    if (other.path == f.path) return other.rdma;
  return false;
}

}  // namespace

std::vector<modes::PathSign> modes::PathSigns() {
  std::vector<PathSign> signs;
  for (const Detector& d : Detectors()) signs.push_back({d.path, d.sign->precedence});
  return signs;
}

Path WorkloadPath(const std::vector<Path>& template_paths) {
  std::set<Path> seen;
  bool unknown = false;
  for (const Path p : template_paths) {
    if (p == Path::kNone) continue;
    if (p == Path::kUnknown) {
      unknown = true;
      continue;
    }
    seen.insert(p);
  }
  if (seen.size() > 1) return Path::kMixed;
  if (seen.size() == 1) return *seen.begin();
  return unknown ? Path::kUnknown : Path::kNone;
}

void ApplyRuleLevels(std::vector<Finding>& findings, const policy::NamespacePolicy& ns) {
  if (ns.rules.empty()) return;
  findings.erase(std::remove_if(findings.begin(), findings.end(),
                                [&](Finding& f) {
                                  auto it = ns.rules.find(f.rule);
                                  if (it == ns.rules.end()) return false;
                                  if (it->second == policy::RuleLevel::kOff) return true;
                                  f.severity = it->second == policy::RuleLevel::kError
                                                   ? Severity::kError
                                                   : Severity::kWarning;
                                  return false;
                                }),
                 findings.end());
}

std::string_view ToString(Severity s) { return s == Severity::kError ? "error" : "warning"; }

std::size_t Diagnosis::Count(Severity s) const {
  return static_cast<std::size_t>(std::count_if(findings.begin(), findings.end(),
                                                [s](const Finding& f) { return f.severity == s; }));
}

bool IsRdmaNetwork(const policy::Policy& policy, const policy::NamespacePolicy& ns,
                   std::string_view name) {
  if (std::find(policy.rdma_networks.begin(), policy.rdma_networks.end(), name) !=
      policy.rdma_networks.end())
    return true;
  return std::any_of(ns.sriov.networks.begin(), ns.sriov.networks.end(),
                     [&](const policy::SriovNetwork& n) { return n.network == name; });
}

bool Context::IsRdmaNetwork(std::string_view name) const {
  return rules::IsRdmaNetwork(policy, ns, name);
}

bool DisablesIb(const workload::Container& c) {
  const auto* v = c.FindEnv("NCCL_IB_DISABLE");
  return v != nullptr && v->value && nccl::NcclReadsInteger(*v->value) != 0;
}

const workload::EnvVar* SocketOnlyNet(const workload::Container& c) {
  const auto* net = c.FindEnv("NCCL_NET");
  return net != nullptr && net->value && EqualsIgnoreCase(*net->value, "Socket") ? net : nullptr;
}

const workload::EnvVar* KeepsNcclOffVerbs(const workload::Container& c) {
  return DisablesIb(c) ? c.FindEnv("NCCL_IB_DISABLE") : SocketOnlyNet(c);
}

GivenDnsPolicy DnsPolicyGiven(const workload::PodTemplate& t, const policy::WorkloadKind* row) {
  if (t.host_network && row != nullptr && !row->host_network_dns_policy.empty() &&
      (!t.dns_policy || row->host_network_dns_forced))
    return {row->host_network_dns_policy, true};
  return {t.dns_policy, false};
}

std::string EnvPointer(const workload::Container& c, const workload::EnvVar& v) {
  return c.pointer + "/env/" + std::to_string(v.index) + "/value";
}

Path TemplatePath(const workload::PodTemplate& t, const policy::Policy& policy,
                  const policy::NamespacePolicy& ns, const TemplateNetworks& nets) {
  if (!t.HasGpu()) return Path::kNone;
  for (const Detector& d : Detectors())
    if (d.sign->holds(t, policy, ns, nets)) return d.path;
  // NCCL's variables from references, or a claim whose devices could not be read, may put the
  // template on any path.
  const bool from_refs = std::any_of(t.containers.begin(), t.containers.end(),
                                     [](const auto& c) { return c.gpu && NcclFromReferences(c); });
  return from_refs || nets.dra.unknown ? Path::kUnknown : Path::kNone;
}

bool OptedOut(const workload::Workload& w, const policy::NamespacePolicy& ns) {
  if (!ns.opt_out) return false;
  auto skip = [](const std::map<std::string, std::string>& a) {
    auto it = a.find(std::string(kSkipAnnotation));
    return it != a.end() && it->second == "true";
  };
  if (skip(w.annotations)) return true;
  return std::any_of(w.templates.begin(), w.templates.end(),
                     [&](const workload::PodTemplate& t) { return skip(t.annotations); });
}

Diagnosis Diagnose(const Assessment& assessment) {
  const auto& w = *assessment.w;
  const auto& policy = *assessment.policy;
  const auto& ns = *assessment.ns;
  Context ctx{w, policy, ns, {}, Path::kNone, {}};
  Diagnosis d;
  d.enforcement = ns.validation;
  ShapeEvidence(w, d.evidence);
  long long gpu_pods = 0;
  ctx.templates.reserve(assessment.templates.size());
  for (const auto& ta : assessment.templates) {
    const auto& t = *ta.t;
    TemplateFacts f(ta);
    f.interfaces = {"eth0", "lo"};
    f.interfaces.insert(f.interfaces.end(), f.networks.platform_interfaces.begin(),
                        f.networks.platform_interfaces.end());
    for (std::size_t i = 0; i < f.networks.all.size(); ++i) {
      f.interfaces.push_back(f.networks.all[i].interface);
      if (ctx.IsRdmaNetwork(f.networks.all[i].name) || f.networks.nads.RdmaAt(i))
        ++f.rdma_attachments;
    }
    f.vf_claimed = t.TotalClaimWhere([&](const std::string& r) {
      return policy.IsVfResource(r) || f.networks.nads.IsVfResource(r);
    });
    f.shared_claimed =
        t.TotalClaimWhere([&](const std::string& r) { return policy.IsSharedResource(r); });
    f.rdma_assumed = RdmaAssumed(f, policy, ns);
    for (const auto& c : t.containers)
      if (c.gpu) f.gpu.push_back(&c);
    if (!f.gpu.empty()) {
      f.replicas = t.replicas;
      gpu_pods += f.replicas;
    }
    if (f.path == Path::kHostNetwork) f.rdma_sign = HostNetworkRdmaSign(t, policy);
    for (const auto& c : t.containers)
      for (auto& a : nccl::ParseLauncherArgs(c.argv)) ctx.launcher.push_back({std::move(a), &c});
    ctx.templates.push_back(std::move(f));
  }
  // A training kind whose GPU templates add up to several pods is multi-node: on the host
  // network that alone says NCCL will cross nodes, over the host's RDMA NICs.
  const bool multi_node = gpu_pods > 1 && w.kind_row != nullptr && w.kind_row->multi_node;
  for (auto& f : ctx.templates) {
    if (f.path == Path::kHostNetwork && f.rdma_sign.empty() && multi_node && !f.gpu.empty())
      f.rdma_sign = "multi-node " + w.kind + " (" + std::to_string(gpu_pods) + " GPU pods)";
    const bool uses_rdma = PathUsesRdma(f);
    bool ib_disabled = false;
    for (const auto* c : f.gpu) ib_disabled = ib_disabled || KeepsNcclOffVerbs(*c) != nullptr;
    f.rdma = uses_rdma && !ib_disabled;
    if (uses_rdma)
      for (const auto* c : f.gpu)
        if (KeepsNcclOffVerbs(*c) == nullptr) f.rdma_containers.push_back(c);
    d.templates.push_back({f.t->pointer, f.path, f.rdma});
    d.rdma = d.rdma || f.rdma;
    if (!f.gpu.empty()) Evidence(f, policy, w, d.evidence);
  }
  for (const auto& l : ctx.launcher)
    if (l.assignment.name.rfind("NCCL_", 0) == 0)
      d.evidence.push_back("launcher " + l.assignment.origin + " " + l.assignment.name + "=" +
                           l.assignment.value);
  std::vector<Path> paths;
  for (const auto& f : ctx.templates) paths.push_back(f.path);
  ctx.path = WorkloadPath(paths);
  d.path = ctx.path;
  if (d.path == Path::kNone) NoneEvidence(w, ctx, d.evidence);
  if (assessment.opted_out) {
    d.skipped = true;
    return d;
  }
  for (const Rule* rule : Rules())
    if (rule->check != nullptr) rule->check(ctx, *rule, d.findings);
  DropShadowedConflicts(d.findings);
  ApplyRuleLevels(d.findings, ns);
  // After the levels: a rule the policy turned off has nothing left to suppress.
  Suppress(w, d.findings, d.suppressed);
  return d;
}

Diagnosis Diagnose(const workload::Workload& w, const policy::Policy& policy,
                   const catalogue::Catalogue& catalogue) {
  return Diagnose(Assess(w, policy, catalogue));
}

Diagnosis Diagnose(const nlohmann::json& object, const policy::Policy& policy,
                   std::string_view default_ns, const catalogue::Catalogue& catalogue) {
  const auto w = workload::Workload::Read(object, policy, default_ns);
  return Diagnose(w, policy, catalogue);
}

}  // namespace rw::rules
