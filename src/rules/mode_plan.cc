#include "rdma_webhook/rules/mode_plan.h"

#include <algorithm>
#include <array>
#include <utility>

#include "context.h"
#include "modes/mode.h"
#include "signs.h"

namespace rw::rules {
namespace {

using modes::Draft;
using modes::EnvWant;
using workload::EscapePointerToken;

constexpr std::string_view kMultusKey = "k8s.v1.cni.cncf.io/networks";
constexpr std::string_view kShmVolume = "rdma-webhook-shm";

// True when an interface knob of the template names `interface`: NCCL_SOCKET_IFNAME in a
// container's env or in its launcher arguments (`export`, `mpirun -x`). A rename of that
// interface would leave the knob naming one the pod no longer has (ifname-not-attached on the
// mutated object, a job that cannot bootstrap), so the plan keeps such an attachment as written.
bool KnobNames(const workload::PodTemplate& t, std::string_view interface) {
  static constexpr std::string_view kKnob = "NCCL_SOCKET_IFNAME";
  const auto names = [&](std::string_view value) {
    return nccl::SocketIfname::Parse(value).Names(interface);
  };
  return std::any_of(t.containers.begin(), t.containers.end(), [&](const workload::Container& c) {
    const workload::EnvVar* v = c.FindEnv(kKnob);
    if (v != nullptr && v->value && names(*v->value)) return true;
    const auto assignments = nccl::ParseLauncherArgs(c.argv);
    return std::any_of(assignments.begin(), assignments.end(),
                       [&](const auto& a) { return a.name == kKnob && names(a.value); });
  });
}

bool IsInteger(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return !s.empty() && s.size() < 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// True when NCCL_SOCKET_IFNAME `value` selects exactly `wanted` among `interfaces`
// (under hostNetwork: equal after removing one leading `=`).
bool SameSocketIfname(std::string_view value, std::string_view wanted,
                      const std::vector<std::string>& interfaces, bool host_network) {
  if (host_network) {
    if (!value.empty() && value.front() == '=') value.remove_prefix(1);
    return value == wanted;
  }
  if (!value.empty() && value.front() == '^') return false;
  const auto spec = nccl::SocketIfname::Parse(value);
  const auto selected = spec.SelectedAmong(interfaces);
  return selected.size() == 1 && selected.front() == wanted;
}

std::string AnnotationPointer(const workload::PodTemplate& t, std::string_view key) {
  return t.MetadataPointer() + "/annotations/" + EscapePointerToken(key);
}

// The env the mode sets on every GPU container, in the fixed order new entries are written:
// the mode's own, then for RDMA modes the fabric's and extraEnv.
std::vector<EnvWant> WantedEnv(const modes::Unit& unit, const policy::NamespacePolicy& ns) {
  std::vector<EnvWant> env = unit.env(ns);
  if (!unit.rdma) return env;
  if (ns.nccl.fabric == policy::Fabric::kRoce && ns.nccl.gid_index)
    env.push_back({"NCCL_IB_GID_INDEX", std::to_string(*ns.nccl.gid_index)});
  if (!ns.nccl.hca.empty()) env.push_back({"NCCL_IB_HCA", ns.nccl.hca});
  if (!ns.nccl.gdr_level.empty()) env.push_back({"NCCL_NET_GDR_LEVEL", ns.nccl.gdr_level});
  for (const auto& [name, value] : ns.nccl.extra_env) {
    const bool managed =
        std::any_of(env.begin(), env.end(), [&](const EnvWant& e) { return e.name == name; });
    if (!managed) env.push_back({name, value, true});
  }
  if (ns.nccl.debug_for_verify)  // added when absent, like extraEnv: a user's level is kept
    for (const auto& [name, value] : {std::pair<std::string, std::string>{"NCCL_DEBUG", "INFO"},
                                      {"NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,ENV,NET"}})
      if (std::none_of(env.begin(), env.end(), [&](const EnvWant& e) { return e.name == name; }))
        env.push_back({name, value, true});
  return env;
}

// The annotation value after the plan: renamed items rewritten, new items appended, in the
// value's own form. In JSON form the user's text is kept as written when only items are
// appended; a rename re-serialises the list keeping every item's keys in the user's order
// and changes only the key that gave the renamed item's interface (e.g. the legacy
// "interfaceRequest", or "Interface": Multus matches keys case-insensitively), or adds
// "interface" when none did. Only called for a value that parsed without error.
std::string NewAnnotationValue(const Draft& d) {
  const auto& nets = d.nets;
  const std::string old = nets.value != nullptr ? *nets.value : std::string();
  if (nets.parsed.json_form) {
    using ordered_json = nlohmann::ordered_json;
    std::vector<ordered_json> added;
    for (const auto& a : d.attach) {
      ordered_json item = ordered_json::object();
      item["name"] = a.name;
      if (a.ns != d.pod_ns) item["namespace"] = a.ns;
      if (a.explicit_interface) item["interface"] = a.interface;
      added.push_back(std::move(item));
    }
    const std::size_t close = old.find_last_not_of(" \t\r\n");
    if (d.renames.empty() && close != std::string::npos && old[close] == ']') {
      std::string items;
      for (const auto& item : added)
        items += (items.empty() && nets.parsed.attachments.empty() ? "" : ",") + item.dump();
      return old.substr(0, close) + items + old.substr(close);
    }
    ordered_json list = ordered_json::parse(old);
    for (const auto& r : d.renames) {
      const std::string& key = nets.parsed.attachments[r.item].interface_key;
      list[r.item][key.empty() ? std::string("interface") : key] = r.interface;
    }
    for (auto& item : added) list.push_back(std::move(item));
    return list.dump();
  }
  std::vector<std::string> items;
  if (nets.value == nullptr || old.find_first_not_of(" \t") == std::string::npos) {
    items = d.ns.sriov.default_networks;
  } else {
    // Keep the user's items as written; only renamed items are re-rendered.
    std::size_t pos = 0;
    while (pos <= old.size()) {
      std::size_t end = old.find(',', pos);
      if (end == std::string::npos) end = old.size();
      std::string item = old.substr(pos, end - pos);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      items.push_back(item);
      pos = end + 1;
    }
    for (const auto& r : d.renames) {
      auto a = nets.parsed.attachments[r.item];
      a.interface = r.interface;
      a.explicit_interface = true;
      items[r.item] = nccl::FormatAttachmentItem(a, d.pod_ns);
    }
  }
  for (const auto& a : d.attach) items.push_back(nccl::FormatAttachmentItem(a, d.pod_ns));
  const std::string joiner = old.find(", ") != std::string::npos ? ", " : ",";
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : joiner) + i;
  return out;
}

// The annotation edit: what the mode attaches and renames, with a warning per rename.
void PlanAnnotation(Draft& d) {
  if (d.attach.empty() && d.renames.empty()) return;
  if (!d.nets.errors.empty()) {
    d.plan.unreadable_annotation = true;
    return;
  }
  Edit edit{Edit::Kind::kSet, d.nets.pointer, NewAnnotationValue(d), {}};
  for (const auto& r : d.renames) {
    const std::string& name = d.nets.parsed.attachments[r.item].name;
    edit.overrides.push_back(modes::Override(
        d.nets.pointer, "renamed the interface of network '" + name + "' to " + r.interface,
        "attach it as " + name + "@" + r.interface));
  }
  d.plan.edits.push_back(std::move(edit));
}

// Interfaces the pod will have once the plan is applied: eth0, lo, the platform's, every
// attachment's (renamed ones under their new name), those the plan appends and those the
// mode's own devices bring.
std::vector<std::string> PlannedInterfaces(const Draft& d) {
  const auto& nets = d.nets;
  std::vector<std::string> interfaces{"eth0", "lo"};
  interfaces.insert(interfaces.end(), nets.platform_interfaces.begin(),
                    nets.platform_interfaces.end());
  for (const auto& a : nets.all) {
    std::string iface = a.interface;
    for (const auto& r : d.renames)
      if (r.item == a.item && nets.value != nullptr) iface = r.interface;
    interfaces.push_back(iface);
  }
  std::size_t position = nets.parsed.attachments.size();
  for (const auto& a : d.attach)
    interfaces.push_back(a.explicit_interface ? a.interface : "net" + std::to_string(++position));
  interfaces.insert(interfaces.end(), d.interfaces.begin(), d.interfaces.end());
  return interfaces;
}

void SetClaim(Draft& d, const workload::Container& c, const std::string& resource,
              long long count) {
  const std::string key = EscapePointerToken(resource);
  const std::string value = std::to_string(count);
  d.plan.edits.push_back({Edit::Kind::kSet, c.pointer + "/resources/limits/" + key, value, {}});
  d.plan.edits.push_back({Edit::Kind::kSet, c.pointer + "/resources/requests/" + key, value, {}});
}

// A shared HCA is served to every container that claims it, and only a claiming container gets
// its device files: every GPU container claims what it lacks. A VF (or any exclusive device) is
// one device per attachment, moved into the pod once: the first GPU container claims what the
// template lacks, on top of what it claims itself.
void PlanClaims(Draft& d) {
  const workload::Container* first_gpu = nullptr;
  for (const auto& c : d.t.containers)
    if (c.gpu && first_gpu == nullptr) first_gpu = &c;
  if (first_gpu == nullptr) return;
  for (const auto& [resource, needed] : d.claims) {
    if (d.policy.IsSharedResource(resource)) {
      for (const auto& c : d.t.containers)
        if (c.gpu && c.Claim(resource) < needed) SetClaim(d, c, resource, needed);
      continue;
    }
    const long long claimed = d.t.TotalClaim(resource);
    if (claimed >= needed) continue;
    SetClaim(d, *first_gpu, resource, first_gpu->Claim(resource) + needed - claimed);
  }
}

// A network whose NAD takes its VF from a resource needs one of it claimed per attachment (the
// network-resources-injector, when the cluster runs it, claims them itself).
void PlanNadClaims(Draft& d) {
  if (d.ns.mode != policy::Mode::kSriov || d.policy.network_resources_injector) return;
  for (const auto& n : d.nets.nads.attached)
    if (n.from == AttachedNetwork::From::kNad && n.needs_device) ++d.claims[n.resource];
}

// True when an `envFrom` source of `c` may define `name`: its variables are the keys of a
// ConfigMap or Secret the admission request does not carry, under the source's prefix.
bool EnvFromMaySet(const workload::Container& c, std::string_view name) {
  return std::any_of(c.env_from_prefixes.begin(), c.env_from_prefixes.end(),
                     [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; });
}

// One wanted variable in one GPU container: appended when absent; a user value that NCCL reads
// differently is replaced under override and a conflict under reject.
void PlanEnv(Draft& d, const workload::Container& c, const EnvWant& want,
             const std::vector<std::string>& interfaces) {
  const workload::EnvVar* have = c.FindEnv(want.name);
  if (have == nullptr) {
    // A variable set only "when absent" (NCCL_SOCKET_IFNAME, extraEnv, the verify debug
    // settings) may be present all the same, through envFrom; an `env` entry would win over it
    // (Kubernetes lets `env` override `envFrom`) and silently replace the user's value. The
    // mode's own switches (NCCL_IB_DISABLE=0, the policy's HCA and GID) are still written: they
    // are what puts the template on the path.
    if ((want.extra || want.name == "NCCL_SOCKET_IFNAME") && EnvFromMaySet(c, want.name)) return;
    // The plan never writes a knob naming no interface the pod will have (the policy's
    // interface is not there when an attachment keeps the user's name because a knob of theirs
    // names it): ifname-not-attached would deny what the webhook wrote.
    if (want.name == "NCCL_SOCKET_IFNAME" && !d.host_network &&
        std::find(interfaces.begin(), interfaces.end(), want.value) == interfaces.end() &&
        nccl::SocketIfname::Parse(want.value).SelectedAmong(interfaces).empty())
      return;
    d.plan.edits.push_back({Edit::Kind::kAppend,
                            c.pointer + "/env",
                            nlohmann::json{{"name", want.name}, {"value", want.value}},
                            {}});
    return;
  }
  if (have->from_ref || !have->value) return;
  // A user's NCCL_SOCKET_IFNAME is never a conflict: the mode sets it only when absent,
  // and ifname-not-attached judges a value that selects no interface of the pod.
  if (want.name == "NCCL_SOCKET_IFNAME") return;
  if (SameEnvValue(want.name, *have->value, want.value, interfaces, d.host_network)) return;
  // nccl.extraEnv is added when absent (docs/policy.md): the user's value is theirs to keep,
  // under override as under reject, where it was never a conflict either.
  if (want.extra) return;
  const std::string pointer = c.pointer + "/env/" + std::to_string(have->index) + "/value";
  if (d.ns.on_conflict == policy::OnConflict::kOverride) {
    d.plan.edits.push_back(
        {Edit::Kind::kSet,
         pointer,
         want.value,
         {modes::Override(pointer,
                          "replaced " + want.name + "=" + std::string(*have->value) + " with " +
                              want.value + " in container '" + c.name + "'",
                          "set " + want.name + "=" + want.value)}});
  } else {
    d.Conflict(pointer,
               "container '" + c.name + "' sets " + want.name + "=" + std::string(*have->value) +
                   " but the namespace policy (mode " + std::string(policy::ToString(d.ns.mode)) +
                   ") sets " + want.name + "=" + want.value,
               false);
  }
}

}  // namespace

namespace modes {

// The unit of a mode (the table is generated from modes/). `off` has none: it plans nothing.
const Unit* UnitOf(policy::Mode mode) {
  for (const Unit* unit : Units())
    if (unit->mode == mode) return unit;
  return nullptr;
}

Finding Override(std::string pointer, const std::string& what, std::string fix) {
  return {"policy-conflict", Severity::kWarning, what + " (onConflict: override)", std::move(fix),
          std::move(pointer)};
}

void Draft::Conflict(std::string pointer, std::string message, bool always) {
  if (always || ns.on_conflict == policy::OnConflict::kReject)
    plan.conflicts.push_back({std::move(pointer), std::move(message)});
}

void Draft::Attach(const nccl::NetworkAttachment& want) {
  // Several rails may attach the same network under different interfaces: an item already
  // attached exactly as wanted serves this rail; otherwise the first unused item of the network.
  for (const auto& have : nets.parsed.attachments) {
    if (!used[have.item] && have.name == want.name && have.ns == want.ns &&
        (!want.explicit_interface || have.interface == want.interface)) {
      used[have.item] = true;
      return;
    }
  }
  for (const auto& have : nets.parsed.attachments) {
    if (!used[have.item] && have.name == want.name && have.ns == want.ns) {
      used[have.item] = true;
      // Renaming onto an interface another network already uses would give one interface to
      // two networks: a conflict whatever onConflict says.
      const bool taken = std::any_of(nets.all.begin(), nets.all.end(), [&](const auto& other) {
        return other.interface == want.interface &&
               !(other.item == have.item && other.name == have.name && other.ns == have.ns);
      });
      if (taken) {
        Conflict(nets.pointer,
                 "network '" + want.name + "' is attached as '" + have.interface +
                     "' and the namespace policy attaches it as '" + want.interface +
                     "', which another network already uses",
                 true);
      } else if (KnobNames(t, have.interface)) {
        // A rename carries no knob along, so none happens when a knob names the old interface,
        // under either onConflict: the attachment, the VF and NCCL's bootstrap interface agree,
        // and a rejection would deny a pod that works.
      } else if (ns.on_conflict == policy::OnConflict::kOverride) {
        renames.push_back({have.item, want.interface});
      } else {
        Conflict(nets.pointer,
                 "network '" + want.name + "' is attached as '" + have.interface +
                     "' but the namespace policy attaches it as '" + want.interface + "'",
                 false);
      }
      return;
    }
  }
  for (const auto& have : nets.all) {
    if (want.explicit_interface && have.interface == want.interface) {
      // Networks of one name in two namespaces are two networks: the message names both.
      const auto named = [&](const nccl::NetworkAttachment& a) {
        return have.ns == want.ns ? a.name : a.ns + "/" + a.name;
      };
      Conflict(nets.pointer,
               "interface '" + want.interface + "' is taken by network '" + named(have) +
                   "', but the namespace policy plugs '" + named(want) + "' in as '" +
                   want.interface + "'",
               true);
      return;
    }
  }
  attach.push_back(want);
}

}  // namespace modes

TemplateNetworks ReadNetworks(const workload::PodTemplate& t,
                              const policy::NamespacePolicy& ns_policy, std::string_view pod_ns) {
  TemplateNetworks nets;
  nets.key = ns_policy.sriov.annotation_key;
  nets.pointer = AnnotationPointer(t, nets.key);
  nets.value = t.Annotation(nets.key);
  std::vector<std::string> keys{nets.key};
  if (nets.key != kMultusKey) keys.emplace_back(kMultusKey);
  for (const auto& key : keys) {
    const std::string* value = t.Annotation(key);
    if (value == nullptr) continue;
    auto parsed = nccl::NetworksAnnotation::Parse(*value, pod_ns, ns_policy.sriov.default_networks);
    if (!parsed.error.empty()) nets.errors.push_back({key, parsed.error});
    for (const auto& a : parsed.attachments)
      if (!a.default_network) nets.all.push_back(a);
    if (key == nets.key) nets.parsed = std::move(parsed);
  }
  nets.plugin = PluginSign(t);
  auto platform = ReadPlatformNics(t);
  nets.platform = std::move(platform.sign);
  nets.platform_interfaces = std::move(platform.interfaces);
  nets.platform_from_plugin = platform.from_plugin;
  return nets;
}

bool SameEnvValue(std::string_view name, std::string_view value, std::string_view wanted,
                  const std::vector<std::string>& interfaces, bool host_network) {
  if (name == "NCCL_SOCKET_IFNAME")
    return SameSocketIfname(value, wanted, interfaces, host_network);
  // NCCL skips an empty value and keeps the default, which for NCCL_IB_DISABLE is 0.
  if (name == "NCCL_IB_DISABLE" && value.empty()) value = "0";
  if (IsInteger(value) && IsInteger(wanted))
    return std::stoll(std::string(value)) == std::stoll(std::string(wanted));
  // NCCL reads these with strcasecmp: `info` and `INFO` are one debug level, `ib` and `IB` one
  // network.
  if (name == "NCCL_DEBUG" || name == "NCCL_DEBUG_SUBSYS" || name == "NCCL_NET")
    return EqualsIgnoreCase(value, wanted);
  return value == wanted;
}

bool IsUnknownNicResource(const policy::Policy& policy, const TemplateNetworks& nets,
                          const std::string& r) {
  return !policy.IsGpuResource(r) && !policy.IsRdmaDeviceResource(r) &&
         !nets.nads.IsVfResource(r) && LooksLikeNicResource(r);
}

std::string UnknownNicClaim(const workload::PodTemplate& t, const policy::Policy& policy,
                            const TemplateNetworks& nets, bool gpu_only) {
  for (const auto& c : t.containers) {
    if (gpu_only && !c.gpu) continue;
    for (const auto& r : c.ResourceNames())
      if (c.Claim(r) > 0 && IsUnknownNicResource(policy, nets, r)) return r;
  }
  return {};
}

TemplatePlan PlanTemplate(const workload::PodTemplate& t, const policy::Policy& policy,
                          const policy::NamespacePolicy& ns, std::string_view pod_ns,
                          const TemplateNetworks& nets, policy::Path path) {
  const modes::Unit* unit = modes::UnitOf(ns.mode);
  if (unit == nullptr || !t.HasGpu()) return {};
  if (path != policy::Path::kNone && path != policy::Path::kUnknown &&
      path != policy::ModePath(ns.mode))
    return {};  // the manifest chose another path (plugin included); allowedPaths decides
  // A DRA claim whose devices are unknown may hold NICs: a device-plugin VF next to them would
  // give the pod two sets of NICs, so nothing is planned until the claim can be read.
  if (nets.dra.unknown) return {};
  // Likewise a GPU container's NIC resource that no policy list names (unknown-nic-resource).
  if (!UnknownNicClaim(t, policy, nets, true).empty()) return {};
  Draft d(t, policy, ns, pod_ns, nets);
  d.plan.applies = true;
  // Own rails: VFs claimed and networks attached, none of them the policy's (e.g. 8 rails of
  // the cluster's own), or NICs the platform attaches. They are kept as they are.
  // A policy network is a NAD of one namespace (the pod's unless it names one): `default/net`
  // in another namespace's pod is another NAD of the same name, one of the cluster's own.
  const auto is_policy_network = [&](const nccl::NetworkAttachment& a) {
    return std::any_of(ns.sriov.networks.begin(), ns.sriov.networks.end(),
                       [&](const policy::SriovNetwork& n) {
                         return n.network == a.name && (n.ns.empty() ? pod_ns : n.ns) == a.ns;
                       });
  };
  const bool claims_vf =
      t.TotalClaimWhere([&](const std::string& r) { return policy.IsVfResource(r); }) > 0;
  // Networks a NAD makes RDMA are the cluster's own rails too.
  const bool nad_rails =
      std::any_of(nets.nads.attached.begin(), nets.nads.attached.end(),
                  [](const auto& n) { return n.from == AttachedNetwork::From::kNad && n.rdma; });
  d.own_rails =
      !nets.platform.empty() || ((claims_vf || nad_rails) && !nets.all.empty() &&
                                 std::none_of(nets.all.begin(), nets.all.end(), is_policy_network));
  d.used.assign(nets.parsed.attachments.size(), false);

  unit->plan(d);
  PlanNadClaims(d);
  PlanAnnotation(d);
  PlanClaims(d);

  const std::vector<std::string> interfaces = PlannedInterfaces(d);
  std::vector<EnvWant> env = WantedEnv(*unit, ns);
  if (d.own_rails)
    env.erase(std::remove_if(env.begin(), env.end(),
                             [](const EnvWant& e) { return e.name == "NCCL_SOCKET_IFNAME"; }),
              env.end());
  const bool shm = unit->rdma && ns.inject_shm && !t.host_ipc;
  bool shm_volume = t.volumes.count(std::string(kShmVolume)) > 0;
  for (const auto& c : t.containers) {
    if (!c.gpu) continue;
    if (unit->rdma && !c.HasCapability("IPC_LOCK"))
      d.plan.edits.push_back(
          {Edit::Kind::kAppend, c.pointer + "/securityContext/capabilities/add", "IPC_LOCK", {}});
    // NCCL_NET=Socket starts only NCCL's socket transport: the RDMA the mode brings would sit
    // idle. The mode does not own NCCL_NET, so no override rewrites it: always a conflict.
    if (const auto* net = SocketOnlyNet(c); unit->rdma && net != nullptr)
      d.Conflict(EnvPointer(c, *net),
                 "container '" + c.name + "' sets NCCL_NET=" + std::string(*net->value) +
                     ", so NCCL starts only its socket transport and never uses the RDMA NIC "
                     "the namespace policy (mode " +
                     std::string(policy::ToString(d.ns.mode)) + ") gives the pod",
                 true);
    for (const auto& want : env) PlanEnv(d, c, want, interfaces);
    if (!shm || t.HasMemoryShm(c)) continue;
    const bool has_shm_mount = std::any_of(c.mounts.begin(), c.mounts.end(), [](const auto& m) {
      return m.mount_path == "/dev/shm" || m.mount_path == "/dev/shm/";
    });
    if (has_shm_mount) continue;  // the user mounts something else there on purpose
    if (!shm_volume) {
      d.plan.edits.push_back(
          {Edit::Kind::kAppend,
           t.SpecPointer() + "/volumes",
           nlohmann::json{{"name", kShmVolume}, {"emptyDir", {{"medium", "Memory"}}}},
           {}});
      shm_volume = true;
    }
    d.plan.edits.push_back({Edit::Kind::kAppend,
                            c.pointer + "/volumeMounts",
                            nlohmann::json{{"name", kShmVolume}, {"mountPath", "/dev/shm"}},
                            {}});
  }
  return std::move(d.plan);
}

}  // namespace rw::rules
