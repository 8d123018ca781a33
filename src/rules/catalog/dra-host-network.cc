// dra-host-network: a hostNetwork pod claims RDMA NICs through DRA.
// Its reference and example: ../docs/dra-host-network.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

// A DRA NIC driver moves the NIC into the pod's network namespace; a host-network pod has none
// of its own, and dranet refuses the sandbox ("using host network can not claim host devices").
void DraHostNetwork(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (!f.t->host_network || f.networks.dra.nic.empty()) continue;
    rule.Report(out, f.t->SpecPointer() + "/hostNetwork",
                "hostNetwork: true together with a DRA claim of RDMA NICs (" + f.networks.dra.nic +
                    "): the driver moves NICs into the pod's network namespace, which a "
                    "host-network pod does not have, so the pod sandbox is refused and the pod "
                    "never starts.",
                "drop hostNetwork and let the claim bring the NICs, or drop the claim and use "
                "the node's NICs on the host network");
  }
}

}  // namespace

namespace catalog {
extern const Rule dra_host_network;
const Rule dra_host_network = {.id = "dra-host-network",
                               .severity = Severity::kError,
                               .check = DraHostNetwork,
                               .position = 85};
}  // namespace catalog

}  // namespace rw::rules
