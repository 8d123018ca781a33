#pragma once
// What the webhook makes of an object: the mutated object and the RFC 6902 patch that turns
// the original into it (docs/policy.md#what-each-mode-writes). Pure.
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>
#include <nlohmann/json.hpp>

#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/mutate/patch.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/trainjob.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::mutate {

struct Mutation {
  Patch patch;            // applies cleanly to the original object
  nlohmann::json result;  // the original with the patch applied (not set by MutateInPlace)
  std::vector<rules::Finding> overrides;  // user values replaced under onConflict: override
  bool skipped = false;                   // opted out
  bool waits_on_claims = false;  // a DRA claim could not be read: nothing planned (Assessment)
  // The access path of `result`, decided with the plan (what Diagnose(result).path would say),
  // so that the webhook need not read the mutated object again.
  policy::Path path = policy::Path::kNone;
};

// Throws workload::ManifestError when the object has wrong types.
// `catalogue`: the cluster objects the workload's claims and networks name (rules::Assess).
Mutation Mutate(const nlohmann::json& object, const policy::Policy& policy,
                std::string_view default_ns,
                const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());
// The same for a workload the caller has already read from `object`.
Mutation Mutate(const workload::Workload& w, nlohmann::json object, const policy::Policy& policy,
                const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());
// The same for an assessment of the workload read from `object`: its plans' edits are applied
// when the assessment says the workload is edited, and consumed.
Mutation Mutate(rules::Assessment&& a, nlohmann::json object);
// The webhook's way, and what the three above run: the review's own Boost.JSON object is
// patched where it lies (codec/dom.h), and only the patch is made; `result` stays null. `w` was
// read from `object`.
Mutation MutateInPlace(const workload::Workload& w, boost::json::value& object,
                       const policy::Policy& policy,
                       const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());
Mutation MutateInPlace(rules::Assessment&& a, boost::json::value& object);

// The manager of the webhook's own spec.runtimePatches entry in a TrainJob.
inline constexpr std::string_view kRuntimePatchManager = "rdma-webhook.io/mutator";

// What Trainer lets a webhook write into a TrainJob depends on the operation. A CREATE takes
// every edit. On an UPDATE spec.trainer is immutable, and so are the containers, volumes and
// securityContext of an existing runtimePatches entry (Trainer v2.3's CRD: `self == oldSelf`;
// the API server would reject the whole update): the webhook adds its entry when the TrainJob
// has none and otherwise writes nothing; what the pods then lack is the validating webhook's to
// report (docs/trainer.md#updates).
enum class TrainJobOperation { kCreate, kUpdate };

// A TrainJob on `runtime` (what its runtimeRef `ref` names): the edits the policy makes to the
// pods Trainer builds, written in Trainer's terms (docs/trainer.md#what-the-webhook-writes). What
// no TrainJob field can carry is in `overrides` as a trainer-runtime-no-rdma-path warning that
// names the runtime. `path` is the path of the effective templates once edited. Throws
// workload::ManifestError when either object has wrong types.
Mutation MutateTrainJob(const nlohmann::json& trainjob, const nlohmann::json& runtime,
                        const workload::RuntimeRef& ref, const policy::Policy& policy,
                        std::string_view default_ns,
                        const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty(),
                        TrainJobOperation operation = TrainJobOperation::kCreate);
// The same with the runtime from the catalogue; a TrainJob whose runtime it does not hold is
// left as it is (path `unknown`).
Mutation MutateTrainJob(const nlohmann::json& trainjob, const policy::Policy& policy,
                        std::string_view default_ns, const catalogue::Catalogue& catalogue,
                        TrainJobOperation operation = TrainJobOperation::kCreate);

}  // namespace rw::mutate
