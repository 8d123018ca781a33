#pragma once
// Parsing over a base policy whose global lists (gpuResources, resources.vf, resources.shared,
// rdmaNetworks) an omitted field takes. ParsePolicy's base is the embedded default; the
// embedded default itself is parsed over Policy{} (it writes every list), which breaks the
// cycle DefaultPolicy -> ParsePolicy -> DefaultPolicy.
#include <string_view>

#include <nlohmann/json.hpp>

#include "rdma_webhook/policy/policy.h"

namespace rw::policy {

Policy ParsePolicyOver(const nlohmann::json& document, const Policy& base);
Policy ParsePolicyTextOver(std::string_view text, const Policy& base);

}  // namespace rw::policy
