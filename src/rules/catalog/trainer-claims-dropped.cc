// trainer-claims-dropped: a TrainJob's resourcesPerNode drops the DRA claims its runtime's `node`
// container lists. Its reference and example: ../docs/trainer-claims-dropped.yaml.
#include <algorithm>

#include "../trainer_templates.h"

namespace rw::rules {
namespace {

bool Holds(const std::vector<std::string>& claims, const std::string& name) {
  return std::find(claims.begin(), claims.end(), name) != claims.end();
}

// What the pod-level claim holds, as the template's DRA reading says.
std::string WhatItHolds(const TemplateDra& dra, const std::string& claim) {
  if (Holds(dra.nic_claims, claim)) return "RDMA NICs";
  if (Holds(dra.gpu_claims, claim)) return "GPUs";
  if (Holds(dra.channel_claims, claim)) return "an IMEX channel";
  return "devices not known here";
}

// Trainer writes the `node` container's resources from limits and requests alone once
// spec.trainer.resourcesPerNode holds limits or requests (v2.0 to v2.2) or is set at all
// (v2.3.0, even with only claims in it): the container's resources.claims is lost, and
// a container sees the devices a driver passes by CDI only for the claims it lists. The pod
// keeps the claim, so a driver that injects into every container (dranet's NRI hook) still
// reaches it: a warning, never a denial.
void TrainerClaimsDropped(const Context& ctx, const Rule& rule, Findings& out) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || !facts->resources_per_node || facts->dropped_claims.empty()) return;
  const auto* f = TrainerNodeTemplate(ctx);
  if (f == nullptr) return;
  const auto& dra = f->networks.dra;
  // In scope: a GPU template, or one whose GPUs were exactly the dropped claim's.
  const bool gpu_claim_dropped =
      std::any_of(facts->dropped_claims.begin(), facts->dropped_claims.end(),
                  [&](const std::string& c) { return Holds(dra.gpu_claims, c); });
  if (f->gpu.empty() && !gpu_claim_dropped) return;
  std::string listed;
  bool nics = false, gpus = false;
  for (const auto& claim : facts->dropped_claims) {
    listed += (listed.empty() ? "'" : ", '") + claim + "' (" + WhatItHolds(dra, claim) + ")";
    nics = nics || Holds(dra.nic_claims, claim);
    gpus = gpus || Holds(dra.gpu_claims, claim);
  }
  const std::string lost = nics   ? "NCCL finds no RDMA device there and falls back to sockets"
                           : gpus ? "the trainer runs without the claim's GPUs"
                                  : "the trainer runs without the claim's devices";
  rule.Report(out, "/spec/trainer/resourcesPerNode",
              "the `node` container of " + facts->runtime.Describe() + " lists the DRA claim " +
                  listed +
                  " in resources.claims, and spec.trainer.resourcesPerNode makes Trainer write "
                  "the container's resources from limits and requests alone" +
                  (facts->resources_per_node_replaces
                       ? std::string()
                       : std::string(" (v2.3.0 does so even though resourcesPerNode holds no "
                                     "limits or requests, and drops its own claims too)")) +
                  ": the container no longer names the claim, so devices its driver passes "
                  "through CDI never reach it and " +
                  lost +
                  " (a driver that injects into every container of the pod, as dranet's "
                  "NRI hook does, still reaches it)",
              "leave resourcesPerNode out of the TrainJob and size the runtime's `node` container "
              "instead (a runtime per node shape), so that it keeps its resources.claims");
}

}  // namespace

namespace catalog {
extern const Rule trainer_claims_dropped;
const Rule trainer_claims_dropped = {.id = "trainer-claims-dropped",
                                     .severity = Severity::kWarning,
                                     .check = TrainerClaimsDropped,
                                     .position = 300};
}  // namespace catalog

}  // namespace rw::rules
