#pragma once
// What `mutate` says on stderr about a document: why the webhook leaves it as written, and the
// error findings that remain in its result (which make the exit code 1). Without these a user
// saw `[]` and exit 1 and no word.
#include <string>
#include <vector>

#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::cli {

// The stderr lines ("note: ...", "error: ...", each without its line break) for one document
// named `source`: `w` as read, `m` what Mutate made of it, `result` the diagnosis of m.result.
// Documents that are no workload the policy knows, and changed ones without errors, get none.
std::vector<std::string> MutateNotes(const std::string& source, const workload::Workload& w,
                                     const mutate::Mutation& m, const rules::Diagnosis& result,
                                     const policy::Policy& policy);

}  // namespace rw::cli
