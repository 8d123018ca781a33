// trainer-rdma-resource-erased: a TrainJob's resourcesPerNode erases its runtime's RDMA device.
// Its reference and example: ../docs/trainer-rdma-resource-erased.yaml.
#include "../trainer_templates.h"

namespace rw::rules {
namespace {

using policy::Path;

std::string List(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// Trainer v2.0 to v2.2 set the `node` container's resources to resourcesPerNode whole: what the
// runtime claimed there and the TrainJob does not repeat is gone from every pod. v2.3.0 merges
// per resource name and keeps it; the manifest does not say which release runs, so a warning
// (a namespace on v2.2 or older raises it with `rules:`).
void TrainerRdmaResourceErased(const Context& ctx, const Rule& rule, Findings& out) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || !facts->resources_per_node_replaces) return;
  std::vector<std::string> erased, fixes;
  std::string where;
  for (const auto& r : facts->replaced) {
    if (!ctx.policy.IsRdmaDeviceResource(r.resource)) continue;
    erased.push_back(r.resource + ": " + std::to_string(r.count));
    fixes.push_back(r.resource + ": " + std::to_string(r.count));
    if (where.empty()) where = r.runtime_pointer;
  }
  if (erased.empty()) return;
  rule.Report(out, "/spec/trainer/resourcesPerNode",
              facts->runtime.Describe() + " claims " + List(erased) +
                  " for its `node` container (" + where +
                  "), and spec.trainer.resourcesPerNode does not: Trainer v2.0 to v2.2 replace the "
                  "container's resources with resourcesPerNode, so the pods get no RDMA device and "
                  "NCCL falls back to sockets (v2.3.0 merges per resource name and keeps it)",
              "add " + List(fixes) + " to spec.trainer.resourcesPerNode.limits");
}

}  // namespace

namespace catalog {
extern const Rule trainer_rdma_resource_erased;
const Rule trainer_rdma_resource_erased = {.id = "trainer-rdma-resource-erased",
                                           .severity = Severity::kWarning,
                                           .check = TrainerRdmaResourceErased,
                                           .position = 260};
}  // namespace catalog

}  // namespace rw::rules
