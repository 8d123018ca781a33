#include <algorithm>

#include <nlohmann/json.hpp>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           (c >= 'A' && c <= 'Z') || c == '_';
  });
}

bool IsDefault(const std::vector<std::string>& defaults, std::string_view name) {
  return std::find(defaults.begin(), defaults.end(), name) != defaults.end();
}

// Multus names an item without an interface net<N>, N its 1-based position among the
// non-default items; explicitly named items keep their place in that count.
void AssignDefaultInterfaces(std::vector<NetworkAttachment>& items) {
  std::size_t position = 0;
  for (auto& a : items) {
    if (a.default_network) continue;
    ++position;
    if (!a.explicit_interface) a.interface = "net" + std::to_string(position);
  }
}

}  // namespace

NetworksAnnotation NetworksAnnotation::Parse(std::string_view value, std::string_view pod_ns,
                                             const std::vector<std::string>& default_networks) {
  NetworksAnnotation out;
  value = Trim(value);
  if (value.empty()) return out;
  if (value.find_first_of("[{\"") != std::string_view::npos) {
    out.json_form = true;
    const auto parsed = nlohmann::json::parse(value, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_array()) {
      out.error = "the value looks like JSON but is not a JSON list of network selection objects";
      return out;
    }
    std::size_t i = 0;
    for (const auto& item : parsed) {
      NetworkAttachment a;
      a.item = i;
      if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
        out.error = "item " + std::to_string(i) + " has no string \"name\"";
        return out;
      }
      a.name = item["name"].get<std::string>();
      a.ns = std::string(pod_ns);
      if (item.contains("namespace")) {
        if (!item["namespace"].is_string()) {
          out.error = "item " + std::to_string(i) + ": \"namespace\" must be a string";
          return out;
        }
        if (!item["namespace"].get_ref<const std::string&>().empty())
          a.ns = item["namespace"].get<std::string>();
      }
      if (item.contains("interface")) {
        if (!item["interface"].is_string()) {
          out.error = "item " + std::to_string(i) + ": \"interface\" must be a string";
          return out;
        }
        a.interface = item["interface"].get<std::string>();
        a.explicit_interface = !a.interface.empty();
      }
      if (!ValidName(a.name)) {
        out.error = "item " + std::to_string(i) + ": invalid network name '" + a.name + "'";
        return out;
      }
      a.default_network = IsDefault(default_networks, a.name);
      out.attachments.push_back(std::move(a));
      ++i;
    }
    AssignDefaultInterfaces(out.attachments);
    return out;
  }
  std::size_t pos = 0, i = 0;
  while (pos <= value.size()) {
    std::size_t end = value.find(',', pos);
    if (end == std::string_view::npos) end = value.size();
    std::string_view item = Trim(value.substr(pos, end - pos));
    pos = end + 1;
    if (item.empty()) {
      out.error = "empty item in the network list";
      return out;
    }
    NetworkAttachment a;
    a.item = i++;
    a.ns = std::string(pod_ns);
    const std::size_t slash = item.find('/');
    if (slash != std::string_view::npos) {
      a.ns = std::string(item.substr(0, slash));
      item.remove_prefix(slash + 1);
    }
    const std::size_t at = item.find('@');
    if (at != std::string_view::npos) {
      a.interface = std::string(item.substr(at + 1));
      a.explicit_interface = true;
      item = item.substr(0, at);
    }
    a.name = std::string(item);
    if (!ValidName(a.name) || (slash != std::string_view::npos && !ValidName(a.ns)) ||
        (a.explicit_interface && !ValidName(a.interface)) ||
        a.interface.find_first_of("/@") != std::string::npos) {
      out.error =
          "item " + std::to_string(a.item) + " is not of the form [namespace/]name[@interface]";
      return out;
    }
    a.default_network = IsDefault(default_networks, a.name);
    out.attachments.push_back(std::move(a));
  }
  AssignDefaultInterfaces(out.attachments);
  return out;
}

std::string FormatAttachmentItem(const NetworkAttachment& a, std::string_view pod_ns) {
  std::string out;
  if (!a.ns.empty() && a.ns != pod_ns) out += a.ns + "/";
  out += a.name;
  if (a.explicit_interface) out += "@" + a.interface;
  return out;
}

}  // namespace rw::nccl
