// Rules about the values of NCCL variables.
#include "rule_functions.h"

namespace rw::rules {

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
                  "container '" + c->name + "' sets NCCL_IB_GID_INDEX=" + *v->value +
                      " but this namespace's nodes were measured to use GID index " +
                      std::to_string(want) +
                      ": with the wrong GID, init succeeds and connections then time out or crawl.",
                  "set NCCL_IB_GID_INDEX=" + std::to_string(want) + " or remove it");
    }
}

void InvalidNcclValue(const Context& ctx, const Rule& rule, Findings& out) {
  using Check = nccl::ValueCheck (*)(std::string_view);
  struct Variable {
    std::string_view name;
    Check check;
    const char* fix;
  };
  static const Variable kChecks[] = {
      {"NCCL_IB_DISABLE", nccl::CheckIbDisable, "set NCCL_IB_DISABLE to 0 (use RDMA) or 1 (TCP)"},
      {"NCCL_IB_GID_INDEX", nccl::CheckGidIndex,
       "unset NCCL_IB_GID_INDEX, or set the decimal index `rdma-webhook gids` recommends"},
      {"NCCL_NET_GDR_LEVEL", nccl::CheckGdrLevel,
       "set NCCL_NET_GDR_LEVEL to LOC, PIX, PXB, PHB or SYS (upper case)"}};
  for (const auto& f : ctx.templates)
    for (const auto* c : f.gpu)
      for (const auto& var : kChecks) {
        const auto* v = c->FindEnv(var.name);
        if (v == nullptr || !v->value) continue;
        const auto result = var.check(*v->value);
        if (result.valid) continue;
        rule.Report(out, EnvPointer(*c, *v), "container '" + c->name + "': " + result.problem + ".",
                    var.fix);
      }
}

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

}  // namespace rw::rules
