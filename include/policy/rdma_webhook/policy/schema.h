#pragma once
// The policy file's JSON Schema, for `rdma-webhook policy schema` and the chart's values schema.
#include <nlohmann/json.hpp>

namespace rw::policy {

// The JSON Schema (draft-07, Helm's draft) of a policy document, from the parser's own tables.
// A document it refuses ParsePolicy refuses too, but for null, which the parser reads as a field
// left out.
nlohmann::ordered_json PolicySchema();

}  // namespace rw::policy
