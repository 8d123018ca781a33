#include "rdma_webhook/server/kube_protocol.h"

#include <utility>

namespace rw::server {
namespace {

nlohmann::json ParseJson(std::string_view text, std::string_view what) {
  // No exceptions from the parser: a broken answer is a ProtocolError naming what it was.
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw ProtocolError(std::string(what) + " is not JSON");
  return j;
}

std::string StringAt(const nlohmann::json& object, std::string_view member) {
  if (!object.is_object()) return {};
  const auto it = object.find(member);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string ResourceVersionOf(const nlohmann::json& object) {
  const auto meta = object.find("metadata");
  return meta == object.end() ? std::string() : StringAt(*meta, "resourceVersion");
}

// Items of a LIST of built-in types carry no apiVersion and kind; the catalogue reads both.
void Identify(nlohmann::json& object, const WatchedKind& kind) {
  if (!object.contains("apiVersion")) object["apiVersion"] = kind.ApiVersion();
  if (!object.contains("kind")) object["kind"] = std::string(kind.kind);
}

// managedFields is the server-side-apply bookkeeping: often the largest part of an object and
// never read by a rule, so it is not kept (client-go's informers offer the same transform).
void Slim(nlohmann::json& object) {
  const auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object()) meta->erase("managedFields");
}

}  // namespace

ListPage ParseListPage(std::string_view body, const WatchedKind& kind) {
  nlohmann::json list = ParseJson(body, "the LIST answer of " + kind.Name());
  if (!list.is_object()) throw ProtocolError("the LIST answer of " + kind.Name() + " is no object");
  ListPage page;
  const auto meta = list.find("metadata");
  if (meta != list.end()) {
    page.resource_version = StringAt(*meta, "resourceVersion");
    page.continue_token = StringAt(*meta, "continue");
  }
  if (page.resource_version.empty()) {
    throw ProtocolError("the LIST answer of " + kind.Name() + " has no metadata.resourceVersion");
  }
  const auto items = list.find("items");
  if (items == list.end() || items->is_null()) return page;  // an empty list may say null
  if (!items->is_array()) {
    throw ProtocolError("the LIST answer of " + kind.Name() + ": items is no array");
  }
  page.items.reserve(items->size());
  for (auto& item : *items) {
    if (!item.is_object()) {
      throw ProtocolError("the LIST answer of " + kind.Name() + ": an item is no object");
    }
    Identify(item, kind);
    Slim(item);
    page.items.push_back(std::move(item));
  }
  return page;
}

WatchEvent ParseWatchEvent(std::string_view line, const WatchedKind& kind) {
  const std::string what = "a watch event of " + kind.Name();
  nlohmann::json event = ParseJson(line, what);
  const std::string type = StringAt(event, "type");
  WatchEvent out;
  if (type == "ADDED") {
    out.type = EventType::kAdded;
  } else if (type == "MODIFIED") {
    out.type = EventType::kModified;
  } else if (type == "DELETED") {
    out.type = EventType::kDeleted;
  } else if (type == "BOOKMARK") {
    out.type = EventType::kBookmark;
  } else if (type == "ERROR") {
    out.type = EventType::kError;
  } else {
    throw ProtocolError(what + " has type '" + type + "'");
  }
  const auto object = event.find("object");
  if (object == event.end() || !object->is_object()) throw ProtocolError(what + " has no object");
  if (out.type == EventType::kError) {
    if (object->contains("code") && (*object)["code"].is_number_integer()) {
      out.code = (*object)["code"].get<int>();
    }
    out.message = StringAt(*object, "message");
    return out;
  }
  out.resource_version = ResourceVersionOf(*object);
  if (out.resource_version.empty()) {
    throw ProtocolError(what + " (" + type + ") has no metadata.resourceVersion");
  }
  if (out.type != EventType::kBookmark) {
    out.object = std::move(*object);
    Identify(out.object, kind);
    Slim(out.object);
    ObjectKey(out.object);  // refuses an object without a name here, not in the store
  }
  return out;
}

std::optional<StatusBody> ParseStatus(std::string_view body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || StringAt(j, "kind") != "Status") return std::nullopt;
  StatusBody status;
  if (j.contains("code") && j["code"].is_number_integer()) status.code = j["code"].get<int>();
  status.reason = StringAt(j, "reason");
  status.message = StringAt(j, "message");
  return status;
}

std::string ObjectKey(const nlohmann::json& object) {
  const auto meta = object.find("metadata");
  const std::string name = meta == object.end() ? std::string() : StringAt(*meta, "name");
  if (name.empty()) throw ProtocolError("an object without metadata.name");
  const std::string ns = StringAt(*meta, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

bool LineSplitter::Feed(std::string_view data,
                        const std::function<void(std::string_view)>& on_line) {
  while (!data.empty()) {
    const auto newline = data.find('\n');
    const std::string_view part = data.substr(0, newline);
    if (partial_.size() + part.size() > max_line_) {
      partial_.clear();
      partial_.shrink_to_fit();
      return false;
    }
    if (newline == std::string_view::npos) {
      partial_.append(part);
      return true;
    }
    data.remove_prefix(newline + 1);
    std::string_view line = part;
    if (!partial_.empty()) {
      partial_.append(part);
      line = partial_;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) on_line(line);
    partial_.clear();
  }
  return true;
}

}  // namespace rw::server
