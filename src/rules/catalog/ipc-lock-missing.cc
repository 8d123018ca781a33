// ipc-lock-missing: an RDMA container cannot lock memory.
// Its reference and example: ../docs/ipc-lock-missing.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void IpcLockMissing(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates)
    for (const auto* c : f.rdma_containers) {
      if (c->privileged || c->HasCapability("IPC_LOCK")) continue;
      // CRI-O grants CAP_IPC_LOCK and containerd does not; which one runs is not in the
      // manifest, so this is a warning, never a denial.
      if (c->HasOnlyPrefixedCapability("IPC_LOCK")) {
        rule.ReportAs(Severity::kWarning, out, c->pointer + "/securityContext/capabilities/add",
                      "container '" + c->name +
                          "' adds CAP_IPC_LOCK: CRI-O reads it as IPC_LOCK, but containerd's CRI "
                          "prefixes it again (CAP_CAP_IPC_LOCK), so on containerd nodes the "
                          "container does not get IPC_LOCK and memory registration fails.",
                      "write IPC_LOCK, without the CAP_ prefix, in "
                      "securityContext.capabilities.add");
        continue;
      }
      rule.ReportOnRdma(
          f, out, c->pointer + "/securityContext",
          "container '" + c->name +
              "' uses RDMA but does not add IPC_LOCK: memory registration pins pages past "
              "RLIMIT_MEMLOCK and fails, so NCCL cannot use the NIC.",
          "add IPC_LOCK to securityContext.capabilities.add");
    }
}

}  // namespace

namespace catalog {
extern const Rule ipc_lock_missing;
const Rule ipc_lock_missing = {.id = "ipc-lock-missing",
                               .severity = Severity::kError,
                               .check = IpcLockMissing,
                               .position = 20};
}  // namespace catalog

}  // namespace rw::rules
