#include "template_marker.h"

#include <cctype>

namespace rw::codec {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `${NAME}` (also `${NAME:-default}` and the like) starting at `i`.
bool EnvsubstAt(std::string_view text, std::size_t i) {
  if (text.compare(i, 2, "${") != 0 || i + 2 >= text.size() || !IsNameStart(text[i + 2]))
    return false;
  std::size_t j = i + 3;
  while (j < text.size() && IsNameChar(text[j])) ++j;
  if (j < text.size() && text[j] == '}') return true;
  const std::size_t close = text.find('}', j);
  const std::size_t eol = text.find('\n', j);
  return close != std::string_view::npos && (eol == std::string_view::npos || close < eol) &&
         text[j] == ':';
}

// `<<<<<<<` at the start of a line, then its end or a space (git writes `<<<<<<< HEAD`).
bool ConflictAt(std::string_view text, std::size_t i) {
  return (i == 0 || text[i - 1] == '\n') && text.compare(i, 7, "<<<<<<<") == 0 &&
         (i + 7 == text.size() || text[i + 7] == ' ' || text[i + 7] == '\n' || text[i + 7] == '\r');
}

}  // namespace

std::optional<TemplateMarker> FindTemplateMarker(std::string_view text) {
  using Kind = TemplateMarker::Kind;
  std::optional<TemplateMarker> helm, envsubst;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      continue;
    }
    if (ConflictAt(text, i)) return TemplateMarker{line, Kind::kMergeConflict};
    if (!helm && text.compare(i, 2, "{{") == 0) {
      const std::size_t close = text.find("}}", i + 2);
      const std::size_t eol = text.find('\n', i);
      if (close != std::string_view::npos && (eol == std::string_view::npos || close < eol))
        helm = TemplateMarker{line, Kind::kHelm};
    }
    if (!envsubst && EnvsubstAt(text, i)) envsubst = TemplateMarker{line, Kind::kEnvsubst};
  }
  return helm ? helm : envsubst;
}

std::string TemplateError(const TemplateMarker& m, std::size_t first_line) {
  const std::string where = "line " + std::to_string(first_line + m.line - 1);
  if (m.kind == TemplateMarker::Kind::kMergeConflict)
    return where +
           ": an unresolved git merge conflict (`<<<<<<<`, `=======`, `>>>>>>>`), not YAML: "
           "keep one side, remove the markers and check the file";
  if (m.kind == TemplateMarker::Kind::kHelm)
    return where +
           ": a Helm (Go template) file, not YAML (`{{ ... }}`): render it first (helm "
           "template) and check the output";
  return where +
         ": an envsubst template, not YAML (`${NAME}`): substitute the variables first "
         "(envsubst < FILE) and check the output";
}

}  // namespace rw::codec
