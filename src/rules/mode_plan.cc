#include "rdma_webhook/rules/mode_plan.h"

#include <algorithm>

#include "rdma_webhook/rules/diagnosis.h"
#include "signs.h"

namespace rw::rules {
namespace {

using policy::Mode;
using workload::EscapePointerToken;

constexpr std::string_view kMultusKey = "k8s.v1.cni.cncf.io/networks";

bool IsInteger(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return !s.empty() && s.size() < 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string AnnotationPointer(const workload::PodTemplate& t, std::string_view key) {
  return t.MetadataPointer() + "/annotations/" + EscapePointerToken(key);
}

// The env the mode sets on every GPU container, in the fixed order new entries are written.
std::vector<EnvWant> WantedEnv(const policy::NamespacePolicy& ns) {
  std::vector<EnvWant> env;
  const bool rdma_mode = ns.mode != Mode::kTcp;
  switch (ns.mode) {
    case Mode::kHostNetwork:
      if (!ns.host_network.socket_ifname.empty())
        env.push_back({"NCCL_SOCKET_IFNAME", ns.host_network.socket_ifname});
      env.push_back({"NCCL_IB_DISABLE", "0"});
      break;
    case Mode::kSriov:
      env.push_back({"NCCL_SOCKET_IFNAME", ns.sriov.networks.front().interface});
      env.push_back({"NCCL_IB_DISABLE", "0"});
      break;
    case Mode::kShared:
      if (!ns.shared.interface.empty()) env.push_back({"NCCL_SOCKET_IFNAME", ns.shared.interface});
      env.push_back({"NCCL_IB_DISABLE", "0"});
      break;
    case Mode::kTcp:
      env.push_back({"NCCL_SOCKET_IFNAME", "eth0"});
      env.push_back({"NCCL_IB_DISABLE", "1"});
      break;
    case Mode::kOff:
      return env;
  }
  if (rdma_mode) {
    if (ns.nccl.fabric == policy::Fabric::kRoce && ns.nccl.gid_index)
      env.push_back({"NCCL_IB_GID_INDEX", std::to_string(*ns.nccl.gid_index)});
    if (!ns.nccl.hca.empty()) env.push_back({"NCCL_IB_HCA", ns.nccl.hca});
    if (!ns.nccl.gdr_level.empty()) env.push_back({"NCCL_NET_GDR_LEVEL", ns.nccl.gdr_level});
    for (const auto& [name, value] : ns.nccl.extra_env) {
      const bool managed =
          std::any_of(env.begin(), env.end(), [&](const EnvWant& e) { return e.name == name; });
      if (!managed) env.push_back({name, value, true});
    }
  }
  return env;
}

void PlanAttachment(const nccl::NetworkAttachment& want, const TemplateNetworks& nets,
                    const policy::NamespacePolicy& ns, std::vector<bool>& used,
                    TemplatePlan& plan) {
  const std::string pointer = nets.pointer;
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
        plan.conflicts.push_back({pointer,
                                  "network '" + want.name + "' is attached as '" + have.interface +
                                      "' and the namespace policy attaches it as '" +
                                      want.interface + "', which another network already uses",
                                  true});
      } else if (ns.on_conflict == policy::OnConflict::kOverride) {
        plan.renames.push_back({have.item, want.interface});
      } else {
        plan.conflicts.push_back({pointer,
                                  "network '" + want.name + "' is attached as '" + have.interface +
                                      "' but the namespace policy attaches it as '" +
                                      want.interface + "'",
                                  false});
      }
      return;
    }
  }
  for (const auto& have : nets.all) {
    if (want.explicit_interface && have.interface == want.interface) {
      plan.conflicts.push_back({pointer,
                                "interface '" + want.interface + "' is taken by network '" +
                                    have.name + "', but the namespace policy plugs '" + want.name +
                                    "' in as '" + want.interface + "'",
                                true});
      return;
    }
  }
  plan.attach.push_back(want);
}

}  // namespace

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
  return nets;
}

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

bool SameEnvValue(std::string_view name, std::string_view value, std::string_view wanted,
                  const std::vector<std::string>& interfaces, bool host_network) {
  if (name == "NCCL_SOCKET_IFNAME")
    return SameSocketIfname(value, wanted, interfaces, host_network);
  if (IsInteger(value) && IsInteger(wanted))
    return std::stoll(std::string(value)) == std::stoll(std::string(wanted));
  return value == wanted;
}

bool ReportsConflict(const TemplatePlan& plan, const policy::NamespacePolicy& ns) {
  const bool reject = ns.on_conflict == policy::OnConflict::kReject;
  return std::any_of(plan.conflicts.begin(), plan.conflicts.end(),
                     [&](const Conflict& c) { return reject || c.always; });
}

TemplatePlan PlanTemplate(const workload::PodTemplate& t, const policy::Policy& policy,
                          const policy::NamespacePolicy& ns, std::string_view pod_ns,
                          const TemplateNetworks& nets, policy::Path path) {
  TemplatePlan plan;
  if (ns.mode == Mode::kOff || !t.HasGpu()) return plan;
  if (path != policy::Path::kNone && path != policy::Path::kUnknown &&
      path != policy::ModePath(ns.mode))
    return plan;  // the manifest chose another path (plugin included); allowedPaths decides
  plan.applies = true;
  // Own rails: VFs claimed and networks attached, none of them the policy's (e.g. 8 rails of
  // the cluster's own), or NICs the platform attaches. They are kept as they are.
  const auto is_policy_network = [&](const nccl::NetworkAttachment& a) {
    return std::any_of(ns.sriov.networks.begin(), ns.sriov.networks.end(),
                       [&](const policy::SriovNetwork& n) { return n.network == a.name; });
  };
  const bool claims_vf =
      t.TotalClaimWhere([&](const std::string& r) { return policy.IsVfResource(r); }) > 0;
  plan.own_rails =
      !nets.platform.empty() || (claims_vf && !nets.all.empty() &&
                                 std::none_of(nets.all.begin(), nets.all.end(), is_policy_network));
  const bool rdma_mode = ns.mode != Mode::kTcp;
  plan.ipc_lock = rdma_mode;
  plan.shm = rdma_mode && ns.inject_shm && !t.host_ipc;
  std::vector<bool> used(nets.parsed.attachments.size(), false);

  switch (ns.mode) {
    case Mode::kHostNetwork: {
      plan.host_network = true;
      if (t.dns_policy && *t.dns_policy != "ClusterFirst" &&
          *t.dns_policy != "ClusterFirstWithHostNet" && *t.dns_policy != "None")
        plan.conflicts.push_back({t.SpecPointer() + "/dnsPolicy",
                                  "dnsPolicy is '" + *t.dns_policy +
                                      "' but the namespace policy runs pods on the host network "
                                      "with dnsPolicy ClusterFirstWithHostNet",
                                  false});
      if (nets.value != nullptr && !nets.value->empty())
        plan.conflicts.push_back({nets.pointer,
                                  "the pod attaches networks with " + nets.key +
                                      ", but the namespace policy runs it on the host network, "
                                      "where Multus attaches nothing",
                                  true});
      if (!ns.host_network.device_resource.empty())
        plan.claims[ns.host_network.device_resource] = 1;
      break;
    }
    case Mode::kSriov:
      if (plan.own_rails) break;
      for (const auto& n : ns.sriov.networks) {
        nccl::NetworkAttachment want;
        want.ns = n.ns.empty() ? std::string(pod_ns) : n.ns;
        want.name = n.network;
        want.interface = n.interface;
        want.explicit_interface = true;
        PlanAttachment(want, nets, ns, used, plan);
        // With the network-resources-injector the cluster claims VFs from the annotation.
        if (!policy.network_resources_injector) plan.claims[n.resource] += n.count;
      }
      break;
    case Mode::kShared:
      if (!ns.shared.network.empty()) {
        nccl::NetworkAttachment want;
        const std::size_t slash = ns.shared.network.find('/');
        want.ns =
            slash == std::string::npos ? std::string(pod_ns) : ns.shared.network.substr(0, slash);
        want.name =
            slash == std::string::npos ? ns.shared.network : ns.shared.network.substr(slash + 1);
        want.interface = ns.shared.interface;
        want.explicit_interface = !ns.shared.interface.empty();
        PlanAttachment(want, nets, ns, used, plan);
      }
      plan.claims[ns.shared.resource] = ns.shared.count;
      break;
    case Mode::kTcp:
    case Mode::kOff:
      break;
  }

  // Interfaces the pod will have once the plan is applied.
  plan.interfaces = {"eth0", "lo"};
  plan.interfaces.insert(plan.interfaces.end(), nets.platform_interfaces.begin(),
                         nets.platform_interfaces.end());
  for (const auto& a : nets.all) {
    std::string iface = a.interface;
    for (const auto& r : plan.renames)
      if (r.item == a.item && nets.value != nullptr) iface = r.interface;
    plan.interfaces.push_back(iface);
  }
  std::size_t position = nets.parsed.attachments.size();
  for (const auto& a : plan.attach)
    plan.interfaces.push_back(
        a.explicit_interface ? a.interface : "net" + std::to_string(++position));

  plan.env = WantedEnv(ns);
  if (plan.own_rails)
    plan.env.erase(std::remove_if(plan.env.begin(), plan.env.end(),
                                  [](const EnvWant& e) { return e.name == "NCCL_SOCKET_IFNAME"; }),
                   plan.env.end());
  const bool host_network = ns.mode == Mode::kHostNetwork;
  for (const auto& c : t.containers) {
    if (!c.gpu) continue;
    for (const auto& want : plan.env) {
      const workload::EnvVar* have = c.FindEnv(want.name);
      if (want.extra || have == nullptr || have->from_ref || !have->value) continue;
      // A user's NCCL_SOCKET_IFNAME is never a conflict: the mode sets it only when absent,
      // and ifname-not-attached judges a value that selects no interface of the pod.
      if (want.name == "NCCL_SOCKET_IFNAME") continue;
      if (SameEnvValue(want.name, *have->value, want.value, plan.interfaces, host_network))
        continue;
      plan.conflicts.push_back({c.pointer + "/env/" + std::to_string(have->index) + "/value",
                                "container '" + c.name + "' sets " + want.name + "=" +
                                    *have->value + " but the namespace policy (mode " +
                                    std::string(policy::ToString(ns.mode)) + ") sets " + want.name +
                                    "=" + want.value,
                                false});
    }
  }
  return plan;
}

}  // namespace rw::rules
