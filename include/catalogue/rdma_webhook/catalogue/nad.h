#pragma once
// A typed view of a NetworkAttachmentDefinition (k8s.cni.cncf.io/v1): the device resource its
// `k8s.v1.cni.cncf.io/resourceName` annotation names (what Multus and the
// network-resources-injector read to find the devices of the network) and what its CNI config
// makes of the attachment. The config is user JSON inside a string: it is read as data, within
// bounds, and anything that cannot be read is `unknown`, never an error. Pure.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::catalogue {

inline constexpr std::string_view kNadGroup = "k8s.cni.cncf.io";
inline constexpr std::string_view kNadKind = "NetworkAttachmentDefinition";
inline constexpr std::string_view kNadResourceAnnotation = "k8s.v1.cni.cncf.io/resourceName";

// Bounds on what is read of spec.config: longer text and longer plugin chains are not read
// (the attachment is `unknown`). Real configs are a few hundred bytes and a handful of plugins;
// the API server already caps the whole object near 1.5 MiB.
inline constexpr std::size_t kMaxNadConfigBytes = 64 * 1024;
inline constexpr std::size_t kMaxNadPlugins = 32;

// What the network's CNI config gives the pod.
enum class NadNics {
  kRdma,     // a device of the resource moved into the pod with its RDMA side: sriov, ib-sriov,
             // host-device, or any chain with the `rdma` plugin
  kNetdev,   // a plain netdev (macvlan, ipvlan, bridge... without the rdma plugin)
  kUnknown,  // no config, or one that cannot be read (the evidence says why)
};

struct NadView {
  std::string ns;
  std::string name;
  std::string resource;            // the resourceName annotation, "" when unset
  std::vector<std::string> types;  // the config's plugin types, in chain order
  NadNics nics = NadNics::kUnknown;
  std::string problem;  // why nics is kUnknown ("spec.config is not JSON", ...)
  // The main plugin is the SR-IOV CNI (or its InfiniBand twin) with no deviceID of its own: it
  // takes the VF Multus finds among the pod's devices of `resource`, and without one the CNI
  // ADD fails ("VF pci addr is required"). Only then is an unclaimed resource certain to break.
  bool needs_device = false;
  // The config itself says the attachment is RDMA: an InfiniBand VF (`ib-sriov`: IB has no
  // netdev-only use) or the `rdma` plugin in the chain. `sriov` and `host-device` alone do not
  // say: the same config moves a VF bound to vfio-pci for DPDK, which has no RDMA device, and
  // sriov-cni finds that out from the VF's driver on the node, never from the config
  // (docs/dra.md#when-a-nad-does-not-say-rdma). kRdma without it is RDMA assumed.
  bool rdma_stated = false;
  // "sriov", "macvlan + rdma": the types as the evidence shows them.
  std::string Types() const;
};

NadView ReadNad(const nlohmann::json& nad);

}  // namespace rw::catalogue
