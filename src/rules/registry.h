#pragma once
// What the build generates from src/rules/catalog/ and src/rules/docs/ (cmake/RuleCatalog.cmake):
// one row per catalog file and the text of its documentation file. registry.cc orders the rows
// and reads the documentation.
#include <string_view>
#include <vector>

#include "context.h"

namespace rw::rules {

struct RuleDocText {
  std::string_view id;    // the file's name without .yaml
  std::string_view file;  // as written in the repository, for error messages
  std::string_view text;  // the file's content
};

// In file-name order; Rules() orders them by position.
const std::vector<const Rule*>& CatalogRules();
const std::vector<RuleDocText>& CatalogDocs();

// Reads one documentation file (the keys of `rdma-webhook rules -o json`: summary,
// severityNote, fires, why, fix, example {severity, manifest, policy}). Throws std::logic_error
// naming the file and the key when it does not hold a complete reference.
struct OwnedRuleDoc {
  std::string summary, severity_note, fires, why, fix, example, example_policy;
  Severity example_severity = Severity::kError;
};
OwnedRuleDoc ReadRuleDoc(const RuleDocText& text);

}  // namespace rw::rules
