#include <algorithm>

#include "rdma_webhook/policy/policy.h"

namespace rw::policy {

std::string_view ToString(Mode m) {
  switch (m) {
    case Mode::kOff:
      return "off";
    case Mode::kHostNetwork:
      return "hostNetwork";
    case Mode::kSriov:
      return "sriov";
    case Mode::kShared:
      return "shared";
    case Mode::kTcp:
      return "tcp";
  }
  return "off";
}

std::string_view ToString(Validation v) {
  switch (v) {
    case Validation::kDeny:
      return "deny";
    case Validation::kWarn:
      return "warn";
    case Validation::kOff:
      return "off";
  }
  return "deny";
}

std::string_view ToString(Path p) {
  switch (p) {
    case Path::kNone:
      return "none";
    case Path::kHostNetwork:
      return "hostNetwork";
    case Path::kSriov:
      return "sriov";
    case Path::kShared:
      return "shared";
    case Path::kTcp:
      return "tcp";
    case Path::kUnknown:
      return "unknown";
    case Path::kMixed:
      return "mixed";
  }
  return "none";
}

std::optional<Path> ParsePath(std::string_view s) {
  for (Path p : {Path::kNone, Path::kHostNetwork, Path::kSriov, Path::kShared, Path::kTcp,
                 Path::kUnknown, Path::kMixed})
    if (ToString(p) == s) return p;
  return std::nullopt;
}

bool NamespacePolicy::Allows(Path p) const {
  if (p == Path::kNone || p == Path::kUnknown) return true;
  return std::find(allowed_paths.begin(), allowed_paths.end(), p) != allowed_paths.end();
}

const NamespacePolicy& Policy::ForNamespace(std::string_view ns) const {
  for (const auto& entry : namespaces)
    for (const auto& pattern : entry.names)
      if (GlobMatch(pattern, ns)) return entry;
  return defaults;
}

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Iterative matcher with single-star backtracking: linear enough for namespace names and
  // immune to pathological patterns.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace rw::policy
