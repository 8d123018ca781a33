// `-o junit`: JUnit XML, the format CI systems show as test reports: a testsuite per file, a
// testcase per document (clean ones pass), error findings its failure, warnings and suppressed
// findings its system-out, an unreadable document a testcase with an error.
#include <iostream>
#include <sstream>

#include "../format.h"

namespace rw::cli {
namespace {

using rules::Severity;

std::string Level(Severity s) { return std::string(rules::ToString(s)); }

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

// A testsuite per file, a testcase per document; error findings are its failure, warnings its
// system-out; an unreadable document is a testcase with an error.
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

class JunitReport : public Report {
 public:
  void Add(Checked&& c) override {
    c.diagnosis.evidence.clear();      // JUnit shows only findings
    results_.push_back(std::move(c));  // clean documents pass as cases
  }

  void End(const RunEnd& end) override { std::cout << ToJunit(results_, end.errors_read); }

 private:
  std::vector<Checked> results_;
};

}  // namespace

namespace formats {
extern const Format junit;
const Format junit = {
    .name = "junit",
    .help = "JUnit XML for CI test reports: a testsuite per file, a testcase per document",
    .position = 40,
    .shows_positions = true,
    .shows_changes = false,
    .open = Open<JunitReport>,
};
}  // namespace formats

}  // namespace rw::cli
