// trainer-procs-gpu-mismatch: a TrainJob starts a different number of processes than it has GPUs
// per node. Its reference and example: ../docs/trainer-procs-gpu-mismatch.yaml.
#include "../trainer_templates.h"

namespace rw::rules {
namespace {

using policy::Path;

// torchrun starts numProcPerNode processes per node, one NCCL rank each on its own GPU
// (LOCAL_RANK): fewer processes than GPUs leave GPUs idle, more make two ranks share a GPU,
// which NCCL refuses.
void TrainerProcsGpuMismatch(const Context& ctx, const Rule& rule, Findings& out) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || !facts->num_proc_per_node || *facts->num_proc_per_node <= 0) return;
  const auto* f = TrainerNodeTemplate(ctx);
  const auto* c = f ? TrainerNodeContainer(*f) : nullptr;
  if (c == nullptr) return;
  const long long gpus =
      c->ClaimWhere([&](const std::string& r) { return ctx.policy.IsGpuResource(r); });
  const long long procs = *facts->num_proc_per_node;
  if (gpus <= 0 || gpus == procs) return;
  const std::string pointer = !facts->num_proc_per_node_pointer.empty()
                                  ? facts->num_proc_per_node_pointer
                                  : std::string("/spec/trainer/resourcesPerNode");
  const std::string from =
      facts->num_proc_per_node_pointer.empty() ? " (from " + facts->runtime.Describe() + ")" : "";
  rule.Report(
      out, pointer,
      "numProcPerNode " + std::to_string(procs) + from + " starts " + std::to_string(procs) +
          " processes on each node, which has " + std::to_string(gpus) + " GPUs: " +
          (procs < gpus ? std::to_string(gpus - procs) + " GPUs per node stay idle"
                        : "ranks share GPUs, which NCCL refuses ('Duplicate GPU detected')"),
      "set spec.trainer.numProcPerNode to " + std::to_string(gpus) +
          " (one process per GPU), or request " + std::to_string(procs) + " GPUs");
}

}  // namespace

namespace catalog {
extern const Rule trainer_procs_gpu_mismatch;
const Rule trainer_procs_gpu_mismatch = {.id = "trainer-procs-gpu-mismatch",
                                         .severity = Severity::kWarning,
                                         .check = TrainerProcsGpuMismatch,
                                         .position = 270};
}  // namespace catalog

}  // namespace rw::rules
