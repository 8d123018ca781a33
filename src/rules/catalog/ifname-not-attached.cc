// ifname-not-attached: NCCL_SOCKET_IFNAME names no interface the pod will have.
// Its reference and example: ../docs/ifname-not-attached.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void IfnameNotAttached(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    // The platform's NICs (GKE multi-networking) are not in a Multus annotation, and a DRA
    // claim that may hold NICs (of any driver, or one whose template or class is not found)
    // brings interfaces named per allocation (`vfnet0`): the value may well name one of them.
    if (f.t->host_network || !f.networks.platform.empty() ||
        !f.networks.dra.unnamed_interfaces.empty())
      continue;
    for (const auto* c : f.gpu) {
      const auto* v = c->FindEnv("NCCL_SOCKET_IFNAME");
      if (v == nullptr || !v->value || v->value->empty() || v->value->front() == '^') continue;
      if (!nccl::SocketIfname::Parse(*v->value).SelectedAmong(f.interfaces).empty()) continue;
      std::string have;
      for (const auto& i : f.interfaces) have += (have.empty() ? "" : ", ") + i;
      rule.Report(out, EnvPointer(*c, *v),
                  "container '" + c->name + "' sets NCCL_SOCKET_IFNAME=" + std::string(*v->value) +
                      ", which matches none of the pod's interfaces (" + have +
                      "): NCCL finds no socket interface and fails to bootstrap.",
                  "attach the network that creates that interface in the network annotation, or "
                  "name an interface the pod has (eth0, or the attached one)");
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule ifname_not_attached;
const Rule ifname_not_attached = {.id = "ifname-not-attached",
                                  .severity = Severity::kError,
                                  .check = IfnameNotAttached,
                                  .position = 30};
}  // namespace catalog

}  // namespace rw::rules
