// invalid-nccl-value: an NCCL variable holds a value NCCL does not read as meant.
// Its reference and example: ../docs/invalid-nccl-value.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

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
       "set NCCL_NET_GDR_LEVEL to a path type (LOC, PIX, PXB, PHB, SYS, ...: upper case) or a "
       "number"}};
  for (const auto& f : ctx.templates)
    for (const auto* c : f.gpu)
      for (const auto& var : kChecks) {
        const auto* v = c->FindEnv(var.name);
        // An empty value is no value to NCCL (ncclLoadParam and ncclGetLevel read a variable
        // only when it is non-empty): its default holds, as when the variable is unset.
        if (v == nullptr || !v->value || v->value->empty()) continue;
        const auto result = var.check(*v->value);
        if (result.valid) continue;
        rule.Report(out, EnvPointer(*c, *v), "container '" + c->name + "': " + result.problem + ".",
                    var.fix);
      }
}

}  // namespace

namespace catalog {
extern const Rule invalid_nccl_value;
const Rule invalid_nccl_value = {.id = "invalid-nccl-value",
                                 .severity = Severity::kError,
                                 .check = InvalidNcclValue,
                                 .position = 130};
}  // namespace catalog

}  // namespace rw::rules
