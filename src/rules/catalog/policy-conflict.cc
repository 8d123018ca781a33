// policy-conflict: the manifest sets a field the namespace's mode manages to another meaning.
// Its reference and example: ../docs/policy-conflict.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void PolicyConflict(const Context& ctx, const Rule& rule, Findings& out) {
  // The plan holds only the conflicts the namespace's onConflict reports.
  for (const auto& f : ctx.templates)
    for (const auto& c : f.plan.conflicts)
      rule.Report(out, c.pointer,
                  c.message +
                      ": the webhook will not silently change it, and the two values "
                      "cannot both hold.",
                  "remove the field so the namespace's mode sets it, or use a namespace whose "
                  "mode matches");
}

}  // namespace

namespace catalog {
extern const Rule policy_conflict;
const Rule policy_conflict = {.id = "policy-conflict",
                              .severity = Severity::kError,
                              .check = PolicyConflict,
                              .position = 120};
}  // namespace catalog

}  // namespace rw::rules
