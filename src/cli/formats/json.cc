// `-o json`: one document of results, summary and, when some documents were unreadable, errors
// (docs/cli.md#-o-json); audit adds its namespaces, kinds, policy and owned count. Each result
// goes to a temporary file as it arrives, so a cluster's worth of results costs disk, not memory.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "../format.h"

namespace rw::cli {
namespace {

using nlohmann::json;
using rules::Severity;

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

class JsonReport : public Report {
 public:
  JsonReport() : spool_(std::tmpfile()) {
    if (spool_ == nullptr)
      throw std::runtime_error(std::string("cannot make a temporary file: ") +
                               std::strerror(errno));
  }
  ~JsonReport() override { std::fclose(spool_); }
  JsonReport(const JsonReport&) = delete;
  JsonReport& operator=(const JsonReport&) = delete;

  void Add(Checked&& c) override {
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

  void End(const RunEnd& end) override {
    json out = json::object();
    if (end.cluster != nullptr) {
      out = ClusterRunJson(*end.cluster);
      out["owned"] = end.cluster->owned;
    }
    out["results"] = json::array();
    out["summary"] = {{"documents", results_},
                      {"errors", errors_},
                      {"warnings", warnings_},
                      {"suppressed", suppressed_}};
    if (!end.errors_read.empty()) {
      out["errors"] = json::array();
      for (const auto& e : end.errors_read)
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

 private:
  std::FILE* spool_;
  std::size_t results_ = 0, errors_ = 0, warnings_ = 0, suppressed_ = 0;
};

}  // namespace

namespace formats {
extern const Format json;
const Format json = {
    .name = "json",
    .help = "one JSON document: every result with its findings, a summary, unreadable documents",
    .position = 20,
    // Pointers say where a finding is; positions would only cost memory.
    .shows_positions = false,
    .shows_changes = false,
    .open = Open<JsonReport>,
};
}  // namespace formats

}  // namespace rw::cli
