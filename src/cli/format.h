#pragma once
// An output format of `check` and `audit` is one unit: src/cli/formats/<name>.cc defines
// `const Format formats::<name>` (its name, one line of help, its place in lists and how it
// opens a report), and the build lists every file of that folder in FormatTable()
// (cmake/FormatTable.cmake). The commands take their -o choices, their help and the
// configuration file's check of `output:` from Formats(), and drive the report they open;
// neither names a format.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "checked.h"
#include "cluster.h"
#include "inputs.h"

namespace rw::cli {

// What a format may need to know before the first document.
struct ReportOptions {
  bool color = false;             // stdout is a terminal that takes ANSI colours (UseColor)
  bool verbose = false;           // check -v: every document, also those without findings
  bool quiet = false;             // check -q: only the lines of failing findings
  std::string fail_on = "error";  // --fail-on: which findings fail (quiet prints only those)
};

// One namespace's line of audit's summary.
struct NamespaceSummary {
  std::size_t objects = 0, errors = 0, warnings = 0;
  std::map<std::string, std::size_t> paths;  // path -> objects on it
};

// audit's side of a run: what it listed in the cluster, and with which policy.
struct ClusterRun {
  const std::map<std::string, NamespaceSummary>& namespaces;  // "(cluster)" for cluster scope
  const KindPlan& plan;
  const std::string& policy;  // where the policy came from
  std::size_t owned = 0;      // objects left out because a listed workload controls them
};

// What the command knows once every document has been read.
struct RunEnd {
  const char* noun;  // what an item is: "document" (check), "object" (audit)
  std::size_t items = 0, errors = 0, warnings = 0, suppressed = 0;
  std::size_t unreadable = 0;  // documents that could not be read (a missing file is none)
  const std::vector<InputError>& errors_read;
  const ClusterRun* cluster = nullptr;  // audit's; none for check
};

// One run's writer. Text writes as documents arrive; a format that is one document (JSON,
// SARIF, JUnit) holds or spools them until End.
class Report {
 public:
  virtual ~Report() = default;
  // One judged document, in input order.
  virtual void Add(Checked&& c) = 0;
  // After the last document: writes the rest to stdout (stderr is the command's).
  virtual void End(const RunEnd& end) = 0;
};

struct Format {
  std::string_view name;  // -o's value; the file's name
  std::string_view help;  // one line for --help
  int position;           // the order of lists (--help, errors); unique, the default first
  bool shows_positions;   // writes lines and columns, so check records them while reading
  bool shows_changes;     // says how many edits the webhook would make (check counts them)
  std::unique_ptr<Report> (*open)(const ReportOptions& options);
};

// A row's `open` for a report class: constructed with the options when it takes them.
template <class R>
std::unique_ptr<Report> Open(const ReportOptions& options) {
  if constexpr (std::is_constructible_v<R, const ReportOptions&>) {
    return std::make_unique<R>(options);
  } else {
    return std::make_unique<R>();
  }
}

namespace formats {
// Generated (cmake/FormatTable.cmake): one row per file of src/cli/formats/, in file-name order.
const std::vector<const Format*>& FormatTable();
}  // namespace formats

// Every format, by position.
const std::vector<const Format*>& Formats();
// The formats' names, by position (-o's choices, the configuration file's check).
std::vector<std::string> FormatNames();
// -o's help: "output format" and a line per format with its help.
std::string FormatsHelp();
// The format named `name`; the commands only ask for one of FormatNames() (CLI11 checks -o,
// ApplyConfig the file), so another name is a bug: std::logic_error.
const Format& FindFormat(std::string_view name);

// audit's namespaces, listed and skipped kinds and policy as JSON and SARIF write them.
nlohmann::json ClusterRunJson(const ClusterRun& run);

}  // namespace rw::cli
