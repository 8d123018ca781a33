// privileged-rdma: an RDMA container runs privileged.
// Its reference and example: ../docs/privileged-rdma.yaml.
#include "../context.h"
#include "../signs.h"

namespace rw::rules {
namespace {

// The fix never advises only dropping privileged: where nothing else grants the verbs devices
// (a /dev/infiniband hostPath does not pass the device cgroup), privileged is what makes RDMA
// work, and dropping it alone breaks RDMA silently.
void PrivilegedRdma(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates)
    for (const auto* c : f.rdma_containers) {
      if (!c->privileged) continue;
      workload::Container unprivileged = *c;
      unprivileged.privileged = false;
      const auto grant =
          FindDeviceGrant(unprivileged, *f.t, ctx.policy, !f.networks.platform.empty());
      std::string needs;
      if (!c->HasCapability("IPC_LOCK")) needs = "add IPC_LOCK to securityContext.capabilities.add";
      const std::string resource =
          "claim an RDMA device resource (" + ExampleDeviceResource(ctx) + ": 1)";
      if (grant.what.empty())
        needs += std::string(needs.empty() ? "" : " and ") + resource + " for /dev/infiniband";
      else if (!grant.certain)  // e.g. a DRA claim of something else (an IMEX channel)
        needs += std::string(needs.empty() ? "" : " and ") + "make sure " + grant.what +
                 " passes the verbs devices (/dev/infiniband) or " + resource;
      const std::string fix = needs.empty() ? "drop privileged: true (IPC_LOCK and " + grant.what +
                                                  " already give RDMA what it needs)"
                                            : needs + ", then drop privileged: true";
      rule.Report(out, c->pointer + "/securityContext/privileged",
                  "container '" + c->name +
                      "' is privileged for RDMA: that removes the isolation boundary, while RDMA "
                      "needs only IPC_LOCK and the verbs devices" +
                      (grant.certain ? "."
                                     : " (today only privileged is sure to grant them: a "
                                       "/dev/infiniband hostPath alone does not pass the device "
                                       "cgroup)."),
                  fix);
    }
}

}  // namespace

namespace catalog {
extern const Rule privileged_rdma;
const Rule privileged_rdma = {.id = "privileged-rdma",
                              .severity = Severity::kWarning,
                              .check = PrivilegedRdma,
                              .position = 160};
}  // namespace catalog

}  // namespace rw::rules
