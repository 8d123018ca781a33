// A parsed `List` document becomes its items, each with its own repeated keys and positions,
// so a result points into its item and not into the List.
#include <set>
#include <string>
#include <utility>

#include "stream_parts.h"

namespace rw::codec {
namespace {

// The duplicates under `prefix` (a List item's pointer), rebased onto it; each source line and
// column once (an alias copying a mapping repeats its duplicates at every copy).
std::vector<DuplicateKey> DuplicatesUnder(const std::vector<DuplicateKey>& all,
                                          const std::string& prefix) {
  std::vector<DuplicateKey> out;
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const auto& d : all) {
    if (d.pointer.compare(0, prefix.size(), prefix) != 0) continue;
    if (d.pointer.size() > prefix.size() && d.pointer[prefix.size()] != '/') continue;
    if (!seen.insert({d.line, d.column}).second) continue;
    DuplicateKey rebased = d;
    rebased.pointer.erase(0, prefix.size());
    out.push_back(std::move(rebased));
  }
  return out;
}

// The positions under `prefix` (a List item's pointer), rebased onto it; the item's own
// position is its "".
PositionMap PositionsUnder(const PositionMap& all, const std::string& prefix) {
  PositionMap out;
  for (auto it = all.lower_bound(prefix); it != all.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    // "/items/1/..." sorts before "/items/10": the item's own pointers are one range.
    if (it->first.size() > prefix.size() && it->first[prefix.size()] != '/') {
      if (it->first[prefix.size()] > '/') break;
      continue;
    }
    out.emplace_hint(out.end(), it->first.substr(prefix.size()), it->second);
  }
  return out;
}

bool IsList(const nlohmann::json& value) {
  return value.is_object() && value.contains("kind") && value["kind"] == "List" &&
         value.contains("items") && value["items"].is_array();
}

}  // namespace

void EmitDocument(SourceDocument&& doc, const EntrySink& sink) {
  if (!doc.error.empty()) {
    sink({std::move(doc), std::nullopt});
    return;
  }
  if (!doc.value) return;  // an empty document: no result
  if (!IsList(*doc.value)) {
    doc.duplicate_keys = DuplicatesUnder(doc.duplicate_keys, "");
    sink({std::move(doc), std::nullopt});
    return;
  }
  // Duplicates outside the items (in the List's own fields) belong to no result.
  auto& items = (*doc.value)["items"];
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string prefix = "/items/" + std::to_string(i);
    StreamEntry entry;
    entry.doc.index = doc.index;
    entry.doc.line = doc.line;
    entry.doc.value = std::move(items[i]);
    entry.doc.duplicate_keys = DuplicatesUnder(doc.duplicate_keys, prefix);
    entry.doc.positions = PositionsUnder(doc.positions, prefix);
    entry.item = i;
    sink(std::move(entry));
  }
}

}  // namespace rw::codec
