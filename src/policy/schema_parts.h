#pragma once
// Pieces of the policy's JSON Schema (draft-07, the draft Helm's values schemas use), written
// next to the readers they describe: each says in schema terms what a Fields call accepts.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::policy::schema {

using Schema = nlohmann::ordered_json;

// Fields::String.
inline Schema String() { return {{"type", "string"}}; }
// Fields::Bool.
inline Schema Boolean() { return {{"type", "boolean"}}; }
// Fields::Count: an integer in [1, 1024].
inline Schema Count() { return {{"type", "integer"}, {"minimum", 1}, {"maximum", 1024}}; }
// Fields::Strings: a list of non-empty strings.
inline Schema Strings() {
  return {{"type", "array"}, {"items", {{"type", "string"}, {"minLength", 1}}}};
}
// Fields::Enum; `false` too where off is allowed (YAML 1.1 and Helm read an unquoted off so).
Schema Enum(const std::vector<std::string>& allowed);
// A mapping that takes exactly `properties` (Fields::Done refuses any other key).
Schema Object(Schema properties);
// ValidInterface: 1-15 printable ASCII characters but / @ , : and space (IFNAMSIZ).
Schema Interface();

}  // namespace rw::policy::schema
