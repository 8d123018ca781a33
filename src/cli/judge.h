#pragma once
// Judging one document as `check` does; `audit` judges the cluster's objects with the same core.
#include <string>

#include "checked.h"
#include "inputs.h"
#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"

namespace rw::cli {

// The readable document `doc` judged under `policy`: its workload's diagnosis, with reading
// problems (repeated keys) first; `default_ns` for an object without metadata.namespace.
// `count_changes`: also count the patch operations the webhook would apply (text output).
// Keeps only the positions its findings need. Throws workload::ManifestError for an object
// that cannot be read as a manifest. `catalogue`: the cluster objects it is judged with.
Checked Judge(InputDocument&& doc, const policy::Policy& policy, const std::string& default_ns,
              bool count_changes, const catalogue::Catalogue& catalogue);

}  // namespace rw::cli
