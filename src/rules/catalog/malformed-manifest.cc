// malformed-manifest: a field of the object has a type the schema does not allow.
// Its reference and example: ../docs/malformed-manifest.yaml.
#include "../context.h"
#include "rdma_webhook/rules/reading_findings.h"

namespace rw::rules {

namespace catalog {
extern const Rule malformed_manifest;
// Found while reading the object into a workload: the verdict makes it (no check).
const Rule malformed_manifest = {
    .id = "malformed-manifest", .severity = Severity::kError, .position = 195};
}  // namespace catalog

Finding MalformedManifestFinding(const workload::ManifestError& error) {
  const auto& rule = catalog::malformed_manifest;
  return rule.Make(rule.severity, error.pointer(), error.what(),
                   "fix the type of " + error.pointer());
}

}  // namespace rw::rules
