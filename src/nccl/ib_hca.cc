// NCCL_IB_HCA (grammar.h): the `^` and `=` prefixes and the `name[:port]` items NCCL's IB
// transport reads.
#include <cctype>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {

IbHca IbHca::Parse(std::string_view value) {
  IbHca out;
  if (!value.empty() && value.front() == '^') {
    out.exclude = true;
    value.remove_prefix(1);
  }
  if (!value.empty() && value.front() == '=') {
    out.exact = true;
    value.remove_prefix(1);
  }
  while (!value.empty() && out.items.size() < kMaxItems) {
    const std::size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (item.empty()) continue;
    Item parsed;
    const std::size_t colon = item.find(':');
    parsed.name = std::string(item.substr(0, colon));
    if (colon != std::string_view::npos) parsed.port = std::string(item.substr(colon + 1));
    if (!parsed.name.empty()) out.items.push_back(std::move(parsed));
  }
  return out;
}

bool IbHca::NamesParticularDevices() const {
  if (exclude || items.empty()) return false;
  if (exact) return true;
  // A device's number follows the last `_` of its name (mlx5_0, bnxt_re0, efa_0); a name
  // without one is a driver's family (mlx5, ibp), whatever digits it holds.
  for (const auto& item : items) {
    const std::size_t underscore = item.name.rfind('_');
    if (underscore != std::string::npos && underscore + 1 < item.name.size() &&
        std::isdigit(static_cast<unsigned char>(item.name.back())))
      return true;
  }
  return false;
}

}  // namespace rw::nccl
