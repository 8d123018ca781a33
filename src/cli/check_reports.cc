#include "check_reports.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

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

std::string Escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string Located(const Checked& c, const std::string& pointer) {
  std::string at = c.file;
  if (const auto p = c.Where(pointer)) at += ":" + std::to_string(p->line);
  return at + " " + (pointer.empty() ? "/" : pointer);
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

}  // namespace

std::string DocsUrl() {
  const char* env = std::getenv("RDMA_WEBHOOK_DOCS_URL");
  std::string url = env != nullptr ? env : build::kDocsUrl;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

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

std::string ToJunit(const std::vector<Checked>& results, const std::vector<InputError>& errors) {
  // One testsuite per file, in the order the files were given.
  struct Suite {
    std::string file;
    std::ostringstream cases;
    std::size_t tests = 0, failures = 0, errors = 0;
  };
  std::vector<Suite> suites;
  auto suite = [&](const std::string& file) -> Suite& {
    for (auto& s : suites)
      if (s.file == file) return s;
    suites.emplace_back();
    suites.back().file = file;
    return suites.back();
  };
  for (const auto& c : results) {
    Suite& s = suite(c.file);
    ++s.tests;
    const std::string name = c.source.substr(c.file.size()) + " " +
                             (c.kind.empty() ? "(no kind)" : c.kind) + " " + c.ns + "/" +
                             (c.name.empty() ? "(unnamed)" : c.name);
    s.cases << "    <testcase classname=\"" << Escape(c.file) << "\" name=\"" << Escape(name)
            << "\" file=\"" << Escape(c.file) << "\"";
    if (const auto p = c.Where("")) s.cases << " line=\"" << p->line << "\"";
    s.cases << ">\n";
    std::string failure, warnings, first_error;
    std::size_t n_errors = 0;
    for (const auto& f : c.diagnosis.findings) {
      const std::string line = Level(f.severity) + " " + f.rule + " at " + Located(c, f.pointer) +
                               "\n  " + f.Text() + "\n";
      if (f.severity == Severity::kError) {
        if (n_errors++ == 0) first_error = f.rule;
        failure += line;
      } else {
        warnings += line;
      }
    }
    if (n_errors > 0) {
      ++s.failures;
      s.cases << "      <failure type=\"" << Escape(first_error) << "\" message=\""
              << Escape(std::to_string(n_errors) + (n_errors == 1 ? " error" : " errors") +
                        ", first: " + first_error)
              << "\">" << Escape(failure) << "</failure>\n";
    }
    for (const auto& x : c.diagnosis.suppressed)
      warnings += "suppressed " + x.finding.rule + " at " + Located(c, x.finding.pointer) +
                  "\n  reason: " + (x.reason.empty() ? "(none given)" : x.reason) + "\n";
    if (!warnings.empty()) s.cases << "      <system-out>" << Escape(warnings) << "</system-out>\n";
    s.cases << "    </testcase>\n";
  }
  for (const auto& e : errors) {
    Suite& s = suite(e.file.empty() ? e.source : e.file);
    ++s.tests;
    ++s.errors;
    s.cases << "    <testcase classname=\"" << Escape(s.file) << "\" name=\""
            << Escape(e.source == s.file ? e.source : e.source.substr(s.file.size()))
            << "\" file=\"" << Escape(s.file) << "\">\n      <error type=\"unreadable\" message=\""
            << Escape(e.message) << "\"/>\n    </testcase>\n";
  }
  std::size_t tests = 0, failures = 0, n_errors = 0;
  for (const auto& s : suites) {
    tests += s.tests;
    failures += s.failures;
    n_errors += s.errors;
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"rdma-webhook check\" "
      << "tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\"" << n_errors
      << "\">\n";
  for (const auto& s : suites)
    out << "  <testsuite name=\"" << Escape(s.file) << "\" tests=\"" << s.tests << "\" failures=\""
        << s.failures << "\" errors=\"" << s.errors << "\" skipped=\"0\">\n"
        << s.cases.str() << "  </testsuite>\n";
  out << "</testsuites>\n";
  return out.str();
}

}  // namespace rw::cli
