#pragma once
// What the cluster watch hands the webhook: an immutable copy of every watched object, and
// which kinds were listed at all (a kind not served or not allowed is absent, so "no such
// object" is never concluded from a list that was never made).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::server {

struct ClusterSnapshot {
  std::vector<nlohmann::json> objects;  // as the API server sent them, managedFields dropped
  std::vector<std::string> listed;      // WatchedKind::Name() of every kind listed
};

}  // namespace rw::server
