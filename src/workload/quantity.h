#pragma once
// Kubernetes resource quantities, as far as counting devices needs them.
#include <optional>
#include <string_view>

namespace rw::workload {

// Parses "2", "1k", "500m", "1Ki", "1e3" and rounds up to a whole count; nullopt when the text
// is not a quantity.
std::optional<long long> ParseQuantityCount(std::string_view text);

}  // namespace rw::workload
