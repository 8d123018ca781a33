#pragma once
// The diagnosis of a workload: its access path, whether RDMA is really used, the evidence, and
// the findings of every rule (docs/design.md, docs/rules.md). Pure.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

enum class Severity { kError, kWarning };
std::string_view ToString(Severity s);

struct Finding {
  std::string rule;
  Severity severity = Severity::kError;
  std::string message;  // what is wrong and why it breaks RDMA
  std::string fix;      // what to change, short (admission warnings: "<rule>: <fix>")
  std::string pointer;  // RFC 6901 pointer into the object

  // The message and the fix as one text ("... Fix: ..."): what the JSON, SARIF and JUnit
  // outputs and a denial carry, where a finding's message must name its fix.
  std::string Text() const { return fix.empty() ? message : message + " Fix: " + fix; }
};

struct TemplateDiagnosis {
  std::string pointer;
  policy::Path path = policy::Path::kNone;
  bool rdma = false;
};

struct Diagnosis {
  policy::Path path = policy::Path::kNone;
  bool rdma = false;
  std::vector<std::string> evidence;
  std::vector<Finding> findings;
  std::vector<TemplateDiagnosis> templates;
  bool skipped = false;  // opted out with rdma-webhook.io/skip where the namespace allows it
  policy::Validation enforcement = policy::Validation::kDeny;

  std::size_t Count(Severity s) const;
};

// Every rule id with its severity, in the order of docs/rules.md.
struct RuleInfo {
  std::string_view id;
  Severity severity;
};
const std::vector<RuleInfo>& RuleTable();

// What a user reads about a rule (`rdma-webhook rules`, docs/rules.md). Kept in the rule table
// beside the rule itself (rule_table.cc), so a new rule cannot come without it.
struct RuleDoc {
  std::string_view summary{};        // one line: what is wrong
  std::string_view severity_note{};  // when the severity depends on a condition; "" otherwise
  std::string_view fires{};          // when it fires
  std::string_view why{};            // why it breaks RDMA
  std::string_view fix{};            // what to change
  std::string_view example{};        // a minimal manifest (YAML) that fires this rule and no other
  Severity example_severity = Severity::kError;  // the severity the example gets
  std::string_view example_policy{};  // the policy the example needs; "" = the embedded default
};

struct RuleReference {
  std::string_view id;
  Severity severity;  // the table's; severity_note says when it differs
  const RuleDoc* doc;
};
// Every rule with its documentation, in the order of RuleTable().
const std::vector<RuleReference>& RuleReferences();

// The path of a workload (docs/design.md#paths) from the paths of its templates: the one path they
// share, `mixed` when they differ, `unknown` when none is known but one cannot be read, else
// `none`.
policy::Path WorkloadPath(const std::vector<policy::Path>& template_paths);

// Throws workload::ManifestError when the object has wrong types.
Diagnosis Diagnose(const workload::Workload& w, const policy::Policy& policy,
                   const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());
Diagnosis Diagnose(const nlohmann::json& object, const policy::Policy& policy,
                   std::string_view default_ns,
                   const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());

// Applies a namespace's `rules:` levels: `off` drops a finding, error/warning set its severity.
// Diagnose does it already; for findings made elsewhere (the CLI's duplicate-key).
void ApplyRuleLevels(std::vector<Finding>& findings, const policy::NamespacePolicy& ns_policy);

// The label that opts an object out where the namespace allows it.
inline constexpr std::string_view kSkipAnnotation = "rdma-webhook.io/skip";
bool OptedOut(const workload::Workload& w, const policy::NamespacePolicy& ns_policy);

}  // namespace rw::rules
