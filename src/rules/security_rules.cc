// Rules about what an RDMA container needs from its runtime: the memlock capability, the verbs
// devices and a large enough /dev/shm.
#include <algorithm>

#include "rule_functions.h"
#include "signs.h"

namespace rw::rules {

std::string ExampleDeviceResource(const Context& ctx) {
  if (!ctx.ns.host_network.device_resource.empty()) return ctx.ns.host_network.device_resource;
  if (!ctx.ns.shared.resource.empty()) return ctx.ns.shared.resource;
  // The shared device plugin's names first: they exist wherever the plugin runs, unlike a
  // cluster-specific name such as rdma/ib.
  for (const char* common : {"rdma/rdma_shared_device_a", "rdma/hca_shared_devices_a"})
    if (ctx.policy.IsSharedResource(common)) return common;
  for (const auto& r : ctx.policy.shared_resources)
    if (r.find_first_of("*?") == std::string::npos) return r;
  return "rdma/rdma_shared_device_a";
}

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
      rule.Report(out, c->pointer + "/securityContext",
                  "container '" + c->name +
                      "' uses RDMA but does not add IPC_LOCK: memory registration pins pages past "
                      "RLIMIT_MEMLOCK and fails, so NCCL cannot use the NIC.",
                  "add IPC_LOCK to securityContext.capabilities.add");
    }
}

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
      if (!FindDeviceGrant(*c, *f.t, ctx.policy, !f.networks.platform.empty()).what.empty())
        continue;
      if (FindInfinibandMount(*c, *f.t).mounted) continue;  // rdma-device-hostpath's case
      rule.Report(
          out, c->pointer + "/resources",
          "container '" + c->name +
              "' is on the host network but has no RDMA device: hostNetwork shows the "
              "netdevs, not /dev/infiniband, so NCCL reports 'NET/IB : No device found' "
              "and uses sockets.",
          "claim a shared RDMA device resource (e.g. " + ExampleDeviceResource(ctx) + ": 1)");
    }
  }
}

// A hostPath volume makes the device nodes appear, but the container's device cgroup (built
// from the device plugin's answer or from privileged) still refuses to open them.
void RdmaDeviceHostpath(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates)
    for (const auto* c : f.rdma_containers) {
      const auto mount = FindInfinibandMount(*c, *f.t);
      if (!mount.mounted || !mount.host_path) continue;
      // Any grant, even one we cannot be sure of (a DRA claim of unknown kind), keeps this
      // error quiet: never deny on a guess.
      if (!FindDeviceGrant(*c, *f.t, ctx.policy, !f.networks.platform.empty()).what.empty())
        continue;
      rule.Report(out, mount.pointer,
                  "container '" + c->name +
                      "' gets /dev/infiniband only through a hostPath volume: the device nodes "
                      "appear, but the container's device cgroup still denies the verbs "
                      "devices, so NCCL reports 'NET/IB : No device found' and uses sockets.",
                  "claim an RDMA device resource (e.g. " + ExampleDeviceResource(ctx) +
                      ": 1) instead of the hostPath, or use a DRA claim");
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
