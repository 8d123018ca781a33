#pragma once
// The objects of one watched kind as the last LIST and the watch events since say they are: the
// reflector's store. Pure and single-threaded: the reflector that owns it is its only writer,
// and snapshots are copies.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/server/kube_protocol.h"

namespace rw::server {

class ObjectStore {
 public:
  // At most `max_objects` objects (--watch-max-objects): a LIST or an ADDED past it is refused,
  // so an API server serving without end cannot grow the process without end.
  explicit ObjectStore(std::size_t max_objects) : max_objects_(max_objects) {}

  // What a change did: kChanged (the snapshot must be rebuilt), kUnchanged (a BOOKMARK, a
  // DELETED of an object not held, a MODIFIED that changes nothing), kOverLimit (refused; the
  // store is as before).
  enum class Result { kChanged, kUnchanged, kOverLimit };

  // Every object becomes those of a complete LIST. Throws ProtocolError for an item without a
  // name; the store is unchanged then.
  Result Replace(std::vector<nlohmann::json> items);
  // One watch event (not ERROR, which the reflector handles).
  Result Apply(WatchEvent event);
  void Clear() { objects_.clear(); }

  std::size_t size() const { return objects_.size(); }
  const nlohmann::json* Find(const std::string& key) const;
  // Appends a copy of every object, in key order.
  void CopyTo(std::vector<nlohmann::json>& out) const;

 private:
  std::size_t max_objects_;
  std::map<std::string, nlohmann::json> objects_;
};

}  // namespace rw::server
