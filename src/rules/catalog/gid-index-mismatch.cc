// gid-index-mismatch: NCCL_IB_GID_INDEX differs from the GID index measured on the nodes.
// Its reference and example: ../docs/gid-index-mismatch.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void GidIndexMismatch(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.ns.nccl.fabric != policy::Fabric::kRoce || !ctx.ns.nccl.gid_index) return;
  const long long want = *ctx.ns.nccl.gid_index;
  for (const auto& f : ctx.templates)
    for (const auto* c : f.gpu) {
      const auto* v = c->FindEnv("NCCL_IB_GID_INDEX");
      if (v == nullptr || !v->value) continue;
      const auto check = nccl::CheckGidIndex(*v->value);
      if (!check.valid || *check.number == want) continue;
      rule.Report(out, EnvPointer(*c, *v),
                  "container '" + c->name + "' sets NCCL_IB_GID_INDEX=" + std::string(*v->value) +
                      " but this namespace's nodes were measured to use GID index " +
                      std::to_string(want) +
                      ": with the wrong GID, init succeeds and connections then time out or crawl.",
                  "set NCCL_IB_GID_INDEX=" + std::to_string(want) + " or remove it");
    }
}

}  // namespace

namespace catalog {
extern const Rule gid_index_mismatch;
const Rule gid_index_mismatch = {.id = "gid-index-mismatch",
                                 .severity = Severity::kError,
                                 .check = GidIndexMismatch,
                                 .position = 110};
}  // namespace catalog

}  // namespace rw::rules
