#include "rdma_webhook/policy/did_you_mean.h"

#include <algorithm>
#include <limits>

namespace rw::policy {
namespace {

// Optimal string alignment distance. The inputs are command names, rule ids and policy keys:
// Closest refuses any longer than 128 characters, so the quadratic table stays small.
std::size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string Closest(std::string_view typed, const std::vector<std::string>& candidates) {
  // A longer input than any name we have is no typo of one; it also bounds the table.
  constexpr std::size_t kLongest = 128;
  if (typed.empty() || typed.size() > kLongest) return "";
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    if (c.size() > kLongest) continue;
    const std::size_t distance = Distance(typed, c);
    if (distance < best_distance) {
      best = c;
      best_distance = distance;
    }
  }
  if (best_distance == 0 || best_distance > 2 || 2 * best_distance >= typed.size()) return "";
  return best;
}

std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::string closest = Closest(typed, candidates);
  return closest.empty() ? "" : " (did you mean '" + closest + "'?)";
}

}  // namespace rw::policy
