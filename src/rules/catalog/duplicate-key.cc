// duplicate-key: a YAML mapping repeats a key.
// Its reference and example: ../docs/duplicate-key.yaml.
#include "../context.h"
#include "rdma_webhook/rules/reading_findings.h"

namespace rw::rules {

namespace catalog {
extern const Rule duplicate_key;
// Found while reading YAML, before any object exists: the CLI makes it (no check).
const Rule duplicate_key = {.id = "duplicate-key", .severity = Severity::kWarning, .position = 190};
}  // namespace catalog

// kubectl keeps the last value without a word (the API server never sees the duplicate), so the
// earlier value, perhaps the one meant, is lost. Never an error: the object is what kubectl
// would send.
Finding DuplicateKeyFinding(const codec::DuplicateKey& d) {
  const std::string line = std::to_string(d.line), earlier = std::to_string(d.earlier_line);
  const bool same_line = d.line == d.earlier_line;  // a flow mapping: {a: 1, a: 2}
  const auto& rule = catalog::duplicate_key;
  return rule.Make(
      rule.severity, d.pointer,
      "key '" + d.key + "' is repeated " +
          (same_line ? "on line " + line : "at line " + line + " (also at line " + earlier + ")") +
          ": the last value is used, as kubectl does silently, and the earlier one is lost",
      "remove the earlier '" + d.key + "' " + (same_line ? "on" : "at") + " line " + earlier +
          (same_line ? "" : " (or merge the two into the one at line " + line + ")"));
}

}  // namespace rw::rules
