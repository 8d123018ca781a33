#pragma once
// Findings about how a document was read, made where the reading happens (the CLI's YAML reader,
// the type checks of workload::Workload::Read) through their registered rules: duplicate-key and
// malformed-manifest (src/rules/catalog/).
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

// A repeated mapping key (the last value won).
Finding DuplicateKeyFinding(const codec::DuplicateKey& d);

// A field whose type the schema does not allow: the object cannot be judged.
Finding MalformedManifestFinding(const workload::ManifestError& error);

}  // namespace rw::rules
