// `-o sarif`: SARIF 2.1.0, the format code scanning reads: one run whose driver lists every rule
// with its documentation, a result per finding located at its line and column, a suppressed
// finding as a result with its suppression, unreadable documents as notifications; audit adds
// its namespaces, kinds and policy as the run's properties.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "../format.h"
#include "rdma_webhook/build_info.h"

namespace rw::cli {
namespace {

using nlohmann::json;
using rules::Severity;

// Each rule's full help travels in the file itself; helpUri and informationUri (both optional
// in SARIF) are written only when the build or $RDMA_WEBHOOK_DOCS_URL says where the docs are
// published (DocsUrl), since the project names no host of its own.

std::string Level(Severity s) { return s == Severity::kError ? "error" : "warning"; }

// A file name as a URI reference: relative paths stay relative (code scanning resolves them
// against the repository), absolute ones become file: URIs; unsafe bytes are percent-encoded.
std::string FileUri(const std::string& file) {
  if (file == "-") return "stdin";
  std::string out = file.rfind('/', 0) == 0 ? "file://" : "";
  for (const char ch : file) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 ||
        std::string_view("-._~/!$&'()*+,;=:@").find(ch) != std::string_view::npos) {
      out += ch;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned>(c));
      out += buf;
    }
  }
  return out;
}

std::string RuleHelp(const rules::RuleReference& r) {
  const auto& d = *r.doc;
  std::string text = std::string(d.summary) + ".\n\nFires when: " + std::string(d.fires) +
                     "\n\nWhy it breaks RDMA: " + std::string(d.why) +
                     "\n\nFix: " + std::string(d.fix);
  if (!d.severity_note.empty()) text += "\n\nSeverity: " + std::string(d.severity_note);
  return text;
}

json SarifRule(const rules::RuleReference& r, const std::string& docs_url) {
  const auto& d = *r.doc;
  std::string markdown = "**Fires when:** " + std::string(d.fires) +
                         "\n\n**Why it breaks RDMA:** " + std::string(d.why) + "\n\n**Fix:** " +
                         std::string(d.fix) + "\n\n**Example:**\n\n```yaml\n" +
                         std::string(d.example) + "```\n";
  json rule = {{"id", r.id},
               {"name", r.id},
               {"shortDescription", {{"text", d.summary}}},
               {"fullDescription", {{"text", std::string(d.fires)}}},
               {"help", {{"text", RuleHelp(r)}, {"markdown", std::move(markdown)}}},
               {"defaultConfiguration", {{"level", Level(r.severity)}}}};
  // rules.md's section of a rule is headed by its id, which is its own anchor ([a-z0-9-]).
  if (!docs_url.empty()) rule["helpUri"] = docs_url + "/rules.md#" + std::string(r.id);
  return rule;
}

json PhysicalLocation(const Checked& c, const std::string& pointer) {
  json physical = {{"artifactLocation", {{"uri", FileUri(c.file)}}}};
  if (const auto p = c.Where(pointer)) {
    json region = {{"startLine", p->line}};
    if (p->column > 0) region["startColumn"] = p->column;
    physical["region"] = std::move(region);
  }
  return physical;
}

json SarifResult(const Checked& c, const rules::Finding& f,
                 const std::map<std::string, std::size_t>& index) {
  json result = {
      {"ruleId", f.rule},
      {"level", Level(f.severity)},
      {"message", {{"text", f.Text()}}},
      {"locations", json::array({{{"physicalLocation", PhysicalLocation(c, f.pointer)},
                                  {"logicalLocations",
                                   json::array({{{"fullyQualifiedName", c.source + f.pointer},
                                                 {"kind", "object"}}})}}})},
      {"properties", {{"source", c.source}, {"pointer", f.pointer}, {"fix", f.fix}}}};
  if (const auto it = index.find(f.rule); it != index.end()) result["ruleIndex"] = it->second;
  return result;
}

// Where this version's docs/ folder is published, without a trailing slash: $RDMA_WEBHOOK_DOCS_URL
// when set, else the build's RW_DOCS_URL (docs/cli.md#-o-sarif-and--o-junit); "" when unknown.
std::string DocsUrl() {
  const char* env = std::getenv("RDMA_WEBHOOK_DOCS_URL");
  std::string url = env != nullptr ? env : build::kDocsUrl;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// SARIF 2.1.0: one run; the driver lists every rule with its documentation (and, when
// `docs_url` is not empty, a helpUri to its section of rules.md there); each finding is a
// result located at its pointer's line and column, a suppressed one with its suppression;
// unreadable documents are notifications.
json ToSarif(const std::vector<Checked>& results, const std::vector<InputError>& errors,
             const std::string& docs_url) {
  json rules = json::array();
  std::map<std::string, std::size_t> index;
  for (const auto& r : rules::RuleReferences()) {
    index[std::string(r.id)] = rules.size();
    rules.push_back(SarifRule(r, docs_url));
  }
  json out_results = json::array();
  for (const auto& c : results) {
    for (const auto& f : c.diagnosis.findings) out_results.push_back(SarifResult(c, f, index));
    // A suppressed finding stays a result, marked as SARIF marks a suppression written in the
    // scanned file itself (kind inSource), so code scanning lists it as dismissed, not gone.
    for (const auto& x : c.diagnosis.suppressed) {
      json result = SarifResult(c, x.finding, index);
      json suppression = {{"kind", "inSource"}, {"status", "accepted"}};
      if (!x.reason.empty()) suppression["justification"] = x.reason;
      suppression["location"] = {{"physicalLocation", PhysicalLocation(c, x.annotation)}};
      result["suppressions"] = json::array({std::move(suppression)});
      out_results.push_back(std::move(result));
    }
  }
  json notifications = json::array();
  for (const auto& e : errors)
    notifications.push_back(
        {{"level", "error"},
         {"message", {{"text", e.source + ": " + e.message}}},
         {"locations",
          json::array({{{"physicalLocation",
                         {{"artifactLocation",
                           {{"uri", FileUri(e.file.empty() ? e.source : e.file)}}}}}}})}});
  json invocation = {{"executionSuccessful", errors.empty()}};
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
  json driver = {{"name", "rdma-webhook"},
                 {"version", build::kVersion},
                 {"semanticVersion", build::kVersion},
                 {"rules", std::move(rules)}};
  if (*build::kProjectUrl != '\0') driver["informationUri"] = build::kProjectUrl;
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({{{"tool", {{"driver", std::move(driver)}}},
                                 {"invocations", json::array({std::move(invocation)})},
                                 {"results", std::move(out_results)}}})}};
}

class SarifReport : public Report {
 public:
  void Add(Checked&& c) override {
    // SARIF holds findings only: a clean document adds nothing, and no evidence is written.
    if (c.diagnosis.findings.empty() && c.diagnosis.suppressed.empty()) return;
    c.diagnosis.evidence.clear();
    results_.push_back(std::move(c));
  }

  void End(const RunEnd& end) override {
    json out = ToSarif(results_, end.errors_read, DocsUrl());
    if (end.cluster != nullptr) out["runs"][0]["properties"] = ClusterRunJson(*end.cluster);
    std::cout << out.dump(2) << "\n";
  }

 private:
  std::vector<Checked> results_;  // with only the positions their findings need (Judge)
};

}  // namespace

namespace formats {
extern const Format sarif;
const Format sarif = {
    .name = "sarif",
    .help = "SARIF 2.1.0 for code scanning: each finding at its line, every rule documented",
    .position = 30,
    .shows_positions = true,
    .shows_changes = false,
    .open = Open<SarifReport>,
};
}  // namespace formats

}  // namespace rw::cli
