#pragma once
// What decides each network a template attaches: the policy (`rdmaNetworks`, the namespace's
// sriov rails) first, then the network's NetworkAttachmentDefinition in the catalogue (its
// resourceName annotation and CNI config), else nothing (the network is not taken as RDMA, as
// before NADs were read). Pure.
#include <string>
#include <string_view>
#include <vector>

#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/nccl/grammar.h"
#include "rdma_webhook/policy/policy.h"

namespace rw::rules {

struct AttachedNetwork {
  enum class From { kNone, kPolicy, kNad };
  From from = From::kNone;
  bool rdma = false;     // the network carries RDMA NICs
  std::string resource;  // the device resource it needs, "" when none is known
  // A NAD decided, and its SR-IOV CNI takes a device of `resource` the pod must claim
  // (catalogue::NadView::needs_device).
  bool needs_device = false;
  // A NAD made it RDMA without saying so (catalogue::NadView::rdma_stated): `sriov` or
  // `host-device` alone, which a DPDK VF's network also is. Errors resting on it are warnings.
  bool rdma_assumed = false;
  std::string types;  // the NAD's plugin types ("sriov", "macvlan + rdma"), "" without a NAD
  std::string nad;    // "ns/name" of the NAD that decided, "" otherwise
  // NADs were listed in the network's namespace (the cluster, never files alone) and this one
  // is not there: Multus cannot find the network and the pod sandbox fails.
  bool missing = false;
  std::string evidence;  // what decided, "" when the catalogue holds no NADs at all
};

struct TemplateNads {
  std::vector<AttachedNetwork> attached;  // one per entry of TemplateNetworks::all, same order
  // Device resources of the pod's namespace whose NADs need a claimed device (needs_device):
  // a claim of one is a VF even when the policy's resources.vf does not list it.
  std::vector<std::string> vf_resources;
  // Those of vf_resources whose NADs all leave RDMA assumed.
  std::vector<std::string> assumed_vf_resources;
  bool RdmaAt(std::size_t i) const { return i < attached.size() && attached[i].rdma; }
  bool IsVfResource(std::string_view r) const;
};

// `all`: the template's attachments; `claimed`: the resource names its containers claim.
TemplateNads ReadTemplateNads(const std::vector<nccl::NetworkAttachment>& all,
                              const std::vector<std::string>& claimed, const policy::Policy& policy,
                              const policy::NamespacePolicy& ns,
                              const catalogue::Catalogue& catalogue, std::string_view pod_ns);

}  // namespace rw::rules
