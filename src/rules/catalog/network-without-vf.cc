// network-without-vf: more RDMA networks are attached than VFs are claimed.
// Its reference and example: ../docs/network-without-vf.yaml.
#include <algorithm>
#include <map>

#include "../context.h"
#include "../signs.h"

namespace rw::rules {
namespace {

// The attachments whose NAD names the resource their SR-IOV CNI takes a VF from, per resource:
// the pod must claim one of that very resource per attachment.
std::map<std::string, long long> NadNeeds(const TemplateFacts& f) {
  std::map<std::string, long long> needs;
  for (const auto& n : f.networks.nads.attached)
    if (n.from == AttachedNetwork::From::kNad && n.needs_device) ++needs[n.resource];
  return needs;
}

void NetworkWithoutVf(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    // A DRA driver's NICs need no device-plugin VF.
    if (f.gpu.empty() || f.t->host_network || !f.networks.platform.empty() ||
        !f.networks.dra.nic.empty())
      continue;
    // The network-resources-injector adds the claims to the pods a template makes; a bare Pod
    // has already been through it when it is validated.
    if (ctx.policy.network_resources_injector && !f.t->pointer.empty()) continue;
    // A DRA claim whose devices are not known may hold the VFs: dra-driver-sriov allocates the
    // VF that the SR-IOV CNI of a Multus attachment then moves in, with no device-plugin claim.
    // The count is then no proof that sandbox creation fails: warn, never deny.
    const std::string dra = DraMayHoldNics(f);
    const Severity severity = dra.empty() ? rule.severity : Severity::kWarning;
    const std::string unsure =
        dra.empty() ? std::string()
                    : " (but " + dra + ": a DRA driver may allocate the VF the CNI moves in)";
    // The policy's default says no injector runs (docs/policy.md), so the count stands; a
    // policy that never wrote the field may just not know the cluster runs one (OpenShift's
    // SR-IOV operator does by default): the fix names the other way out.
    const std::string or_injector =
        !ctx.policy.network_resources_injector_stated && !f.t->pointer.empty()
            ? "; or, if the cluster runs the network-resources-injector (OpenShift's SR-IOV "
              "operator deploys it by default), write networkResourcesInjector: true in the policy"
            : "";
    // Networks their NAD decided: each needs a VF of its own resource.
    long long nad_vfs = 0;  // VFs of the policy's claimed for NAD networks (not for the rest)
    for (const auto& [resource, needed] : NadNeeds(f)) {
      const long long claimed = f.t->TotalClaim(resource);
      if (ctx.policy.IsVfResource(resource) || f.networks.nads.IsVfResource(resource))
        nad_vfs += std::min(claimed, needed);
      if (claimed >= needed) continue;
      rule.ReportAs(severity, out, f.networks.pointer,
                    "the annotation attaches " + std::to_string(needed) +
                        " network(s) whose NetworkAttachmentDefinition takes its VF from " +
                        resource + ", but the pod claims " + std::to_string(claimed) +
                        ": the SR-IOV CNI finds no allocated VF to move in and pod sandbox "
                        "creation fails" +
                        unsure + ".",
                    "claim " + std::to_string(needed) + " " + resource +
                        " in the GPU container's resources.limits (one per attachment)" +
                        or_injector);
    }
    // The RDMA networks the policy names, against the VFs not already counted for a NAD
    // network. A NAD network whose CNI needs no VF of a resource (macvlan with the rdma
    // plugin, host-device) is not counted: nothing says which claim it needs.
    const auto others = static_cast<long long>(std::count_if(
        f.networks.nads.attached.begin(), f.networks.nads.attached.end(),
        [](const AttachedNetwork& n) { return n.from == AttachedNetwork::From::kPolicy; }));
    const long long vfs = f.vf_claimed - nad_vfs;
    if (others <= vfs) continue;
    const std::string res =
        ctx.policy.vf_resources.empty() ? "rdma/vf" : ctx.policy.vf_resources.front();
    const std::string unknown = UnknownNicClaim(*f.t, ctx.policy, f.networks, false);
    const std::string unsure_here =
        unknown.empty() ? unsure
                        : " (but the pod claims " + unknown +
                              ", which the policy does not know: it may be the VF)" + unsure;
    rule.ReportAs(unknown.empty() ? severity : Severity::kWarning, out, f.networks.pointer,
                  "the annotation attaches " + std::to_string(others) +
                      " RDMA network(s) but the pod claims " + std::to_string(vfs) +
                      " VF(s): the SR-IOV CNI has no allocated VF to move in and pod sandbox "
                      "creation fails" +
                      unsure_here + ".",
                  "claim one " + res +
                      " per RDMA attachment in the GPU container's resources.limits" + or_injector);
  }
}

}  // namespace

namespace catalog {
extern const Rule network_without_vf;
const Rule network_without_vf = {.id = "network-without-vf",
                                 .severity = Severity::kError,
                                 .check = NetworkWithoutVf,
                                 .position = 60};
}  // namespace catalog

}  // namespace rw::rules
