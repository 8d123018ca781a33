// Lookups over the table of modes (modes/, listed by cmake/ModeTable.cmake). What names a mode,
// gives its path or reads its section reads the table, so a new mode is its files, not a new case
// in several switches.
#include <array>

#include "modes/mode.h"

namespace rw::policy {

namespace modes {

const Row* RowOf(Mode mode) {
  for (const Row* row : Rows())
    if (row->mode == mode) return row;
  return nullptr;
}

std::vector<std::string> ModeNames() {
  std::vector<std::string> names;
  for (const Row* row : Rows()) names.emplace_back(row->name);
  names.emplace_back("off");
  return names;
}

std::vector<std::string> AllowedPathNames() {
  std::vector<std::string> names;
  for (const Row* row : Rows()) names.emplace_back(row->name);
  for (const Path p : {Path::kPlugin, Path::kPrivileged, Path::kNone, Path::kUnknown})
    names.emplace_back(ToString(p));
  return names;
}

}  // namespace modes

std::string_view ToString(Mode m) {
  const modes::Row* row = modes::RowOf(m);
  return row != nullptr ? row->name : "off";
}

Path ModePath(Mode m) {
  const modes::Row* row = modes::RowOf(m);
  return row != nullptr ? row->path : Path::kNone;
}

// The paths that are no mode's, with their names.
constexpr std::array<std::pair<Path, std::string_view>, 5> kOtherPaths{{
    {Path::kNone, "none"},
    {Path::kPlugin, "plugin"},
    {Path::kPrivileged, "privileged"},
    {Path::kUnknown, "unknown"},
    {Path::kMixed, "mixed"},
}};

// A mode's path is named after the mode: `allowedPaths: [sriov]` allows what `mode: sriov` makes.
std::string_view ToString(Path p) {
  for (const modes::Row* row : modes::Rows())
    if (row->path == p) return row->name;
  for (const auto& [path, name] : kOtherPaths)
    if (path == p) return name;
  return "none";
}

std::optional<Path> ParsePath(std::string_view s) {
  for (const modes::Row* row : modes::Rows())
    if (row->name == s) return row->path;
  for (const auto& [path, name] : kOtherPaths)
    if (name == s) return path;
  return std::nullopt;
}

}  // namespace rw::policy
