// shm-too-small: an RDMA container keeps the default 64 MiB /dev/shm.
// Its reference and example: ../docs/shm-too-small.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void ShmTooSmall(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.t->host_ipc) continue;
    for (const auto* c : f.rdma_containers) {
      if (f.t->HasMemoryShm(*c)) continue;
      rule.Report(out, c->pointer + "/volumeMounts",
                  "container '" + c->name +
                      "' has the default 64 MiB /dev/shm: NCCL's shared-memory buffers exceed it "
                      "('unhandled system error', 'No space left on device').",
                  "mount an emptyDir with medium: Memory at /dev/shm");
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule shm_too_small;
const Rule shm_too_small = {
    .id = "shm-too-small", .severity = Severity::kWarning, .check = ShmTooSmall, .position = 210};
}  // namespace catalog

}  // namespace rw::rules
