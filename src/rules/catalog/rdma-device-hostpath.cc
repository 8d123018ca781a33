// rdma-device-hostpath: /dev/infiniband comes only from a hostPath mount.
// Its reference and example: ../docs/rdma-device-hostpath.yaml.
#include "../context.h"
#include "../signs.h"

namespace rw::rules {
namespace {

// A hostPath volume makes the device nodes appear, but the container's device cgroup (built
// from the device plugin's answer or from privileged) still refuses to open them.
void RdmaDeviceHostpath(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates)
    for (const auto* c : f.rdma_containers) {
      const auto mount = FindInfinibandMount(*c, *f.t);
      if (!mount.mounted || !mount.host_path) continue;
      // Any grant, even one we cannot be sure of (a DRA claim of unknown kind), keeps this
      // error quiet: never deny on a guess.
      if (!FindDeviceGrant(*c, *f.t, ctx.policy, PlatformOrDraNics(f)).what.empty()) continue;
      rule.ReportOnRdma(
          f, out, mount.pointer,
          "container '" + c->name +
              "' gets /dev/infiniband only through a hostPath volume: the device nodes "
              "appear, but the container's device cgroup still denies the verbs "
              "devices, so NCCL reports 'NET/IB : No device found' and uses sockets.",
          "claim an RDMA device resource (e.g. " + ExampleDeviceResource(ctx) +
              ": 1) instead of the hostPath, or use a DRA claim");
    }
}

}  // namespace

namespace catalog {
extern const Rule rdma_device_hostpath;
const Rule rdma_device_hostpath = {.id = "rdma-device-hostpath",
                                   .severity = Severity::kError,
                                   .check = RdmaDeviceHostpath,
                                   .position = 150};
}  // namespace catalog

}  // namespace rw::rules
