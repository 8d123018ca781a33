// mode: tcp. NCCL is kept off RDMA and talks TCP over the pod's own interface.
#include "mode.h"

namespace rw::rules::modes {
namespace {

std::vector<EnvWant> Env(const policy::NamespacePolicy&) {
  return {{"NCCL_SOCKET_IFNAME", "eth0"}, {"NCCL_IB_DISABLE", "1"}};
}

// No spec edit, attachment or claim: the env is all the mode sets.
void Plan(Draft&) {}

}  // namespace

const Unit& Tcp() {
  static constexpr Unit kUnit{policy::Mode::kTcp, false, Env, Plan};
  return kUnit;
}

}  // namespace rw::rules::modes
