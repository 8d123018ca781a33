// non-root-ipc-lock: IPC_LOCK may not reach a non-root process.
// Its reference and example: ../docs/non-root-ipc-lock.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void NonRootIpcLock(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates)
    for (const auto* c : f.rdma_containers) {
      const bool non_root =
          (c->run_as_user && *c->run_as_user != 0) || (c->run_as_non_root && *c->run_as_non_root);
      if (!non_root) continue;
      rule.Report(out, c->pointer + "/securityContext",
                  "container '" + c->name +
                      "' runs as a non-root user: IPC_LOCK in the bounding set does not reach a "
                      "non-root process's effective set, so memlock stays limited and memory "
                      "registration can fail.",
                  "run as root, or raise RLIMIT_MEMLOCK (unlimited) in the container runtime");
    }
}

}  // namespace

namespace catalog {
extern const Rule non_root_ipc_lock;
const Rule non_root_ipc_lock = {.id = "non-root-ipc-lock",
                                .severity = Severity::kWarning,
                                .check = NonRootIpcLock,
                                .position = 170};
}  // namespace catalog

}  // namespace rw::rules
