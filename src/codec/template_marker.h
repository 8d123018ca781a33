#pragma once
// Text that is a template for YAML rather than YAML: a Helm (Go template) chart file or an
// envsubst file; or a file left in the middle of a git merge. Such a file breaks the YAML reader
// at a place that has nothing wrong with it as a template, so the reader says what the file is
// instead of how YAML failed.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rw::codec {

struct TemplateMarker {
  enum class Kind { kHelm, kEnvsubst, kMergeConflict };
  std::size_t line = 0;  // 1-based line of `text` where the first marker is
  Kind kind = Kind::kEnvsubst;
};

// The first line that opens an unresolved git merge conflict (`<<<<<<< `), else the first
// `{{ ... }}` (on one line) in `text`, else the first `${NAME}`; nullopt when none.
std::optional<TemplateMarker> FindTemplateMarker(std::string_view text);

// The one-line reading error for a document that is a template (`first_line`: the document's
// first line in the file, for the marker's line number).
std::string TemplateError(const TemplateMarker& m, std::size_t first_line);

}  // namespace rw::codec
