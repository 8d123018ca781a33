#pragma once
// "did you mean ...?" for a mistyped command, rule id or policy field: the CLI and the policy
// loader both suggest with it.
#include <string>
#include <string_view>
#include <vector>

namespace rw::policy {

// The candidate closest to `typed` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours), if it is close enough to be a typo: at most 2 edits and fewer than half
// of `typed`'s length. Empty when none is.
std::string Closest(std::string_view typed, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for Closest's answer, or "" when there is none.
std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace rw::policy
