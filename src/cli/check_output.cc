// check's own formats, text and JSON; audit writes its objects with the same ones.
#include <cerrno>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "check_reports.h"

namespace rw::cli {
namespace {

using nlohmann::json;
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

}  // namespace

json FindingJson(const rules::Finding& f) {
  return {{"rule", f.rule},
          {"severity", rules::ToString(f.severity)},
          {"message", f.Text()},
          {"fix", f.fix},
          {"pointer", f.pointer}};
}

json ToJson(const Checked& c) {
  json findings = json::array();
  for (const auto& f : c.diagnosis.findings) findings.push_back(FindingJson(f));
  json suppressed = json::array();
  for (const auto& s : c.diagnosis.suppressed) {
    json entry = FindingJson(s.finding);
    entry["reason"] = s.reason;
    entry["annotation"] = s.annotation;
    suppressed.push_back(std::move(entry));
  }
  return {{"source", c.source},
          {"apiVersion", c.api_version},
          {"kind", c.kind},
          {"namespace", c.ns},
          {"name", c.name},
          {"path", policy::ToString(c.diagnosis.path)},
          {"rdma", c.diagnosis.rdma},
          {"enforcement", policy::ToString(c.diagnosis.enforcement)},
          {"skipped", c.diagnosis.skipped},
          {"evidence", c.diagnosis.evidence},
          {"findings", std::move(findings)},
          {"suppressed", std::move(suppressed)}};
}

CheckJsonWriter::CheckJsonWriter() : spool_(std::tmpfile()) {
  if (spool_ == nullptr)
    throw std::runtime_error(std::string("cannot make a temporary file: ") + std::strerror(errno));
}

CheckJsonWriter::~CheckJsonWriter() { std::fclose(spool_); }

void CheckJsonWriter::Add(const Checked& c) {
  errors_ += c.diagnosis.Count(Severity::kError);
  warnings_ += c.diagnosis.Count(Severity::kWarning);
  suppressed_ += c.diagnosis.suppressed.size();
  // Indented as dump(2) indents an element of the root's "results": 4 more spaces per line
  // (a dumped string holds no raw newline).
  std::string text = (results_++ == 0 ? "" : ",\n") + std::string(4, ' ');
  for (const char ch : ToJson(c).dump(2)) {
    text.push_back(ch);
    if (ch == '\n') text.append(4, ' ');
  }
  if (std::fwrite(text.data(), 1, text.size(), spool_) != text.size())
    throw std::runtime_error(std::string("writing a temporary file: ") + std::strerror(errno));
}

void CheckJsonWriter::Finish(const std::vector<InputError>& errors, const json& extra) {
  json out = extra;
  out["results"] = json::array();
  out["summary"] = {{"documents", results_},
                    {"errors", errors_},
                    {"warnings", warnings_},
                    {"suppressed", suppressed_}};
  if (!errors.empty()) {
    out["errors"] = json::array();
    for (const auto& e : errors)
      out["errors"].push_back({{"source", e.source}, {"message", e.message}});
  }
  // The skeleton's empty "results" is where the spooled results go.
  const std::string skeleton = out.dump(2);
  const std::string empty = "\"results\": []";
  const std::size_t at = skeleton.rfind(empty);  // after errors and extras, before summary
  std::cout << skeleton.substr(0, at);
  if (results_ == 0) {
    std::cout << empty;
  } else {
    std::cout << "\"results\": [\n";
    std::rewind(spool_);
    char buffer[1 << 16];
    for (std::size_t n = 0; (n = std::fread(buffer, 1, sizeof buffer, spool_)) > 0;)
      std::cout.write(buffer, static_cast<std::streamsize>(n));
    std::cout << "\n  ]";
  }
  std::cout << skeleton.substr(at + empty.size()) << "\n";
}

std::string Location(const Checked& c, const std::string& pointer) {
  std::string at = c.file;
  if (const auto p = c.Where(pointer)) {
    at += ":" + std::to_string(p->line);
    if (p->column > 0) at += ":" + std::to_string(p->column);
  }
  return at;
}

std::string FindingLine(const Checked& c, const rules::Finding& f, bool color) {
  const Style s{color};
  const std::string at = Location(c, f.pointer);
  const bool error = f.severity == Severity::kError;
  return at + ": " + (error ? s("31;1", "error") : s("33;1", "warning")) + " " + s("1", f.rule) +
         ": " + f.message;
}

void PrintText(const Checked& c, bool color, bool verbose) {
  const Style s{color};
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
    std::cout << FindingLine(c, f, color) << "\n";
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

std::string CountsLine(std::size_t items, const std::string& noun, std::size_t errors,
                       std::size_t warnings, std::size_t unreadable, std::size_t suppressed) {
  return Plural(items + unreadable, noun) +
         (unreadable > 0 ? " (" + std::to_string(unreadable) + " unreadable)" : "") + ", " +
         Plural(errors, "error") + ", " + Plural(warnings, "warning") +
         (suppressed > 0 ? ", " + std::to_string(suppressed) + " suppressed" : "");
}

}  // namespace rw::cli
