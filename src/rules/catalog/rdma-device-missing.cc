// rdma-device-missing: a hostNetwork RDMA pod has no access to the RDMA devices.
// Its reference and example: ../docs/rdma-device-missing.yaml.
#include "../context.h"
#include "../signs.h"

namespace rw::rules {
namespace {

using policy::Path;

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

}  // namespace

namespace catalog {
extern const Rule rdma_device_missing;
const Rule rdma_device_missing = {.id = "rdma-device-missing",
                                  .severity = Severity::kWarning,
                                  .check = RdmaDeviceMissing,
                                  .position = 180};
}  // namespace catalog

}  // namespace rw::rules
