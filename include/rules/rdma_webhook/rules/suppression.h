#pragma once
// Inline suppression: an annotation `ignore-check.rdma-webhook.io/<rule-id>: "<reason>"` on the
// object's metadata (every finding of the object) or on a pod template's metadata (the findings
// in that template) turns that rule's findings into suppressed ones (docs/suppression.md). The
// diagnosis does it, so the webhook, `check`, `mutate` and `audit` agree. Pure.
#include <string>
#include <string_view>
#include <vector>

#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

inline constexpr std::string_view kIgnoreCheckPrefix = "ignore-check.rdma-webhook.io/";

// Whether an annotation may suppress the rule: not the rules that carry the namespace's policy
// (path-not-allowed, policy-conflict), which the policy's owner decides, not the manifest's.
bool Suppressible(std::string_view rule);

// Moves every finding of `findings` that an ignore-check annotation of `w` names into
// `suppressed`, with the annotation's value as the reason. An annotation on the object's
// metadata covers all its findings; one on a template's metadata covers the findings whose
// pointer lies inside that template. Rules that are not Suppressible stay.
void Suppress(const workload::Workload& w, std::vector<Finding>& findings,
              std::vector<Suppressed>& suppressed);

}  // namespace rw::rules
