// mode: sriov. Every rail is an SR-IOV VF: the policy's networks are attached through the
// Multus annotation and their VFs claimed.
#include "mode.h"

namespace rw::rules::modes {
namespace {

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

const Unit& Sriov() {
  static constexpr Unit kUnit{policy::Mode::kSriov, true, Env, Plan};
  return kUnit;
}

}  // namespace rw::rules::modes
