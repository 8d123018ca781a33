#pragma once
// What `check` found, and the machine formats CI systems read: SARIF 2.1.0 for code scanning
// and JUnit XML for test reports.
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

// SARIF 2.1.0: one run; the driver lists every rule with its documentation; each finding is a
// result located at its pointer's line and column; unreadable documents are notifications.
nlohmann::json ToSarif(const std::vector<Checked>& results, const std::vector<InputError>& errors);

// JUnit XML: a testsuite per file, a testcase per document; error findings are its failure,
// warnings its system-out; an unreadable document is a testcase with an error.
std::string ToJunit(const std::vector<Checked>& results, const std::vector<InputError>& errors);

}  // namespace rw::cli
