// vf-without-network: a VF is claimed but no network is attached to plug it in.
// Its reference and example: ../docs/vf-without-network.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

// Cloud CNIs that attach a pod's RDMA NICs through their own annotation, in a format of their
// own: its presence is an attachment (the rule only needs to know that one exists).
constexpr std::string_view kVendorAttachmentKeys[] = {"k8s.volcengine.com/pod-networks"};

bool VendorAttachment(const workload::PodTemplate& t) {
  for (auto key : kVendorAttachmentKeys)
    if (const auto* v = t.Annotation(key); v != nullptr && !v->empty()) return true;
  return false;
}

// Only the absence of any attachment is certain: a network the policy does not know may be the
// one that plugs the VF in. RoCE needs the VF's netdev (its IP makes the GID): an error there;
// on InfiniBand (or an unknown fabric) the verbs reach the VF without it: a warning.
void VfWithoutNetwork(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    // DRA NICs are attached by their driver, without a network annotation.
    if (f.gpu.empty() || f.t->host_network || f.vf_claimed == 0 || !f.networks.all.empty() ||
        !f.networks.platform.empty() || !f.networks.dra.nic.empty() || VendorAttachment(*f.t))
      continue;
    std::string pointer = f.t->SpecPointer();
    std::string resource;
    for (const auto& c : f.t->containers)
      for (const auto& r : c.ResourceNames())
        if (resource.empty() && c.Claim(r) > 0 &&
            (ctx.policy.IsVfResource(r) || f.networks.nads.IsVfResource(r))) {
          resource = r;
          pointer = c.pointer + "/resources/" + (c.limits.count(r) ? "limits/" : "requests/") +
                    workload::EscapePointerToken(r);
        }
    // NICs a DRA claim may bring (not known to be RDMA NICs, or not known at all) may be the
    // ones NCCL uses: the missing attachment then breaks nothing certain.
    const std::string dra = DraMayHoldNics(f);
    const bool certain = dra.empty() && ctx.ns.nccl.fabric == policy::Fabric::kRoce;
    rule.ReportAs(
        certain ? Severity::kError : Severity::kWarning, out, pointer,
        "the pod claims " + resource +
            " but no network annotation plugs the VF in: the device plugin reserves the "
            "VF and Multus never moves it into the pod, so NCCL sees no RDMA device" +
            (dra.empty() ? std::string() : " unless it uses the NICs of DRA (" + dra + ")") + ".",
        "add `" + ctx.ns.sriov.annotation_key +
            ": <rdma-network>@eth1` to the pod "
            "template's annotations (one attachment per VF)");
  }
}

}  // namespace

namespace catalog {
extern const Rule vf_without_network;
const Rule vf_without_network = {.id = "vf-without-network",
                                 .severity = Severity::kError,
                                 .check = VfWithoutNetwork,
                                 .position = 50};
}  // namespace catalog

}  // namespace rw::rules
