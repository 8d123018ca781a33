// Rules for what Kubeflow Trainer makes of a TrainJob (docs/trainer.md). They read the facts
// the TrainJob reader kept (workload::TrainJobFacts) beside the effective pod templates, and
// point into the TrainJob itself (/spec/trainer/...), never into the effective JobSet.
#include "rdma_webhook/workload/trainjob.h"
#include "rule_functions.h"

namespace rw::rules {
namespace {

using policy::Path;

const TemplateFacts* NodeTemplate(const Context& ctx) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || facts->node_template.empty()) return nullptr;
  for (const auto& f : ctx.templates)
    if (f.t->pointer == facts->node_template) return &f;
  return nullptr;
}

const workload::Container* NodeContainer(const TemplateFacts& f) {
  for (const auto& c : f.t->containers)
    if (c.name == workload::kNodeContainer) return &c;
  return nullptr;
}

std::string List(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

// Trainer v2.0 to v2.2 set the `node` container's resources to resourcesPerNode whole: what the
// runtime claimed there and the TrainJob does not repeat is gone from every pod.
void TrainerRdmaResourceErased(const Context& ctx, const Rule& rule, Findings& out) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || !facts->resources_per_node) return;
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
                  "NCCL falls back to sockets",
              "add " + List(fixes) + " to spec.trainer.resourcesPerNode.limits");
}

// torchrun starts numProcPerNode processes per node, one NCCL rank each on its own GPU
// (LOCAL_RANK): fewer processes than GPUs leave GPUs idle, more make two ranks share a GPU,
// which NCCL refuses.
void TrainerProcsGpuMismatch(const Context& ctx, const Rule& rule, Findings& out) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || !facts->num_proc_per_node || *facts->num_proc_per_node <= 0) return;
  const auto* f = NodeTemplate(ctx);
  const auto* c = f ? NodeContainer(*f) : nullptr;
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

// In a hostNetwork namespace the webhook would put the pods on the host network, but a
// TrainJob cannot say hostNetwork or dnsPolicy (no override or patch of any Trainer version
// has them): only the runtime can, and a multi-node job on a runtime without them trains over
// the pod network, without the host's RDMA NICs.
void TrainerRuntimeNoRdmaPath(const Context& ctx, const Rule& rule, Findings& out) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || facts->num_nodes < 2 || ctx.ns.mode != policy::Mode::kHostNetwork) return;
  const auto* f = NodeTemplate(ctx);
  if (f == nullptr || f->gpu.empty() || f->t->host_network) return;
  if (f->path == Path::kPlugin || f->path == Path::kSriov || f->path == Path::kShared) return;
  rule.Report(out, "/spec/runtimeRef",
              "this namespace runs RDMA on the host network, but " + facts->runtime.Describe() +
                  " does not set hostNetwork for its trainer pods and a TrainJob cannot (Trainer's "
                  "overrides and runtimePatches have no hostNetwork or dnsPolicy): the " +
                  std::to_string(facts->num_nodes) +
                  " nodes of this job talk over the pod network, without RDMA",
              "use a runtime whose trainer pods set `hostNetwork: true` and `dnsPolicy: "
              "ClusterFirstWithHostNet`, or change " +
                  facts->runtime.Describe());
}

}  // namespace rw::rules
