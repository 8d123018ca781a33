#pragma once
// The Prometheus metrics of docs/http.md#metrics, rendered in the text exposition format.
// Thread-safe; counting is a short critical section, small next to a review.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace rw::server {

class Metrics {
 public:
  // Upper bounds of rdma_webhook_request_duration_seconds: a review takes well under a
  // millisecond of our time, so the buckets start at 100µs.
  static constexpr std::array<double, 14> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};

  Metrics();

  void CountRequest(std::string_view endpoint, int code, double seconds);
  void CountDecision(std::string_view endpoint, std::string_view path, bool allowed);
  void CountFinding(std::string_view rule, std::string_view severity);
  void CountReload(std::string_view what, bool ok);
  void AddInflight(int delta);
  // TLS connections: how many are open now, and how many were closed at accept because
  // --max-connections were open (a flood, or a client leaking connections).
  void SetOpenConnections(std::size_t open);
  void CountRefusedConnection();
  // A connection ended by an exception in the server's own I/O code rather than by an error
  // code: a bug to report, never a reason for the process to end.
  void CountConnectionError();
  // The serving certificate's notAfter, Unix seconds: set at startup and on every successful
  // TLS reload. Until set, rdma_webhook_certificate_expiry_timestamp_seconds is not rendered
  // (absent, not 0, so an expiry alert cannot fire on a process that has no certificate yet).
  void SetCertificateExpiry(std::int64_t not_after_unix_seconds);

  // The cluster watch, per resource ("deviceclasses.resource.k8s.io"); nothing of it is
  // rendered while no watch runs. Synced: its first LIST completed and the kind is served and
  // allowed. Objects: what its store holds. The last event: when a LIST or a watch event
  // (bookmarks included) last came in, Unix seconds.
  void SetWatchSynced(std::string_view resource, bool synced);
  void SetWatchObjects(std::string_view resource, std::size_t objects);
  void SetWatchLastEvent(std::string_view resource, double unix_seconds);
  // result: ok, absent (404), forbidden (403), gone (410 on a page), error.
  void CountWatchList(std::string_view resource, std::string_view result);
  // type: added, modified, deleted, bookmark, error.
  void CountWatchEvent(std::string_view resource, std::string_view type);
  // A watch ended and the reflector watches again or lists again. reason: eof (the API server
  // closed the stream: its timeoutSeconds, or a shutdown), gone (410 Gone: lists again), error
  // (a broken connection, an error answer or ERROR event, a line that cannot be read).
  void CountWatchRestart(std::string_view resource, std::string_view reason);
  // The webhook's snapshot of the cluster was rebuilt.
  void CountSnapshot(std::size_t objects);

  std::string Render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::uint64_t> requests_, decisions_, findings_, reloads_;
  std::array<std::uint64_t, kBuckets.size()> buckets_{};
  std::uint64_t duration_count_ = 0;
  double duration_sum_ = 0;
  long long inflight_ = 0;
  std::size_t open_connections_ = 0;
  std::uint64_t refused_connections_ = 0;
  std::uint64_t connection_errors_ = 0;
  std::optional<std::int64_t> certificate_not_after_;
  std::map<std::string, double> watch_synced_, watch_objects_, watch_last_event_;
  std::map<std::string, std::uint64_t> watch_lists_, watch_events_, watch_restarts_;
  std::uint64_t snapshots_ = 0;
  std::size_t snapshot_objects_ = 0;
};

// Escapes a label value for the text format (backslash, quote, newline).
std::string EscapeLabelValue(std::string_view value);

}  // namespace rw::server
