// dra-fixed-ib-hca: NCCL_IB_HCA names particular devices while the NICs come from a DRA claim.
// Its reference and example: ../docs/dra-fixed-ib-hca.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

// A DRA driver picks the NICs at allocation time, and their names (mlx5_3, mlx5_7) change from
// one pod to the next. A list of particular devices then matches none of them on some nodes,
// and NCCL's "NET/IB : No device found." is an INFO line: the job falls back to TCP silently.
// A family prefix (mlx5) or an exclusion list keeps matching; a value from a reference is
// unknown at admission and not judged.
void DraFixedIbHca(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.networks.dra.nic.empty() || f.t->host_network) continue;
    for (const auto* c : f.gpu) {
      const auto* v = c->FindEnv("NCCL_IB_HCA");
      if (v == nullptr || !v->value || !nccl::IbHca::Parse(*v->value).NamesParticularDevices())
        continue;
      rule.Report(out, EnvPointer(*c, *v),
                  "container '" + c->name + "' sets NCCL_IB_HCA=" + std::string(*v->value) +
                      ", particular devices, but its NICs come from a DRA claim (" +
                      f.networks.dra.nic +
                      "): the driver picks the devices at allocation, their names vary from "
                      "pod to pod, and where none matches NCCL falls back to TCP without an "
                      "error.",
                  "drop NCCL_IB_HCA (NCCL uses the devices the claim brings), or give a family "
                  "prefix such as mlx5, or an exclusion list (^...)");
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule dra_fixed_ib_hca;
const Rule dra_fixed_ib_hca = {.id = "dra-fixed-ib-hca",
                               .severity = Severity::kWarning,
                               .check = DraFixedIbHca,
                               .position = 320};
}  // namespace catalog

}  // namespace rw::rules
