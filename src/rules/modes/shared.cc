// mode: shared. The pods share the node's RDMA device through a device plugin resource,
// optionally with a network attached for it.
#include <algorithm>

#include "mode.h"

namespace rw::rules::modes {
namespace {

// A resources.shared resource claimed.
bool SharedClaimed(const workload::PodTemplate& t, const policy::Policy& policy,
                   const policy::NamespacePolicy&, const TemplateNetworks&) {
  return t.TotalClaimWhere([&](const std::string& r) { return policy.IsSharedResource(r); }) > 0;
}
constexpr Sign kSigns[] = {{70, SharedClaimed}};

std::vector<EnvWant> Env(const policy::NamespacePolicy& ns) {
  std::vector<EnvWant> env;
  if (!ns.shared.interface.empty()) env.push_back({"NCCL_SOCKET_IFNAME", ns.shared.interface});
  env.push_back({"NCCL_IB_DISABLE", "0"});
  return env;
}

void Plan(Draft& d) {
  const auto& shared = d.ns.shared;
  const std::size_t slash = shared.network.find('/');
  const std::string name =
      slash == std::string::npos ? shared.network : shared.network.substr(slash + 1);
  // Own rails: a shared resource already claimed beside networks of the template's own, none of
  // them the mode's (CoreWeave's macvlan rails beside rdma/ib, an IPoIB attachment): kept as
  // they are, as the sriov mode keeps its own, rather than fighting them for an interface.
  const bool claims_shared =
      d.t.TotalClaimWhere([&](const std::string& r) { return d.policy.IsSharedResource(r); }) > 0;
  if (claims_shared && !d.nets.all.empty() &&
      std::none_of(d.nets.all.begin(), d.nets.all.end(),
                   [&](const auto& n) { return n.name == name; })) {
    d.own_rails = true;
    return;
  }
  if (!shared.network.empty()) {
    nccl::NetworkAttachment want;
    want.ns = slash == std::string::npos ? std::string(d.pod_ns) : shared.network.substr(0, slash);
    want.name = name;
    want.interface = shared.interface;
    want.explicit_interface = !shared.interface.empty();
    d.Attach(want);
  }
  d.claims[shared.resource] = shared.count;
}

}  // namespace

extern const Unit shared;
constexpr Unit shared = {.mode = policy::Mode::kShared,
                         .rdma = true,
                         .rdma_shown = nullptr,
                         .signs = kSigns,
                         .env = Env,
                         .plan = Plan};

}  // namespace rw::rules::modes
