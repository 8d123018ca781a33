#pragma once
// A TrainJob is judged through the JobSet Trainer would build from it (workload/trainjob.h).
// These functions turn what the rules say about that JobSet into what a TrainJob's author can
// act on. Pure.
#include <string_view>

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

}  // namespace rw::rules
