#include "schema_parts.h"

#include <algorithm>

namespace rw::policy::schema {

Schema Enum(const std::vector<std::string>& allowed) {
  Schema values = Schema::array();
  for (const auto& a : allowed) values.push_back(a);
  if (std::find(allowed.begin(), allowed.end(), "off") != allowed.end()) {
    values.push_back(false);
    return {{"enum", values}};
  }
  return {{"type", "string"}, {"enum", values}};
}

Schema Object(Schema properties) {
  return {
      {"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
}

Schema Interface() {
  // Code points 33-126 less ',' (44), '/' (47), ':' (58) and '@' (64).
  return {{"type", "string"}, {"pattern", "^[!-+\\-.0-9;-?A-~]{1,15}$"}};
}

}  // namespace rw::policy::schema
