// Namespace entries that can never apply: the first matching entry wins, so a name that an
// earlier entry already matches is dead in a later one. Said as warnings, never errors: the
// policy still means something, and it may be the user's intent during a migration.
#include <string>
#include <vector>

#include "rdma_webhook/policy/policy.h"

namespace rw::policy {
namespace {

bool HasWildcard(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

// True only when every namespace `later` matches is certainly matched by `earlier` too: the
// same pattern, `*`, a literal that `earlier` matches, or `earlier` = "<literal>*" and `later`
// starts with that literal. Other glob pairs are not reported (no warning on a guess).
bool Covers(const std::string& earlier, const std::string& later) {
  if (earlier == later || earlier == "*") return true;
  if (!HasWildcard(later)) return GlobMatch(earlier, later);
  const std::string_view prefix = std::string_view(earlier).substr(0, earlier.size() - 1);
  return !earlier.empty() && earlier.back() == '*' && !HasWildcard(prefix) &&
         later.compare(0, prefix.size(), prefix) == 0;
}

std::string Entry(std::size_t i) { return "namespaces[" + std::to_string(i) + "]"; }

}  // namespace

std::vector<std::string> ShadowedNamespaceEntries(const Policy& policy) {
  std::vector<std::string> warnings;
  const auto& entries = policy.namespaces;
  for (std::size_t j = 0; j < entries.size(); ++j) {
    std::size_t dead = 0;
    std::vector<std::string> found;
    for (std::size_t k = 0; k < entries[j].names.size(); ++k) {
      const std::string& name = entries[j].names[k];
      for (std::size_t i = 0; i < j; ++i) {
        const std::string* by = nullptr;
        for (const auto& earlier : entries[i].names)
          if (Covers(earlier, name)) by = &earlier;
        if (by == nullptr) continue;
        ++dead;
        found.push_back(Entry(j) + ".names[" + std::to_string(k) + "]: '" + name +
                        "' is matched first by " + Entry(i) + " ('" + *by +
                        "'), so this entry never applies to it");
        break;
      }
    }
    if (dead > 0 && dead == entries[j].names.size()) {
      warnings.push_back(Entry(j) +
                         ": never applies: every name it lists is matched by an earlier entry "
                         "(the first matching entry wins)");
    } else {
      warnings.insert(warnings.end(), found.begin(), found.end());
    }
  }
  return warnings;
}

}  // namespace rw::policy
