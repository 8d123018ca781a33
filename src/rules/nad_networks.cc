// Which networks of a template carry RDMA and which device resource each needs: the policy
// overrides, the NetworkAttachmentDefinition decides otherwise
// (docs/dra.md#networkattachmentdefinitions).
#include <algorithm>

#include "context.h"
#include "rdma_webhook/catalogue/nad.h"
#include "rdma_webhook/rules/nad.h"

namespace rw::rules {
namespace {

using catalogue::Catalogue;
using catalogue::kNadGroup;
using catalogue::kNadKind;
using catalogue::NadNics;

std::string From(catalogue::Source s) {
  return s == catalogue::Source::kInputs ? "the inputs" : "the cluster";
}

AttachedNetwork Decide(const nccl::NetworkAttachment& a, const policy::Policy& policy,
                       const policy::NamespacePolicy& ns, const Catalogue& c, bool nads_known) {
  AttachedNetwork out;
  const std::string network = "network " + a.ns + "/" + a.name + ": ";
  const catalogue::Entry* entry = c.FindEntry(kNadGroup, kNadKind, a.ns, a.name);
  const auto view = entry != nullptr ? catalogue::ReadNad(entry->object) : catalogue::NadView{};
  out.missing = entry == nullptr && c.Knows(kNadGroup, kNadKind, a.ns);
  if (IsRdmaNetwork(policy, ns, a.name)) {
    out.from = AttachedNetwork::From::kPolicy;
    out.rdma = true;
    const auto rail =
        std::find_if(ns.sriov.networks.begin(), ns.sriov.networks.end(),
                     [&](const policy::SriovNetwork& n) { return n.network == a.name; });
    out.resource = rail != ns.sriov.networks.end() ? rail->resource : view.resource;
    if (nads_known)
      out.evidence =
          network + "RDMA, as the policy says (" +
          (rail != ns.sriov.networks.end() ? "the namespace's sriov rail" : "rdmaNetworks") +
          ", over any NAD)";
    return out;
  }
  if (entry != nullptr) {
    out.from = AttachedNetwork::From::kNad;
    out.nad = a.ns + "/" + a.name;
    out.rdma = view.nics == NadNics::kRdma;
    out.rdma_assumed = out.rdma && !view.rdma_stated;
    out.types = view.Types();
    out.resource = view.resource;
    out.needs_device = out.rdma && view.needs_device;
    const std::string decided = "NAD " + out.nad + " (" + From(entry->source) + ") ";
    const std::string resource = view.resource.empty() ? "" : ", resource " + view.resource;
    switch (view.nics) {
      case NadNics::kRdma:
        out.evidence = network + decided + "says " + view.Types() + resource +
                       (out.rdma_assumed ? ": RDMA assumed (the config does not say; a VF bound "
                                           "to vfio-pci for DPDK has none)"
                                         : ": RDMA");
        break;
      case NadNics::kNetdev:
        out.evidence = network + decided + "says " + view.Types() + resource +
                       ": a netdev without RDMA of its own";
        break;
      case NadNics::kUnknown:
        out.evidence = network + decided + "cannot be read (" + view.problem + ")" + resource +
                       ": not taken as RDMA";
        break;
    }
    return out;
  }
  if (out.missing)
    out.evidence =
        network + "the cluster has no NAD of that name in " + a.ns + ": Multus cannot attach it";
  else if (nads_known)
    out.evidence =
        network + "no NAD known (" +
        (c.source() == catalogue::Source::kCluster
             ? "NADs of " + a.ns + " were not listed"
             : std::string("not among the inputs; check --cluster reads the cluster's")) +
        "): not taken as RDMA";
  return out;
}

}  // namespace

std::string RdmaAssumed(const TemplateFacts& f, const policy::Policy& policy,
                        const policy::NamespacePolicy& ns) {
  static constexpr const char* kDpdk = ": its VF may be bound to vfio-pci for DPDK, with no RDMA";
  // The privileged path is read from NCCL's variables next to privileged, not from a device.
  if (f.path == policy::Path::kPrivileged)
    return "path privileged, read from NCCL's InfiniBand variables on a privileged container, "
           "not from a device the cluster grants";
  // Another path (DRA, hostNetwork, the platform's NICs) decides RDMA by its own sign.
  if (f.path != policy::Path::kSriov && f.path != policy::Path::kNone &&
      f.path != policy::Path::kUnknown)
    return {};
  const auto& t = *f.t;
  const auto& nads = f.networks.nads;
  // The policy's device resources and networks say RDMA, and so does a NAD that states it.
  if (t.TotalClaimWhere([&](const std::string& r) { return policy.IsRdmaDeviceResource(r); }) > 0)
    return {};
  const auto assumed_vf = [&](const std::string& r) {
    return std::find(nads.assumed_vf_resources.begin(), nads.assumed_vf_resources.end(), r) !=
           nads.assumed_vf_resources.end();
  };
  if (t.TotalClaimWhere(
          [&](const std::string& r) { return nads.IsVfResource(r) && !assumed_vf(r); }) > 0)
    return {};
  std::string first;
  for (std::size_t i = 0; i < f.networks.all.size(); ++i) {
    if (IsRdmaNetwork(policy, ns, f.networks.all[i].name)) return {};
    if (!nads.RdmaAt(i)) continue;
    const auto& n = nads.attached[i];
    if (!n.rdma_assumed) return {};
    if (first.empty()) first = "NAD " + n.nad + ": " + n.types + ", RDMA assumed" + kDpdk;
  }
  if (first.empty()) {
    // No attachment: a claim of a VF resource only an assumed NAD names.
    if (t.TotalClaimWhere(assumed_vf) == 0) return {};
    for (const auto& r : nads.assumed_vf_resources)
      if (t.TotalClaim(r) > 0) return "resource " + r + " of an SR-IOV NAD, RDMA assumed" + kDpdk;
  }
  return first;
}

bool TemplateNads::IsVfResource(std::string_view r) const {
  return std::find(vf_resources.begin(), vf_resources.end(), r) != vf_resources.end();
}

TemplateNads ReadTemplateNads(const std::vector<nccl::NetworkAttachment>& all,
                              const std::vector<std::string>& claimed, const policy::Policy& policy,
                              const policy::NamespacePolicy& ns, const Catalogue& catalogue,
                              std::string_view pod_ns) {
  TemplateNads out;
  // Without any NAD in the catalogue (the usual `check` of files) nothing changes and the
  // evidence says nothing new: the policy alone decides, as it always did.
  const bool nads_known =
      catalogue.Knows(kNadGroup, kNadKind) || catalogue.HoldsAny(kNadGroup, kNadKind);
  out.attached.reserve(all.size());
  for (const auto& a : all) out.attached.push_back(Decide(a, policy, ns, catalogue, nads_known));
  if (!nads_known) return out;
  // A claimed resource the policy does not know, that an SR-IOV NAD of the pod's namespace
  // takes its VFs from, is a VF resource.
  std::vector<std::string> unknown;
  for (const auto& r : claimed)
    if (!policy.IsGpuResource(r) && !policy.IsRdmaDeviceResource(r)) unknown.push_back(r);
  if (unknown.empty()) return out;
  std::vector<std::string> stated;  // VF resources a NAD that says RDMA takes its VFs from
  for (const auto* e : catalogue.All(kNadGroup, kNadKind)) {
    const auto view = catalogue::ReadNad(e->object);
    // The entry's namespace is its key's (an input without metadata.namespace is in the
    // --namespace one): the same entry found under the pod's namespace is in it.
    if (!view.needs_device || view.nics != NadNics::kRdma ||
        catalogue.FindEntry(kNadGroup, kNadKind, pod_ns, view.name) != e)
      continue;
    if (std::find(unknown.begin(), unknown.end(), view.resource) == unknown.end()) continue;
    if (!out.IsVfResource(view.resource)) out.vf_resources.push_back(view.resource);
    if (view.rdma_stated) stated.push_back(view.resource);
  }
  for (const auto& r : out.vf_resources)
    if (std::find(stated.begin(), stated.end(), r) == stated.end())
      out.assumed_vf_resources.push_back(r);
  return out;
}

}  // namespace rw::rules
