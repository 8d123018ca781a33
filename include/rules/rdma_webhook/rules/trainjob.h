#pragma once
// A TrainJob is judged through the JobSet Trainer would build from it (workload/trainjob.h).
// These functions turn what the rules say about that JobSet into what a TrainJob's author can
// act on. Pure.
#include <string>
#include <string_view>

#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/trainjob.h"

namespace rw::rules {

// Points the findings into the TrainJob: a value the TrainJob wrote gets its pointer there
// (/spec/trainer/env/1, /spec/runtimePatches/0/...); a value of the runtime gets
// /spec/runtimeRef and the runtime's name and field in the message, since only the runtime can
// change it. Adds the runtime to the evidence. `source`: where the runtime was found.
void PointIntoTrainJob(Diagnosis& d, const workload::TrainJobTemplates& t, std::string_view source);

// The diagnosis of a TrainJob whose runtime is not known: path `unknown`, no findings, the
// evidence naming the runtime and `why` ("not among the inputs", ...).
Diagnosis RuntimeNotFound(const workload::RuntimeRef& ref, std::string_view why);

// The runtime a TrainJob names, from the catalogue (the inputs, the cluster): `object` is
// nullptr when it is not there, and `why_not` says why in words a user can act on.
struct TrainJobRuntime {
  const nlohmann::json* object = nullptr;
  std::string source;   // "inputs" or "cluster"
  std::string why_not;  // when object is nullptr
};
TrainJobRuntime FindRuntime(const workload::RuntimeRef& ref, const catalogue::Catalogue& catalogue);

// A TrainJob diagnosed through the pods Trainer builds from it and its runtime (judged as
// v2.3 merges resourcesPerNode; the rules say what v2.0 to v2.2 erase), findings pointed into
// the TrainJob; `unknown` naming the runtime when the catalogue does not hold it. Throws
// workload::ManifestError when the TrainJob or its runtime has wrong types.
Diagnosis DiagnoseTrainJob(const nlohmann::json& trainjob, const policy::Policy& policy,
                           std::string_view default_ns, const catalogue::Catalogue& catalogue);

// True when an UPDATE leaves the pods Trainer builds as they were: the effective templates of
// `old_trainjob` and `new_trainjob` on the runtime the catalogue holds are the same
// (PodTemplatesUnchanged) and so is spec.trainer. What Trainer lets change (runtimePatches,
// while the TrainJob is suspended: plugins/jobset checkRuntimePatchesImmutability) changes the
// templates; suspend, labels, annotations and status do not. False when the runtime is not
// known or the old TrainJob cannot be read: the new one is judged on its own.
bool TrainJobTemplatesUnchanged(const nlohmann::json& old_trainjob,
                                const nlohmann::json& new_trainjob, const policy::Policy& policy,
                                std::string_view default_ns, const catalogue::Catalogue& catalogue);

}  // namespace rw::rules
