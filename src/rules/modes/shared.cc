// mode: shared. The pods share the node's RDMA device through a device plugin resource,
// optionally with a network attached for it.
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
  if (!shared.network.empty()) {
    nccl::NetworkAttachment want;
    const std::size_t slash = shared.network.find('/');
    want.ns = slash == std::string::npos ? std::string(d.pod_ns) : shared.network.substr(0, slash);
    want.name = slash == std::string::npos ? shared.network : shared.network.substr(slash + 1);
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
