#pragma once
// A mode as the policy knows it: one row per mode, each defined in its own file of this folder
// and listed in the table of mode_table.cc. A row names the mode, gives the path a template takes
// under it, and reads the mode's section of a namespace entry.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../fields.h"
#include "../schema_parts.h"
#include "rdma_webhook/policy/policy.h"

namespace rw::policy::modes {

struct Row {
  Mode mode;
  std::string_view name;  // the value of `mode:`, and the key of the mode's section
  Path path;              // the path a template takes once the mode is applied to it
  // Reads the mode's section of a namespace entry into `ns`; nullptr: the mode has none.
  void (*read)(const nlohmann::json& section, const std::string& path, NamespacePolicy& ns);
  // Fails when a namespace entry chooses the mode but leaves out what it needs; may be nullptr.
  void (*require)(const NamespacePolicy& ns, const Fields& entry);
  // The JSON Schema of the section `read` accepts (policy schema); nullptr when `read` is.
  schema::Schema (*section_schema)();
};

// Every mode but off, in the order the documentation lists them (the table of mode_table.cc,
// which declares each row's function).
std::span<const Row* const> Rows();
// The row of `mode`, nullptr for off.
const Row* RowOf(Mode mode);
// The values `mode:` takes: every row's name, then off.
std::vector<std::string> ModeNames();
// The values allowedPaths takes: every mode's path, then plugin, none and unknown (never mixed:
// it is what a workload is, not a path a namespace can allow).
std::vector<std::string> AllowedPathNames();

}  // namespace rw::policy::modes
