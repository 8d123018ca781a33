// network-not-found: the template attaches a network whose NetworkAttachmentDefinition the
// cluster does not have. Its reference and example: ../docs/network-not-found.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

// Only a listing says a NAD is absent (check --cluster, audit, the server's watch); files are
// never the whole cluster. A warning, not an error: a NAD applied together with the workload
// may reach the watch a moment after it, and the kubelet retries the sandbox until it exists.
void NetworkNotFound(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || f.t->host_network) continue;
    const auto& attached = f.networks.nads.attached;
    for (std::size_t i = 0; i < attached.size() && i < f.networks.all.size(); ++i) {
      if (!attached[i].missing) continue;
      const auto& a = f.networks.all[i];
      rule.Report(out, f.networks.pointer,
                  "the annotation attaches network '" + a.name + "' but namespace " + a.ns +
                      " has no NetworkAttachmentDefinition of that name: Multus cannot find "
                      "the network, pod sandbox creation fails and the pod never starts.",
                  "create the NetworkAttachmentDefinition " + a.ns + "/" + a.name +
                      " (or fix the name in the annotation)");
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule network_not_found;
const Rule network_not_found = {.id = "network-not-found",
                                .severity = Severity::kWarning,
                                .check = NetworkNotFound,
                                .position = 310};
}  // namespace catalog

}  // namespace rw::rules
