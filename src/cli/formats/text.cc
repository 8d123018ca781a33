// `-o text`: a block per document as it is judged, for a person at a terminal; then the counts
// (and for audit the table of namespaces).
#include <algorithm>
#include <iostream>

#include "../common.h"
#include "../format.h"

namespace rw::cli {
namespace {

using rules::Severity;

struct Style {
  bool color;
  std::string operator()(const char* code, const std::string& text) const {
    return color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
};

std::string Plural(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Location(const Checked& c, const std::string& pointer) {
  std::string at = c.file;
  if (const auto p = c.Where(pointer)) {
    at += ":" + std::to_string(p->line);
    if (p->column > 0) at += ":" + std::to_string(p->column);
  }
  return at;
}

// "file:line:col: error rule: message" (line and column where known), the form compilers
// write and editors and CI annotate.
std::string FindingLine(const Checked& c, const rules::Finding& f, const Style& s) {
  const std::string at = Location(c, f.pointer);
  const bool error = f.severity == Severity::kError;
  return at + ": " + (error ? s("31;1", "error") : s("33;1", "warning")) + " " + s("1", f.rule) +
         ": " + f.message;
}

// One document's block: what it is, its path, whether RDMA is really used, why we think so,
// each finding with its fix and each suppressed finding with its reason. Unless `verbose`, a
// document without findings, suppressed findings and changes the webhook would make prints
// nothing.
void PrintBlock(const Checked& c, const Style& s, bool verbose) {
  const auto& d = c.diagnosis;
  const bool clean = d.findings.empty();
  if (!verbose && clean && d.suppressed.empty() && c.changes == 0) return;
  std::cout << s("1", c.source) << "  " << (c.kind.empty() ? "(no kind)" : c.kind) << " " << c.ns
            << "/" << (c.name.empty() ? "(unnamed)" : c.name) << "\n";
  std::cout << "  path: " << s("1", std::string(policy::ToString(d.path))) << "   rdma: "
            << (d.rdma ? s("32", "yes") : "no")
            // Enforcement speaks of errors in a workload; other kinds are never judged.
            << "   enforcement: "
            << (c.judged ? std::string(policy::ToString(d.enforcement)) : "not judged")
            << (d.skipped ? "   (opted out: rdma-webhook.io/skip)" : "") << "\n";
  if (!d.evidence.empty()) {
    std::cout << "  evidence:\n";
    for (const auto& e : d.evidence) std::cout << "    - " << e << "\n";
  }
  // A finding starts its line with file:line:col, as compilers write it, so that editors and
  // CI jump to it; the pointer and the fix follow, indented.
  for (const auto& f : d.findings) {
    std::cout << FindingLine(c, f, s) << "\n";
    std::cout << "    at " << (f.pointer.empty() ? "/" : f.pointer) << "\n";
    if (!f.fix.empty()) std::cout << "    " << s("36", "fix: " + f.fix) << "\n";
  }
  // Suppressed findings are shown, not counted: "suppressed" where a severity would be, so that
  // an editor's or CI's error/warning pattern does not take them for findings.
  for (const auto& x : d.suppressed) {
    std::cout << Location(c, x.finding.pointer) << ": " << s("2", "suppressed") << " "
              << s("1", x.finding.rule) << ": " << x.finding.message << "\n";
    std::cout << "    at " << (x.finding.pointer.empty() ? "/" : x.finding.pointer) << "\n";
    std::cout << "    reason: " << (x.reason.empty() ? "(none given)" : x.reason) << " (by "
              << x.annotation << ")\n";
  }
  if (clean)
    std::cout << "  "
              << s("32",
                   d.suppressed.empty()
                       ? std::string("ok: no findings")
                       : "ok: no findings (" + std::to_string(d.suppressed.size()) + " suppressed)")
              << "\n";
  // check judges the manifest as written; the webhook would first rewrite it.
  if (c.changes > 0)
    std::cout << "  "
              << s("36", "in namespace " + c.ns + " the webhook would apply " +
                             std::to_string(c.changes) + (c.changes == 1 ? " change" : " changes") +
                             ": run `rdma-webhook mutate` to see them")
              << "\n";
  std::cout << "\n";
}

// "3 documents, 1 error, 0 warnings"; unreadable ones count among the items: "3 documents
// (1 unreadable), ..."; suppressed findings, when there are some, follow: "..., 2 suppressed".
std::string CountsLine(const RunEnd& end) {
  return Plural(end.items + end.unreadable, end.noun) +
         (end.unreadable > 0 ? " (" + std::to_string(end.unreadable) + " unreadable)" : "") + ", " +
         Plural(end.errors, "error") + ", " + Plural(end.warnings, "warning") +
         (end.suppressed > 0 ? ", " + std::to_string(end.suppressed) + " suppressed" : "");
}

std::string PathsText(const NamespaceSummary& s) {
  std::string out;
  for (const auto& [path, n] : s.paths)
    out += (out.empty() ? "" : ", ") + path + " " + std::to_string(n);
  return out;
}

void PrintNamespaceTable(const std::map<std::string, NamespaceSummary>& namespaces) {
  std::vector<std::vector<std::string>> rows = {
      {"NAMESPACE", "OBJECTS", "ERRORS", "WARNINGS", "PATHS"}};
  for (const auto& [ns, s] : namespaces)
    rows.push_back({ns, std::to_string(s.objects), std::to_string(s.errors),
                    std::to_string(s.warnings), PathsText(s)});
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i + 1 < row.size() ? row[i] + std::string(width[i] - row[i].size() + 3, ' ') : row[i];
    std::cout << line << "\n";
  }
}

// audit's end: the namespaces, the counts with the policy, what was left out and why.
void PrintClusterSummary(const RunEnd& end, const ClusterRun& run) {
  if (!run.namespaces.empty()) PrintNamespaceTable(run.namespaces);
  std::cout << CountsLine(end) << " in " << run.namespaces.size()
            << (run.namespaces.size() == 1 ? " namespace" : " namespaces")
            << " (policy: " << run.policy << ")\n";
  if (run.owned > 0)
    std::cout << run.owned << (run.owned == 1 ? " object is" : " objects are")
              << " judged through its controller (--include-owned lists them too)\n";
  std::string names;
  for (const auto* k : run.plan.skipped)
    names += (names.empty() ? "" : ", ") + (k->group.empty() ? k->kind : k->kind + "." + k->group);
  if (!names.empty()) std::cout << "kinds the cluster does not serve, skipped: " << names << "\n";
}

class TextReport : public Report {
 public:
  explicit TextReport(const ReportOptions& options) : options_(options), style_{options.color} {}

  void Add(Checked&& c) override {
    if (!options_.quiet) return PrintBlock(c, style_, options_.verbose);
    for (const auto& f : c.diagnosis.findings)
      if (FailsOn(options_.fail_on, f.severity)) std::cout << FindingLine(c, f, style_) << "\n";
  }

  void End(const RunEnd& end) override {
    if (end.cluster != nullptr) return PrintClusterSummary(end, *end.cluster);
    // Unreadable documents count: "0 documents" with exit 2 would read as an empty input.
    if (!options_.quiet) std::cout << CountsLine(end) << "\n";
  }

 private:
  ReportOptions options_;
  Style style_;
};

}  // namespace

namespace formats {
extern const Format text;
const Format text = {
    .name = "text",
    .help = "a block per document (path, RDMA, evidence, findings with their fix), then counts",
    .position = 10,
    .shows_positions = true,
    .shows_changes = true,
    .open = Open<TextReport>,
};
}  // namespace formats

}  // namespace rw::cli
