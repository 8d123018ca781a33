// invalid-ignore-check: an ignore-check annotation that suppresses nothing, because it names no
// rule (a typo would otherwise leave the finding it meant in force without a word) or a rule
// only the policy decides. Its reference and example: ../docs/invalid-ignore-check.yaml.
#include <algorithm>

#include "../context.h"
#include "rdma_webhook/policy/did_you_mean.h"
#include "rdma_webhook/rules/suppression.h"

namespace rw::rules {
namespace {

// Every rule id, listed once: the registry is fixed when the binary is built, and every review
// of every workload passes here (building the list per annotation map was 3 % of a small
// review's CPU).
const std::vector<std::string>& RuleIds() {
  static const std::vector<std::string> kIds = [] {
    std::vector<std::string> ids;
    for (const auto* r : Rules()) ids.push_back(std::string(r->id));
    return ids;
  }();
  return kIds;
}

// `owner` is the pointer of the object or template whose metadata holds the annotations.
void CheckAnnotations(const std::map<std::string, std::string>& annotations, std::string_view owner,
                      const Rule& rule, Findings& out) {
  const auto& ids = RuleIds();
  for (const auto& [key, reason] : annotations) {
    if (key.compare(0, kIgnoreCheckPrefix.size(), kIgnoreCheckPrefix) != 0) continue;
    const std::string id = key.substr(kIgnoreCheckPrefix.size());
    const std::string pointer =
        std::string(owner) + "/metadata/annotations/" + workload::EscapePointerToken(key);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      const std::string closest = policy::Closest(id, ids);
      rule.Report(out, pointer,
                  "the annotation " + key + " names no rule" + policy::DidYouMean(id, ids) +
                      ": it suppresses nothing, and the findings it was meant for stay.",
                  closest.empty() ? "name a rule id of `rdma-webhook rules`"
                                  : "write " + std::string(kIgnoreCheckPrefix) + closest);
    } else if (!Suppressible(id)) {
      rule.Report(out, pointer,
                  "the annotation " + key + " cannot suppress " + id +
                      ": that rule carries the namespace's policy, which an annotation on the "
                      "workload does not override.",
                  "remove the annotation; the policy's owner can change the namespace's paths or "
                  "set `rules: {" +
                      id + ": warning}` for it");
    }
  }
}

void InvalidIgnoreCheck(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.w.kind_row == nullptr) return;  // not a workload: nothing is judged to suppress
  CheckAnnotations(ctx.w.annotations, "", rule, out);
  for (const auto& t : ctx.w.templates)
    if (!t.pointer.empty()) CheckAnnotations(t.annotations, t.pointer, rule, out);
}

}  // namespace

namespace catalog {
extern const Rule invalid_ignore_check;
const Rule invalid_ignore_check = {.id = "invalid-ignore-check",
                                   .severity = Severity::kWarning,
                                   .check = InvalidIgnoreCheck,
                                   .position = 250};
}  // namespace catalog

}  // namespace rw::rules
