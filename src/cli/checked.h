#pragma once
// One document (or cluster object) as `check` and `audit` judged it: what every output format
// writes (src/cli/formats/).
#include <optional>
#include <string>

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

}  // namespace rw::cli
