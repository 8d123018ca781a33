// hostnetwork-fixed-port: a hostNetwork pod uses a fixed port.
// Its reference and example: ../docs/hostnetwork-fixed-port.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void HostnetworkFixedPort(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.ns.exclusive_nodes) return;
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || !f.t->host_network) continue;
    for (const auto& c : f.t->containers) {
      if (!c.ports.empty()) {
        rule.Report(out, c.pointer + "/ports",
                    "container '" + c.name + "' declares port " + std::to_string(c.ports.front()) +
                        " on the host network: declared ports become host ports, so a second "
                        "such pod on the node stays Pending.",
                    "allocate whole nodes (policy exclusiveNodes) or drop the declared ports");
      }
      const auto* mp = c.FindEnv("MASTER_PORT");
      if (mp != nullptr && mp->value) {
        rule.Report(out, EnvPointer(c, *mp),
                    "container '" + c.name +
                        "' uses the fixed MASTER_PORT=" + std::string(*mp->value) +
                        " on the host network: two jobs on one node collide at bind time "
                        "(address already in use).",
                    "allocate whole nodes (policy exclusiveNodes) or pick a free port at start");
      }
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule hostnetwork_fixed_port;
const Rule hostnetwork_fixed_port = {.id = "hostnetwork-fixed-port",
                                     .severity = Severity::kWarning,
                                     .check = HostnetworkFixedPort,
                                     .position = 200};
}  // namespace catalog

}  // namespace rw::rules
