#include "quantity.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

namespace rw::workload {

// The API server takes any quantity of the grammar, however large (apimachinery's
// resource.ParseQuantity caps a binary-suffixed one at 2^63-1 and keeps a decimal one exact), so
// a large value is a count to cap, never an error: refusing it would deny a valid manifest.
long long SaturatedCount(double value) {
  if (std::isnan(value)) return 0;
  if (value >= static_cast<double>(kMaxQuantityCount)) return kMaxQuantityCount;
  if (value <= -static_cast<double>(kMaxQuantityCount)) return -kMaxQuantityCount;
  return static_cast<long long>(std::ceil(value));
}

std::optional<long long> ParseQuantityCount(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  static const std::pair<std::string_view, double> kSuffixes[] = {{"Ki", 1024.0},
                                                                  {"Mi", 1048576.0},
                                                                  {"Gi", 1073741824.0},
                                                                  {"Ti", 1099511627776.0},
                                                                  {"Pi", 1125899906842624.0},
                                                                  {"Ei", 1152921504606846976.0},
                                                                  {"m", 1e-3},
                                                                  {"k", 1e3},
                                                                  {"M", 1e6},
                                                                  {"G", 1e9},
                                                                  {"T", 1e12},
                                                                  {"P", 1e15},
                                                                  {"E", 1e18}};
  double scale = 1.0;
  std::string_view number = text;
  for (const auto& [suffix, factor] : kSuffixes) {
    if (number.size() > suffix.size() && number.substr(number.size() - suffix.size()) == suffix) {
      scale = factor;
      number.remove_suffix(suffix.size());
      break;
    }
  }
  // Digits, one optional dot, an optional exponent (only without a suffix): the quantity grammar.
  std::size_t i = (number[0] == '+' || number[0] == '-') ? 1 : 0;
  bool digits = false, dot = false;
  for (; i < number.size(); ++i) {
    const char c = number[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && scale == 1.0) {
      break;
    } else {
      return std::nullopt;
    }
  }
  if (!digits) return std::nullopt;
  if (i < number.size()) {  // exponent
    std::string_view exp = number.substr(i + 1);
    std::size_t j = (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) ? 1 : 0;
    if (j >= exp.size()) return std::nullopt;
    for (; j < exp.size(); ++j)
      if (exp[j] < '0' || exp[j] > '9') return std::nullopt;
  }
  // strtod, not std::stod: 1e400 and 1e-400 must not throw std::out_of_range (a 500 at the
  // webhook). An underflow reads as 0; an overflow is HUGE_VAL, which SaturatedCount caps.
  return SaturatedCount(std::strtod(std::string(number).c_str(), nullptr) * scale);
}

}  // namespace rw::workload
