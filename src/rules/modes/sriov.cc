// mode: sriov. Every rail is an SR-IOV VF: the policy's networks are attached through the
// Multus annotation and their VFs claimed.
#include <algorithm>

#include "../context.h"
#include "mode.h"

namespace rw::rules::modes {
namespace {

// RDMA NICs the platform attaches without Multus (GKE multi-networking): before hostNetwork
// and EFA over TCP are looked at.
bool PlatformNics(const workload::PodTemplate&, const policy::Policy&,
                  const policy::NamespacePolicy&, const TemplateNetworks& nets) {
  return !nets.platform.empty();
}

// A VF of resources.vf claimed, or an RDMA network attached: after a DRA claim of NICs.
bool VfOrRdmaNetwork(const workload::PodTemplate& t, const policy::Policy& policy,
                     const policy::NamespacePolicy& ns, const TemplateNetworks& nets) {
  if (t.TotalClaimWhere([&](const std::string& r) { return policy.IsVfResource(r); }) > 0)
    return true;
  // The policy names the RDMA networks; a network it does not name is RDMA when its NAD says so.
  for (std::size_t i = 0; i < nets.all.size(); ++i)
    if (IsRdmaNetwork(policy, ns, nets.all[i].name) || nets.nads.RdmaAt(i)) return true;
  return false;
}

constexpr Sign kSigns[] = {{20, PlatformNics}, {60, VfOrRdmaNetwork}};

std::vector<EnvWant> Env(const policy::NamespacePolicy& ns) {
  return {{"NCCL_SOCKET_IFNAME", ns.sriov.networks.front().interface}, {"NCCL_IB_DISABLE", "0"}};
}

void Plan(Draft& d) {
  if (d.own_rails) return;
  for (const auto& n : d.ns.sriov.networks) {
    nccl::NetworkAttachment want;
    want.ns = n.ns.empty() ? std::string(d.pod_ns) : n.ns;
    want.name = n.network;
    want.interface = n.interface;
    want.explicit_interface = true;
    d.Attach(want);
    // With the network-resources-injector the cluster claims VFs from the annotation.
    if (!d.policy.network_resources_injector) d.claims[n.resource] += n.count;
  }
}

}  // namespace

extern const Unit sriov;
constexpr Unit sriov = {.mode = policy::Mode::kSriov,
                        .rdma = true,
                        .rdma_shown = nullptr,
                        .signs = kSigns,
                        .env = Env,
                        .plan = Plan};

}  // namespace rw::rules::modes
