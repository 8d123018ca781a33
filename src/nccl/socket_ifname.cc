#include "rdma_webhook/nccl/grammar.h"

#include <algorithm>
#include <charconv>

namespace rw::nccl {
namespace {

std::vector<std::string_view> SplitComma(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t end = s.find(',', pos);
    if (end == std::string_view::npos) end = s.size();
    std::string_view item = s.substr(pos, end - pos);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    pos = end + 1;
  }
  return out;
}

}  // namespace

SocketIfname SocketIfname::Parse(std::string_view value) {
  SocketIfname spec;
  if (!value.empty() && value.front() == '^') {
    spec.exclude = true;
    value.remove_prefix(1);
  }
  // NCCL reads one `=` for the whole list (`=eth1,eth2`) but users also write it per item;
  // both mean exact matching of the items that carry it.
  bool list_exact = false;
  if (!value.empty() && value.front() == '=') {
    list_exact = true;
    value.remove_prefix(1);
  }
  for (std::string_view item : SplitComma(value)) {
    Item parsed;
    parsed.exact = list_exact;
    if (item.front() == '=') {
      parsed.exact = true;
      item.remove_prefix(1);
    }
    // NCCL's parseStringList (src/misc/utils.cc) reads `name:port:rail:plane` and matches the
    // name alone for sockets (port -1 matches any): eth1:0 selects eth1.
    item = item.substr(0, item.find(':'));
    parsed.name = std::string(item);
    if (!parsed.name.empty()) spec.items.push_back(std::move(parsed));
  }
  return spec;
}

bool SocketIfname::Names(std::string_view interface) const {
  return std::any_of(items.begin(), items.end(), [&](const Item& item) {
    return item.exact ? interface == item.name : interface.substr(0, item.name.size()) == item.name;
  });
}

bool SocketIfname::Selects(std::string_view interface) const {
  const bool matched = Names(interface);
  return exclude ? !matched : matched;
}

std::vector<std::string> SocketIfname::SelectedAmong(
    const std::vector<std::string>& interfaces) const {
  std::vector<std::string> out;
  for (const auto& i : interfaces)
    if (Selects(i)) out.push_back(i);
  return out;
}

}  // namespace rw::nccl
