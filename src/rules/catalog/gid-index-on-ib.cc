// gid-index-on-ib: NCCL_IB_GID_INDEX is set on an InfiniBand fabric.
// Its reference and example: ../docs/gid-index-on-ib.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void GidIndexOnIb(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.ns.nccl.fabric != policy::Fabric::kIb) return;
  for (const auto& f : ctx.templates)
    for (const auto* c : f.gpu) {
      const auto* v = c->FindEnv("NCCL_IB_GID_INDEX");
      if (v == nullptr) continue;
      rule.Report(out, c->pointer + "/env/" + std::to_string(v->index),
                  "container '" + c->name +
                      "' sets NCCL_IB_GID_INDEX on an InfiniBand fabric, where the GID index is "
                      "irrelevant (it only selects RoCE GIDs); it suggests the manifest was "
                      "written for another cluster.",
                  "remove NCCL_IB_GID_INDEX");
    }
}

}  // namespace

namespace catalog {
extern const Rule gid_index_on_ib;
const Rule gid_index_on_ib = {.id = "gid-index-on-ib",
                              .severity = Severity::kWarning,
                              .check = GidIndexOnIb,
                              .position = 230};
}  // namespace catalog

}  // namespace rw::rules
