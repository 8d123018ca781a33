// mode: dra. A DRA driver moves RDMA NICs into the pod: the pod claims them through the
// namespace's ResourceClaimTemplate, and every GPU container names that claim. The driver
// passes the verbs devices; IPC_LOCK and NCCL's variables are still the webhook's to add.
#include <algorithm>

#include "mode.h"

namespace rw::rules::modes {
namespace {

// A claim of RDMA NICs, read through its template and DeviceClass (docs/dra.md): after
// hostNetwork, where a DRA NIC driver has no network namespace to move NICs into, and before a
// VF claim, which a pod with DRA NICs must not add (the plan reports it).
bool DraNics(const workload::PodTemplate&, const policy::Policy&, const policy::NamespacePolicy&,
             const TemplateNetworks& nets) {
  return !nets.dra.nic.empty();
}
constexpr Sign kSigns[] = {{50, DraNics}};

// NCCL_SOCKET_IFNAME only when the policy names the interface the claim's config gives the
// NIC: a driver otherwise names it by the allocation (dranet keeps the host's name).
std::vector<EnvWant> Env(const policy::NamespacePolicy& ns) {
  std::vector<EnvWant> env;
  if (!ns.dra.socket_ifname.empty()) env.push_back({"NCCL_SOCKET_IFNAME", ns.dra.socket_ifname});
  env.push_back({"NCCL_IB_DISABLE", "0"});
  return env;
}

// The first resource of resources.vf a container claims, as a pointer to its limit (or
// request) and the resource; {"", ""} when none does.
std::pair<std::string, std::string> FirstVf(const Draft& d) {
  for (const auto& c : d.t.containers)
    for (const auto& r : c.ResourceNames()) {
      if (!d.policy.IsVfResource(r)) continue;
      const char* where = c.limits.count(r) ? "/resources/limits/" : "/resources/requests/";
      return {c.pointer + where + workload::EscapePointerToken(r), r};
    }
  return {};
}

void Plan(Draft& d) {
  const auto& t = d.t;
  const auto& dra = d.ns.dra;
  // A device-plugin VF next to NICs a DRA driver moves in gives the pod two sets of NICs and
  // NCCL rails it cannot tell apart; no onConflict can choose which the user meant.
  if (const auto [pointer, resource] = FirstVf(d); !pointer.empty()) {
    d.Conflict(pointer,
               "the pod claims the device-plugin VF " + resource +
                   " next to RDMA NICs from a DRA claim, and the namespace policy (mode dra) "
                   "gives its pods their NICs through DRA only",
               true);
    return;
  }
  // The pod-level entry of the policy's template, if the template has one under any name.
  const auto from_policy = std::find_if(
      t.resource_claims.begin(), t.resource_claims.end(),
      [&](const auto& rc) { return rc.from_template && rc.source == dra.claim_template; });
  std::string name = dra.claim_name;
  if (from_policy != t.resource_claims.end()) {
    name = from_policy->name;
  } else if (!d.nets.dra.nic.empty()) {
    // The template brings its own DRA NICs (another claim): kept as written, no second set.
    d.own_rails = true;
    return;
  } else {
    const auto taken = std::find_if(t.resource_claims.begin(), t.resource_claims.end(),
                                    [&](const auto& rc) { return rc.name == dra.claim_name; });
    if (taken != t.resource_claims.end()) {
      d.Conflict(
          t.SpecPointer() + "/resourceClaims/" + std::to_string(taken - t.resource_claims.begin()),
          "the pod's claim '" + taken->name + "' comes from '" + taken->source +
              "', but the namespace policy (mode dra) claims the NICs under that name "
              "from the ResourceClaimTemplate '" +
              dra.claim_template + "'",
          true);
      return;
    }
    d.plan.edits.push_back(
        {Edit::Kind::kAppend,
         t.SpecPointer() + "/resourceClaims",
         nlohmann::json{{"name", name}, {"resourceClaimTemplateName", dra.claim_template}},
         {}});
  }
  for (const auto& c : t.containers) {
    if (!c.gpu) continue;
    const auto& names = c.dra_claim_names;
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    d.plan.edits.push_back(
        {Edit::Kind::kAppend, c.pointer + "/resources/claims", nlohmann::json{{"name", name}}, {}});
  }
  // The policy names the interface the claim gives the pod: NCCL_SOCKET_IFNAME may select it.
  if (!dra.socket_ifname.empty()) d.interfaces.push_back(dra.socket_ifname);
}

}  // namespace

extern const Unit dra;
constexpr Unit dra = {.mode = policy::Mode::kDra,
                      .rdma = true,
                      .rdma_shown = nullptr,
                      .signs = kSigns,
                      .env = Env,
                      .plan = Plan};

}  // namespace rw::rules::modes
