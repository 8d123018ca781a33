// gang-incomplete: the Volcano gang is smaller than the job.
// Its reference and example: ../docs/gang-incomplete.yaml.
#include <algorithm>

#include "../context.h"

namespace rw::rules {
namespace {

// Where the minimum and the members are is the kind row's (policy::GangFields); Workload::Read
// reads them.
void GangIncomplete(const Context& ctx, const Rule& rule, Findings& out) {
  if (!ctx.w.gang) return;
  if (std::none_of(ctx.templates.begin(), ctx.templates.end(),
                   [](const TemplateFacts& f) { return !f.gpu.empty(); }))
    return;
  const auto& gang = *ctx.w.gang;
  // Volcano's webhook turns an absent or 0 minAvailable into the sum of the tasks' own
  // minAvailable (each defaulting to its replicas): only a positive value below the total is
  // the user's choice of a partial gang.
  if (gang.min_available <= 0 || gang.min_available >= gang.members) return;
  rule.Report(out, gang.pointer,
              "minAvailable is " + std::to_string(gang.min_available) + " but the job has " +
                  std::to_string(gang.members) +
                  " replicas: the gang scheduler may start a partial job whose ranks wait forever "
                  "for the missing ones while holding GPUs.",
              "set minAvailable to the total replica count (" + std::to_string(gang.members) + ")");
}

}  // namespace

namespace catalog {
extern const Rule gang_incomplete;
const Rule gang_incomplete = {.id = "gang-incomplete",
                              .severity = Severity::kWarning,
                              .check = GangIncomplete,
                              .position = 220};
}  // namespace catalog

}  // namespace rw::rules
