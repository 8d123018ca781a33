#pragma once
// Kubernetes resource quantities, as far as counting devices needs them.
#include <optional>
#include <string_view>

#include "rdma_webhook/workload/workload.h"

namespace rw::workload {

// Rounds a quantity up to a whole count, capped at ±kMaxQuantityCount (workload.h).
long long SaturatedCount(double value);

// Parses "2", "1k", "500m", "1Ki", "1e3" and rounds up to a whole count, capped as
// SaturatedCount caps it; nullopt when the text is not a quantity.
std::optional<long long> ParseQuantityCount(std::string_view text);

}  // namespace rw::workload
