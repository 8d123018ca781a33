#include "format.h"

#include <algorithm>
#include <stdexcept>

namespace rw::cli {

using nlohmann::json;

const std::vector<const Format*>& Formats() {
  static const std::vector<const Format*> kByPosition = [] {
    auto rows = formats::FormatTable();
    std::sort(rows.begin(), rows.end(),
              [](const Format* a, const Format* b) { return a->position < b->position; });
    return rows;
  }();
  return kByPosition;
}

std::vector<std::string> FormatNames() {
  std::vector<std::string> names;
  for (const Format* f : Formats()) names.emplace_back(f->name);
  return names;
}

std::string FormatsHelp() {
  std::size_t width = 0;
  for (const Format* f : Formats()) width = std::max(width, f->name.size());
  std::string help = "output format:";
  for (const Format* f : Formats())
    help += "\n  " + std::string(f->name) + std::string(width - f->name.size() + 2, ' ') +
            std::string(f->help);
  return help;
}

const Format& FindFormat(std::string_view name) {
  for (const Format* f : Formats())
    if (f->name == name) return *f;
  throw std::logic_error("no output format '" + std::string(name) + "'");
}

json ClusterRunJson(const ClusterRun& run) {
  json namespaces = json::array();
  for (const auto& [ns, s] : run.namespaces)
    namespaces.push_back({{"namespace", ns},
                          {"objects", s.objects},
                          {"errors", s.errors},
                          {"warnings", s.warnings},
                          {"paths", s.paths}});
  json listed = json::array(), skipped = json::array();
  for (const auto& s : run.plan.served) listed.push_back(s.resource);
  for (const auto* k : run.plan.skipped)
    skipped.push_back(
        {{"group", k->group}, {"kind", k->kind}, {"reason", "not served by the cluster"}});
  return {{"namespaces", std::move(namespaces)},
          {"kinds", {{"listed", std::move(listed)}, {"skipped", std::move(skipped)}}},
          {"policy", run.policy}};
}

}  // namespace rw::cli
