#include "rdma_webhook/server/metrics.h"

#include <charconv>

#include "rdma_webhook/build_info.h"

namespace rw::server {
namespace {

std::string Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> labels) {
  std::string out;
  for (const auto& [name, value] : labels) {
    if (!out.empty()) out += ',';
    out += name;
    out += "=\"";
    out += EscapeLabelValue(value);
    out += '"';
  }
  return out;
}

// Shortest text that reads back as the same double: le="0.005", not 0.0050000000000000001.
std::string Number(double v) {
  char buf[400];  // fixed notation of a large sum is long
  const auto result = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, result.ptr);
}

void Head(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void Family(std::string& out, std::string_view name, std::string_view type, std::string_view help,
            const std::map<std::string, std::uint64_t>& series) {
  Head(out, name, type, help);
  for (const auto& [labels, value] : series) {
    out += name;
    out += '{' + labels + "} " + std::to_string(value) + '\n';
  }
}

void Gauges(std::string& out, std::string_view name, std::string_view help,
            const std::map<std::string, double>& series) {
  Head(out, name, "gauge", help);
  for (const auto& [labels, value] : series) {
    out += name;
    out += '{' + labels + "} " + Number(value) + '\n';
  }
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Metrics::Metrics() {
  // Reload series exist from the start so an alert on failures has a baseline.
  for (const char* what : {"policy", "tls"}) {
    for (const char* result : {"success", "failure"}) {
      reloads_[Labels({{"what", what}, {"result", result}})] = 0;
    }
  }
}

void Metrics::CountRequest(std::string_view endpoint, int code, double seconds) {
  const std::string key = Labels({{"endpoint", endpoint}, {"code", std::to_string(code)}});
  std::lock_guard lock(mu_);
  ++requests_[key];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++buckets_[i];
  }
  ++duration_count_;
  duration_sum_ += seconds;
}

void Metrics::CountDecision(std::string_view endpoint, std::string_view path, bool allowed) {
  const std::string key =
      Labels({{"endpoint", endpoint}, {"path", path}, {"allowed", allowed ? "true" : "false"}});
  std::lock_guard lock(mu_);
  ++decisions_[key];
}

void Metrics::CountFinding(std::string_view rule, std::string_view severity) {
  const std::string key = Labels({{"rule", rule}, {"severity", severity}});
  std::lock_guard lock(mu_);
  ++findings_[key];
}

void Metrics::CountReload(std::string_view what, bool ok) {
  const std::string key = Labels({{"what", what}, {"result", ok ? "success" : "failure"}});
  std::lock_guard lock(mu_);
  ++reloads_[key];
}

void Metrics::AddInflight(int delta) {
  std::lock_guard lock(mu_);
  inflight_ += delta;
}

void Metrics::SetOpenConnections(std::size_t open) {
  std::lock_guard lock(mu_);
  open_connections_ = open;
}

void Metrics::CountRefusedConnection() {
  std::lock_guard lock(mu_);
  ++refused_connections_;
}

void Metrics::CountConnectionError() {
  std::lock_guard lock(mu_);
  ++connection_errors_;
}

void Metrics::SetCertificateExpiry(std::int64_t not_after_unix_seconds) {
  std::lock_guard lock(mu_);
  certificate_not_after_ = not_after_unix_seconds;
}

void Metrics::SetWatchSynced(std::string_view resource, bool synced) {
  const std::string key = Labels({{"resource", resource}});
  std::lock_guard lock(mu_);
  watch_synced_[key] = synced ? 1 : 0;
}

void Metrics::SetWatchObjects(std::string_view resource, std::size_t objects) {
  const std::string key = Labels({{"resource", resource}});
  std::lock_guard lock(mu_);
  watch_objects_[key] = static_cast<double>(objects);
}

void Metrics::SetWatchLastEvent(std::string_view resource, double unix_seconds) {
  const std::string key = Labels({{"resource", resource}});
  std::lock_guard lock(mu_);
  watch_last_event_[key] = unix_seconds;
}

void Metrics::CountWatchList(std::string_view resource, std::string_view result) {
  const std::string key = Labels({{"resource", resource}, {"result", result}});
  std::lock_guard lock(mu_);
  ++watch_lists_[key];
}

void Metrics::CountWatchEvent(std::string_view resource, std::string_view type) {
  const std::string key = Labels({{"resource", resource}, {"type", type}});
  std::lock_guard lock(mu_);
  ++watch_events_[key];
}

void Metrics::CountWatchRestart(std::string_view resource, std::string_view reason) {
  const std::string key = Labels({{"resource", resource}, {"reason", reason}});
  std::lock_guard lock(mu_);
  ++watch_restarts_[key];
}

void Metrics::CountSnapshot(std::size_t objects) {
  std::lock_guard lock(mu_);
  ++snapshots_;
  snapshot_objects_ = objects;
}

std::string Metrics::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  Family(out, "rdma_webhook_requests_total", "counter", "HTTP requests on the TLS port.",
         requests_);
  out +=
      "# HELP rdma_webhook_request_duration_seconds Time from request headers read to response "
      "written.\n# TYPE rdma_webhook_request_duration_seconds histogram\n";
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    out += "rdma_webhook_request_duration_seconds_bucket{le=\"" + Number(kBuckets[i]) + "\"} " +
           std::to_string(buckets_[i]) + '\n';
  }
  out += "rdma_webhook_request_duration_seconds_bucket{le=\"+Inf\"} " +
         std::to_string(duration_count_) + '\n';
  out += "rdma_webhook_request_duration_seconds_sum " + Number(duration_sum_) + '\n';
  out += "rdma_webhook_request_duration_seconds_count " + std::to_string(duration_count_) + '\n';
  Family(out, "rdma_webhook_decisions_total", "counter", "Admission reviews answered.", decisions_);
  Family(out, "rdma_webhook_findings_total", "counter", "Findings reported in answers.", findings_);
  out +=
      "# HELP rdma_webhook_inflight_requests Requests being handled.\n# TYPE "
      "rdma_webhook_inflight_requests gauge\nrdma_webhook_inflight_requests " +
      std::to_string(inflight_) + '\n';
  out +=
      "# HELP rdma_webhook_open_connections TLS connections open.\n# TYPE "
      "rdma_webhook_open_connections gauge\nrdma_webhook_open_connections " +
      std::to_string(open_connections_) + '\n';
  out +=
      "# HELP rdma_webhook_connections_refused_total TLS connections closed at accept because "
      "--max-connections were open.\n# TYPE rdma_webhook_connections_refused_total counter\n"
      "rdma_webhook_connections_refused_total " +
      std::to_string(refused_connections_) + '\n';
  out +=
      "# HELP rdma_webhook_connection_errors_total Connections ended by an exception in the "
      "server's I/O code.\n# TYPE rdma_webhook_connection_errors_total counter\n"
      "rdma_webhook_connection_errors_total " +
      std::to_string(connection_errors_) + '\n';
  Family(out, "rdma_webhook_reloads_total", "counter", "Reloads of watched files.", reloads_);
  if (certificate_not_after_) {
    out +=
        "# HELP rdma_webhook_certificate_expiry_timestamp_seconds notAfter of the serving "
        "certificate in force, Unix seconds.\n# TYPE "
        "rdma_webhook_certificate_expiry_timestamp_seconds gauge\n"
        "rdma_webhook_certificate_expiry_timestamp_seconds " +
        std::to_string(*certificate_not_after_) + '\n';
  }
  if (!watch_synced_.empty()) {
    Gauges(out, "rdma_webhook_watch_synced",
           "1 once the resource's first LIST completed (and it is served and allowed).",
           watch_synced_);
    Gauges(out, "rdma_webhook_watch_objects", "Objects of the resource in the watch's store.",
           watch_objects_);
    Gauges(out, "rdma_webhook_watch_last_event_timestamp_seconds",
           "When the resource's last LIST or watch event came in, Unix seconds.",
           watch_last_event_);
    Family(out, "rdma_webhook_watch_lists_total", "counter", "LISTs of a resource, by result.",
           watch_lists_);
    Family(out, "rdma_webhook_watch_events_total", "counter", "Watch events, by type.",
           watch_events_);
    Family(out, "rdma_webhook_watch_restarts_total", "counter",
           "Watches of a resource that ended and were started again, by reason.", watch_restarts_);
    out +=
        "# HELP rdma_webhook_cluster_snapshots_total Snapshots of the cluster's objects "
        "published to the webhook.\n# TYPE rdma_webhook_cluster_snapshots_total counter\n"
        "rdma_webhook_cluster_snapshots_total " +
        std::to_string(snapshots_) +
        "\n# HELP rdma_webhook_cluster_snapshot_objects Objects in the snapshot in force.\n"
        "# TYPE rdma_webhook_cluster_snapshot_objects "
        "gauge\nrdma_webhook_cluster_snapshot_objects " +
        std::to_string(snapshot_objects_) + '\n';
  }
  out +=
      "# HELP rdma_webhook_build_info The running build.\n# TYPE rdma_webhook_build_info "
      "gauge\nrdma_webhook_build_info{version=\"" +
      EscapeLabelValue(build::kVersion) + "\"} 1\n";
  return out;
}

}  // namespace rw::server
