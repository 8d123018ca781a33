#pragma once
// The one policy loader: `serve` at start, the server's reload, `check`, `mutate`, `audit` and
// `policy validate` all read a policy file through it, so a file is refused for the same reasons
// with the same words everywhere.
#include <memory>
#include <optional>
#include <string>

#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/server/env.h"

namespace rw::server {

// Why a policy file could not be used.
struct PolicyLoadError {
  enum class Kind {
    kUnreadable,  // missing, no permission, a directory, not a regular file (server)
    kTooLarge,    // over kMaxInputBytes
    kInvalid,     // read, but not a valid policy (policy::PolicyError: names the field)
  };
  Kind kind;
  std::string file;
  std::string detail;  // without the file name
  // Where in the file, 1-based, when known (0 otherwise): editors and CI annotate file:line:col.
  std::size_t line = 0;
  std::size_t column = 0;
  // "<file>:<line>:<col>: <detail>", or "<file>: <detail>" without a position.
  std::string Message() const {
    if (line == 0) return file + ": " + detail;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + detail;
  }
};

struct PolicyLoad {
  std::shared_ptr<const policy::Policy> policy;  // null exactly when error is set
  std::optional<PolicyLoadError> error;
};

// The policy in `file`, or the embedded default when `file` is empty. Never throws for a bad
// file: the error says why. `kinds`: the server reads regular files only.
PolicyLoad LoadPolicy(Env& env, const std::string& file, FileKinds kinds);

}  // namespace rw::server
