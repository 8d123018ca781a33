// mode: tcp. NCCL is kept off RDMA and talks TCP over the pod's own interface.
#include <algorithm>

#include "../context.h"
#include "../signs.h"
#include "mode.h"

namespace rw::rules::modes {
namespace {

// A GPU container claims EFA but tells libfabric to use TCP: before hostNetwork.
bool EfaTcp(const workload::PodTemplate& t, const policy::Policy&, const policy::NamespacePolicy&,
            const TemplateNetworks&) {
  return std::any_of(t.containers.begin(), t.containers.end(),
                     [](const workload::Container& c) { return c.gpu && !EfaOverTcp(c).empty(); });
}

// A GPU container sets NCCL_IB_DISABLE non-zero: after every RDMA sign but valueFrom's.
bool IbDisabled(const workload::PodTemplate& t, const policy::Policy&,
                const policy::NamespacePolicy&, const TemplateNetworks&) {
  return std::any_of(t.containers.begin(), t.containers.end(),
                     [](const workload::Container& c) { return c.gpu && DisablesIb(c); });
}

constexpr Sign kSigns[] = {{30, EfaTcp}, {80, IbDisabled}};

std::vector<EnvWant> Env(const policy::NamespacePolicy&) {
  return {{"NCCL_SOCKET_IFNAME", "eth0"}, {"NCCL_IB_DISABLE", "1"}};
}

// No spec edit, attachment or claim: the env is all the mode sets.
void Plan(Draft&) {}

}  // namespace

extern const Unit tcp;
constexpr Unit tcp = {.mode = policy::Mode::kTcp,
                      .rdma = false,
                      .rdma_shown = nullptr,
                      .signs = kSigns,
                      .env = Env,
                      .plan = Plan};

}  // namespace rw::rules::modes
