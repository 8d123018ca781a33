// The device resource the fixes of several rules name (privileged-rdma, rdma-device-missing,
// rdma-device-hostpath): one the cluster is likely to have.
#include "context.h"

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

}  // namespace rw::rules
