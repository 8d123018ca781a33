// mnnvl-without-imex: a multi-node GPU job in a namespace with a ComputeDomain claims no IMEX
// channel. Its reference and example: ../docs/mnnvl-without-imex.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

// A ComputeDomain (NVIDIA's DRA driver) is how a namespace runs jobs across a multi-node NVLink
// domain (GB200 NVL72): the pods of a job reach each other's GPU memory through the IMEX channel
// a claim of the domain's channel template gives them. Without one, NCCL on such GPUs fails its
// MNNVL init (NVIDIA/nccl #1925). Only multi-node kinds with several GPU pods are judged (a
// single pod needs no channel), and an unknown claim may be the channel: quiet then.
void MnnvlWithoutImex(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.w.kind_row == nullptr || !ctx.w.kind_row->multi_node) return;
  long long gpu_pods = 0;
  for (const auto& f : ctx.templates)
    if (!f.gpu.empty()) gpu_pods += f.replicas;
  if (gpu_pods < 2) return;
  for (const auto& f : ctx.templates) {
    const auto& dra = f.networks.dra;
    if (f.gpu.empty() || dra.compute_domains.empty() || !dra.channel_claims.empty() || dra.unknown)
      continue;
    std::string domains;
    for (const auto& d : dra.compute_domains) domains += (domains.empty() ? "'" : ", '") + d + "'";
    rule.Report(out, f.t->SpecPointer(),
                "namespace " + ctx.w.ns + " has ComputeDomain " + domains +
                    " (GPUs in one NVLink domain across nodes) but this template of " +
                    std::to_string(gpu_pods) +
                    " GPU pods claims no IMEX channel: NCCL on multi-node NVLink GPUs fails "
                    "its MNNVL init without one.",
                "add a spec.resourceClaims entry with resourceClaimTemplateName set to the "
                "ComputeDomain's spec.channel.resourceClaimTemplate.name, and name it in the GPU "
                "containers' resources.claims");
  }
}

}  // namespace

namespace catalog {
extern const Rule mnnvl_without_imex;
const Rule mnnvl_without_imex = {.id = "mnnvl-without-imex",
                                 .severity = Severity::kWarning,
                                 .check = MnnvlWithoutImex,
                                 .position = 335};
}  // namespace catalog

}  // namespace rw::rules
