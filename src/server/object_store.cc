#include "rdma_webhook/server/object_store.h"

#include <utility>

namespace rw::server {

ObjectStore::Result ObjectStore::Replace(std::vector<nlohmann::json> items) {
  if (items.size() > max_objects_) return Result::kOverLimit;
  std::map<std::string, nlohmann::json> next;
  for (auto& item : items) {
    std::string key = ObjectKey(item);
    next.insert_or_assign(std::move(key), std::move(item));
  }
  const bool same = next == objects_;
  objects_ = std::move(next);
  return same ? Result::kUnchanged : Result::kChanged;
}

ObjectStore::Result ObjectStore::Apply(WatchEvent event) {
  switch (event.type) {
    case EventType::kAdded:
    case EventType::kModified: {
      std::string key = ObjectKey(event.object);
      const auto it = objects_.find(key);
      if (it == objects_.end()) {
        if (objects_.size() >= max_objects_) return Result::kOverLimit;
        objects_.emplace(std::move(key), std::move(event.object));
        return Result::kChanged;
      }
      if (it->second == event.object) return Result::kUnchanged;
      it->second = std::move(event.object);
      return Result::kChanged;
    }
    case EventType::kDeleted:
      return objects_.erase(ObjectKey(event.object)) != 0 ? Result::kChanged : Result::kUnchanged;
    case EventType::kBookmark:
    case EventType::kError:
      break;
  }
  return Result::kUnchanged;
}

const nlohmann::json* ObjectStore::Find(const std::string& key) const {
  const auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

void ObjectStore::CopyTo(std::vector<nlohmann::json>& out) const {
  for (const auto& [key, object] : objects_) out.push_back(object);
}

}  // namespace rw::server
