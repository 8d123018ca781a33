#pragma once
// What the webhook makes of an object: the mutated object and the RFC 6902 patch that turns
// the original into it (docs/policy.md#what-each-mode-writes). Pure.
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::mutate {

struct Mutation {
  nlohmann::json patch = nlohmann::json::array();  // applies cleanly to the original object
  nlohmann::json result;                           // the original with the patch applied
  std::vector<rules::Finding> overrides;  // user values replaced under onConflict: override
  bool skipped = false;                   // opted out
  // The access path of `result`, decided with the plan (what Diagnose(result).path would say),
  // so that the webhook need not read the mutated object again.
  policy::Path path = policy::Path::kNone;
};

// Throws workload::ManifestError when the object has wrong types.
// `catalogue`: the cluster objects the workload's claims and networks name (rules::Assess).
Mutation Mutate(const nlohmann::json& object, const policy::Policy& policy,
                std::string_view default_ns,
                const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());
// The same for a workload the caller has already read from `object`. The object is taken by
// value and patched in place into `result`: a caller that no longer needs it moves it in, and
// no copy is made. `w` is read only through its views, never through `w.object`.
Mutation Mutate(const workload::Workload& w, nlohmann::json object, const policy::Policy& policy,
                const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());
// The same for an assessment of the workload read from `object`: its plans' edits are applied
// when the assessment says the workload is edited, and consumed.
Mutation Mutate(rules::Assessment&& a, nlohmann::json object);

}  // namespace rw::mutate
