#pragma once
// Signs read from a pod template that decide its path and whether it uses RDMA
// (docs/design.md, "Paths"). Pure functions of the template and the policy.
#include <string>
#include <vector>

#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

// NCCL goes through a network plugin that is not InfiniBand verbs (GPUDirect-TCPX/TCPXO, AWS
// EFA): the evidence line naming the first sign seen, or "" when there is none.
std::string PluginSign(const workload::PodTemplate& t);

// RDMA NICs attached by the platform without Multus (GKE multi-networking with `rdma*`
// networks; off the host network also NCCL_NET=gIB or the gIB plugin image).
struct PlatformNics {
  std::string sign;                     // evidence line, "" when the platform attaches none
  std::vector<std::string> interfaces;  // interfaceName of every networking.gke.io entry
  // The sign is the gIB plugin (NCCL_NET or its image), which says which transport runs but not
  // who attaches the NICs: a DRA claim of RDMA NICs beside it is what brings them.
  bool from_plugin = false;
};
PlatformNics ReadPlatformNics(const workload::PodTemplate& t);

// What grants a container the verbs character devices past the device cgroup.
struct DeviceGrant {
  std::string what;      // "" when nothing does
  bool certain = false;  // privileged, an RDMA device resource, NICs the platform or a DRA
                         // claim attaches, an NRI annotation naming the devices; not certain:
                         // any other DRA claim or device-injection annotation
};
// `platform_nics`: the template's NICs come from the platform (GKE) or a DRA claim of RDMA NICs
// (read through the catalogue), whose driver passes their devices to every container.
DeviceGrant FindDeviceGrant(const workload::Container& c, const workload::PodTemplate& t,
                            const policy::Policy& policy, bool platform_nics);

// The container mounts something at /dev/infiniband; `host_path` tells whether every such mount
// comes from a hostPath volume.
struct InfinibandMount {
  bool mounted = false;
  bool host_path = false;
  std::string pointer;  // the first such volumeMount
};
InfinibandMount FindInfinibandMount(const workload::Container& c, const workload::PodTemplate& t);

// A sign that a hostNetwork GPU template really uses RDMA (docs/design.md#paths, "RDMA or
// not"), without the multi-node sign, which needs the whole workload: the
// evidence line, or "".
std::string HostNetworkRdmaSign(const workload::PodTemplate& t, const policy::Policy& policy);

// The container claims AWS EFA but tells libfabric to use its TCP provider (`FI_PROVIDER=tcp`,
// `sockets`, or `tcp;ofi_rxm`): NCCL's traffic goes over TCP, not the EFA device, so it is
// neither the plugin path nor RDMA. The evidence line, or "".
std::string EfaOverTcp(const workload::Container& c);

// An extended resource whose name looks like an RDMA NIC or an SR-IOV VF (`*/rdma*`, `*erdma*`,
// `*/hca*`, `*sriov*`, `*/vf`, `*/nic*`, `roce`, `mlnx`, `hostdev`, an `ib` word, ...), any case.
// Only a hint: what the policy's lists name decides a path.
bool LooksLikeNicResource(std::string_view name);

// Case-insensitive ASCII comparison (NCCL compares NCCL_NET with strcasecmp).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace rw::rules
