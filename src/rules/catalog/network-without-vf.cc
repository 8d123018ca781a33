// network-without-vf: more RDMA networks are attached than VFs are claimed.
// Its reference and example: ../docs/network-without-vf.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void NetworkWithoutVf(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || f.t->host_network || !f.networks.platform.empty()) continue;
    // The network-resources-injector adds the claims to the pods a template makes; a bare Pod
    // has already been through it when it is validated.
    if (ctx.policy.network_resources_injector && !f.t->pointer.empty()) continue;
    if (static_cast<long long>(f.rdma_attachments) <= f.vf_claimed) continue;
    const std::string res =
        ctx.policy.vf_resources.empty() ? "rdma/vf" : ctx.policy.vf_resources.front();
    rule.Report(
        out, f.networks.pointer,
        "the annotation attaches " + std::to_string(f.rdma_attachments) +
            " RDMA network(s) but the pod claims " + std::to_string(f.vf_claimed) +
            " VF(s): the SR-IOV CNI has no allocated VF to move in and pod sandbox "
            "creation fails.",
        "claim one " + res + " per RDMA attachment in the GPU container's resources.limits");
  }
}

}  // namespace

namespace catalog {
extern const Rule network_without_vf;
const Rule network_without_vf = {.id = "network-without-vf",
                                 .severity = Severity::kError,
                                 .check = NetworkWithoutVf,
                                 .position = 60};
}  // namespace catalog

}  // namespace rw::rules
