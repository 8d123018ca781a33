#pragma once
// What the Kubernetes API server sends a list+watch client, read without I/O: one LIST page,
// one watch event line, the Status of an answer that is not 200, and the splitting of a watch
// stream into lines under a bound. The reflector (reflector.h) drives them over the network.
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/server/watched_kinds.h"

namespace rw::server {

// The API server sent something that is not what its API says. what() names the field.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ListPage {
  std::vector<nlohmann::json>
      items;                     // each with apiVersion and kind set (a LIST's items may lack them)
  std::string resource_version;  // metadata.resourceVersion: where the watch starts
  std::string continue_token;    // metadata.continue: empty on the last page
};
// A `<Kind>List` body for `kind`. Throws ProtocolError.
ListPage ParseListPage(std::string_view body, const WatchedKind& kind);

enum class EventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  EventType type = EventType::kError;
  nlohmann::json object;         // ADDED, MODIFIED, DELETED: the object (apiVersion, kind set)
  std::string resource_version;  // the object's metadata.resourceVersion (also of a BOOKMARK)
  int code = 0;                  // ERROR: the Status's code (410: the resourceVersion is too old)
  std::string message;           // ERROR: the Status's message
};
// One line of a watch stream, `{"type": ..., "object": ...}`. Throws ProtocolError.
WatchEvent ParseWatchEvent(std::string_view line, const WatchedKind& kind);

// The `code` and `message` of a metav1.Status body (what a 403, 404 or 410 carries); nullopt when
// the body is not one.
struct StatusBody {
  int code = 0;
  std::string reason, message;
};
std::optional<StatusBody> ParseStatus(std::string_view body);

// "namespace/name", or "name" for a cluster-scoped object: the store's key. Throws
// ProtocolError when metadata.name is missing.
std::string ObjectKey(const nlohmann::json& object);

// Splits a byte stream into lines ('\n'; a '\r' before it is dropped), none longer than
// `max_line` bytes. Empty lines are skipped.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line) : max_line_(max_line) {}
  // Calls on_line for every line `data` completes. Returns false, keeping nothing, as soon as a
  // line grows past the bound; the stream cannot be read further.
  bool Feed(std::string_view data, const std::function<void(std::string_view)>& on_line);
  std::size_t pending() const { return partial_.size(); }

 private:
  std::size_t max_line_;
  std::string partial_;
};

}  // namespace rw::server
