// The pure half of the gids module: the recommendation and the two renderings.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

#include "rdma_webhook/gids/gid_table.h"

namespace rw::gids {
namespace {

constexpr std::string_view kEthernet = "Ethernet";

const Recommendation* FindRecommendation(const GidTable& table, const PortInfo& port) {
  for (const Recommendation& r : table.recommended) {
    if (r.device == port.device && r.port == port.port) return &r;
  }
  return nullptr;
}

const GidEntry* FindGid(const GidTable& table, const Recommendation& r) {
  for (const GidEntry& g : table.gids) {
    if (g.device == r.device && g.port == r.port && g.index == r.index) return &g;
  }
  return nullptr;
}

void AppendPadded(std::string& out, std::string_view cell, std::size_t width) {
  out += cell;
  out.append(width - cell.size() + 2, ' ');
}

}  // namespace

std::string MappedIpv4(const std::string& gid) {
  std::array<unsigned char, 16> bytes{};
  if (::inet_pton(AF_INET6, gid.c_str(), bytes.data()) != 1) return "";
  for (std::size_t i = 0; i < 10; ++i) {
    if (bytes[i] != 0) return "";
  }
  if (bytes[10] != 0xff || bytes[11] != 0xff) return "";
  return std::to_string(bytes[12]) + "." + std::to_string(bytes[13]) + "." +
         std::to_string(bytes[14]) + "." + std::to_string(bytes[15]);
}

std::string VersionColumn(const std::string& type) {
  if (type == "RoCE v2") return "v2";
  if (type == "IB/RoCE v1") return "v1";
  return "";
}

std::vector<Recommendation> Recommend(const std::vector<GidEntry>& gids,
                                      const std::vector<PortInfo>& ports) {
  std::vector<Recommendation> out;
  for (const PortInfo& port : ports) {
    if (port.link_layer != kEthernet) continue;
    const GidEntry* best = nullptr;
    for (const GidEntry& g : gids) {
      if (g.device != port.device || g.port != port.port) continue;
      if (g.type != "RoCE v2" || g.ipv4.empty()) continue;
      if (best == nullptr || g.index < best->index) best = &g;
    }
    if (best != nullptr) out.push_back({port.device, port.port, best->index});
  }
  return out;
}

std::string FormatText(const GidTable& table) {
  const std::array<std::string_view, 7> headers{"DEV",  "PORT", "INDEX", "GID",
                                                "IPv4", "VER",  "NETDEV"};
  std::vector<std::array<std::string, 7>> rows;
  rows.reserve(table.gids.size());
  for (const GidEntry& g : table.gids) {
    rows.push_back({g.device, std::to_string(g.port), std::to_string(g.index), g.gid, g.ipv4,
                    VersionColumn(g.type), g.netdev});
  }
  std::array<std::size_t, 7> width{};
  for (std::size_t c = 0; c < headers.size(); ++c) {
    width[c] = headers[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  auto emit_line = [&](auto cell_of) {
    std::string line;
    for (std::size_t c = 0; c < headers.size(); ++c) {
      if (c + 1 == headers.size()) {
        line += cell_of(c);
      } else {
        AppendPadded(line, cell_of(c), width[c]);
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit_line([&](std::size_t c) { return std::string(headers[c]); });
  emit_line([&](std::size_t c) { return std::string(headers[c].size(), '-'); });
  for (const auto& row : rows) emit_line([&](std::size_t c) { return row[c]; });
  out += "n_gids_found=" + std::to_string(table.gids.size()) + "\n";

  bool any_ethernet = false;
  for (const PortInfo& port : table.ports) {
    if (port.link_layer != kEthernet) continue;
    if (!any_ethernet) out += "\nRecommended NCCL_IB_GID_INDEX (RoCE v2, IPv4, lowest index):\n";
    any_ethernet = true;
    out += port.device + " port " + std::to_string(port.port) + ": ";
    const Recommendation* r = FindRecommendation(table, port);
    if (r == nullptr) {
      out += "none (no RoCE v2 GID with an IPv4 address)\n";
      continue;
    }
    out += std::to_string(r->index);
    if (const GidEntry* g = FindGid(table, *r)) {
      out += " (" + g->ipv4 + (g->netdev.empty() ? "" : " on " + g->netdev) + ")";
    }
    out += "\n";
  }
  return out;
}

nlohmann::json ToJson(const GidTable& table) {
  nlohmann::json gids = nlohmann::json::array();
  for (const GidEntry& g : table.gids) {
    gids.push_back({{"device", g.device},
                    {"port", g.port},
                    {"index", g.index},
                    {"gid", g.gid},
                    {"ipv4", g.ipv4},
                    {"type", g.type},
                    {"netdev", g.netdev}});
  }
  nlohmann::json recommended = nlohmann::json::array();
  for (const Recommendation& r : table.recommended) {
    recommended.push_back({{"device", r.device}, {"port", r.port}, {"index", r.index}});
  }
  return {{"gids", std::move(gids)}, {"recommended", std::move(recommended)}};
}

}  // namespace rw::gids
