// unknown-nic-resource: a GPU container claims a NIC-looking resource the policy does not know.
// Its reference and example: ../docs/unknown-nic-resource.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

// A NIC-looking resource no policy list names leaves the template's path undecided (often
// `none`), so without a finding SARIF, JUnit and CI would show a clean result.
void UnknownNicResource(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    // A network plugin (EFA, TCPX) brings its own devices under its own names.
    if (!f.networks.plugin.empty()) continue;
    for (const auto* c : f.gpu) {
      for (const auto& r : c->ResourceNames()) {
        // A resource an SR-IOV NAD of the namespace takes its VFs from is known to be one.
        if (!IsUnknownNicResource(ctx.policy, f.networks, r) || c->Claim(r) <= 0) continue;
        const char* field = c->limits.count(r) ? "limits" : "requests";
        rule.Report(out, c->pointer + "/resources/" + field + "/" + workload::EscapePointerToken(r),
                    "container '" + c->name + "' claims " + r +
                        ", which looks like an RDMA NIC or VF but is in none of the policy's "
                        "resources lists: its path cannot be told, so the RDMA rules do not "
                        "judge this template and the webhook does not plan for it.",
                    "add " + r +
                        " to the policy's resources.vf (a VF moved into the pod with its "
                        "netdev) or resources.shared (an RDMA device shared with the host)");
      }
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule unknown_nic_resource;
const Rule unknown_nic_resource = {.id = "unknown-nic-resource",
                                   .severity = Severity::kWarning,
                                   .check = UnknownNicResource,
                                   .position = 290};
}  // namespace catalog

}  // namespace rw::rules
