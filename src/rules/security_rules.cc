// Rules about what an RDMA container needs from its runtime: the memlock capability, the verbs
// devices and a large enough /dev/shm.
#include <algorithm>

#include "rule_functions.h"

namespace rw::rules {

void IpcLockMissing(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates)
    for (const auto* c : f.rdma_containers) {
      if (c->privileged || c->HasCapability("IPC_LOCK")) continue;
      rule.Report(out, c->pointer + "/securityContext",
                  "container '" + c->name +
                      "' uses RDMA but does not add IPC_LOCK: memory registration pins pages past "
                      "RLIMIT_MEMLOCK and fails, so NCCL cannot use the NIC.",
                  "add IPC_LOCK to securityContext.capabilities.add");
    }
}

void PrivilegedRdma(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates)
    for (const auto* c : f.rdma_containers) {
      if (!c->privileged) continue;
      rule.Report(out, c->pointer + "/securityContext/privileged",
                  "container '" + c->name +
                      "' is privileged for RDMA: IPC_LOCK is enough, and privileged removes the "
                      "isolation boundary.",
                  "drop privileged: true and add the IPC_LOCK capability");
    }
}

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

void RdmaDeviceMissing(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.path != policy::Path::kHostNetwork || !f.rdma) continue;
    for (const auto* c : f.rdma_containers) {
      if (c->privileged) continue;
      auto claims = [&](const std::vector<std::string>& rs) {
        return std::any_of(rs.begin(), rs.end(),
                           [&](const std::string& r) { return c->Claim(r) > 0; });
      };
      if (claims(ctx.policy.vf_resources) || claims(ctx.policy.shared_resources)) continue;
      const bool mounted = std::any_of(c->mounts.begin(), c->mounts.end(), [](const auto& m) {
        return m.mount_path.rfind("/dev/infiniband", 0) == 0;
      });
      if (mounted) continue;
      rule.Report(out, c->pointer + "/resources",
                  "container '" + c->name +
                      "' is on the host network but has no RDMA device: hostNetwork shows the "
                      "netdevs, not /dev/infiniband, so NCCL reports 'NET/IB : No device found' "
                      "and uses sockets.",
                  "claim a shared RDMA device resource (e.g. rdma/hca_shared_devices_a: 1)");
    }
  }
}

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

}  // namespace rw::rules
