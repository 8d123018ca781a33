#pragma once
// What `check` found, and the machine formats CI systems read: SARIF 2.1.0 for code scanning
// and JUnit XML for test reports.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::cli {

struct Checked {
  std::string source;  // "file#doc" ...
  std::string file;    // the file as given
  std::string api_version, kind, ns, name;
  rules::Diagnosis diagnosis;
  bool judged = true;              // a workload kind the policy knows (else: not judged)
  codec::PositionMap positions{};  // pointer -> where it is written in `file`
  std::size_t changes = 0;         // patch operations the namespace's mode would apply (text only)

  // Where a pointer of this document is written (its nearest written ancestor).
  std::optional<codec::Position> Where(const std::string& pointer) const {
    return codec::FindPosition(positions, pointer);
  }
};

// One result as `check -o json` writes it (docs/cli.md#-o-json).
nlohmann::json ToJson(const Checked& c);

// `check -o json`'s document (results, summary and, when some documents were unreadable,
// errors) written as results arrive: each result goes to a temporary file at once, so a
// cluster's worth of results costs disk, not memory.
class CheckJsonWriter {
 public:
  CheckJsonWriter();
  ~CheckJsonWriter();
  CheckJsonWriter(const CheckJsonWriter&) = delete;
  CheckJsonWriter& operator=(const CheckJsonWriter&) = delete;

  void Add(const Checked& c);
  // Writes the document to stdout; `extra`: more top-level members (audit's).
  void Finish(const std::vector<InputError>& errors,
              const nlohmann::json& extra = nlohmann::json::object());

 private:
  std::FILE* spool_;
  std::size_t results_ = 0, errors_ = 0, warnings_ = 0, suppressed_ = 0;
};

// "file:line:col: error rule: message" (line and column where known), the form compilers
// write and editors and CI annotate; ANSI colours when `color`.
std::string FindingLine(const Checked& c, const rules::Finding& f, bool color);

// `check -o text`'s block for one document: what it is, its path, whether RDMA is really used,
// why we think so, each finding with its fix and each suppressed finding with its reason; ANSI
// colours when `color`. Unless `verbose`, a document without findings, suppressed findings and
// changes the webhook would make prints nothing.
void PrintText(const Checked& c, bool color, bool verbose);

// "3 documents, 1 error, 0 warnings" (`noun`: document, object, ...); unreadable ones count
// among the items: "3 documents (1 unreadable), ..."; suppressed findings, when there are
// some, follow: "..., 0 warnings, 2 suppressed".
std::string CountsLine(std::size_t items, const std::string& noun, std::size_t errors,
                       std::size_t warnings, std::size_t unreadable = 0,
                       std::size_t suppressed = 0);

// Where this version's docs/ folder is published, without a trailing slash: $RDMA_WEBHOOK_DOCS_URL
// when set, else the build's RW_DOCS_URL (docs/cli.md#-o-sarif-and--o-junit); "" when unknown.
std::string DocsUrl();

// SARIF 2.1.0: one run; the driver lists every rule with its documentation (and, when
// `docs_url` is not empty, a helpUri to its section of rules.md there); each finding is a
// result located at its pointer's line and column, a suppressed one with its suppression;
// unreadable documents are notifications.
nlohmann::json ToSarif(const std::vector<Checked>& results, const std::vector<InputError>& errors,
                       const std::string& docs_url = DocsUrl());

// JUnit XML: a testsuite per file, a testcase per document; error findings are its failure,
// warnings its system-out; an unreadable document is a testcase with an error.
std::string ToJunit(const std::vector<Checked>& results, const std::vector<InputError>& errors);

}  // namespace rw::cli
