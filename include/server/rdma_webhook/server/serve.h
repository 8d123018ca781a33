#pragma once
// `rdma-webhook serve`: the admission webhook over HTTPS (docs/http.md). Beast, Asio
// and OpenSSL stay behind this header.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rdma_webhook/server/watch_options.h"

namespace rw::server {

struct ServeOptions {
  std::string tls_cert, tls_key, client_ca;
  std::string policy_file;  // empty = embedded default
  std::string listen = "0.0.0.0:8443";
  std::string probe_listen = "0.0.0.0:8080";
  unsigned threads = 0;  // 0 = one per core
  // An UPDATE review carries two objects of up to 3 MiB each (etcd's default request limit)
  // plus the review around them.
  std::size_t max_body_bytes = 7340032;
  // Open TLS connections at most; more are closed at accept and counted, so a flood of idle or
  // slow connections cannot take every descriptor. The API servers of a cluster keep far fewer
  // (one per concurrent review each). Lowered at start when RLIMIT_NOFILE cannot hold it.
  std::size_t max_connections = 1024;
  // What the requests in flight may hold in memory in all (memory_budget.h: each reserves 64
  // bytes per body byte plus 16 KiB from its head until its answer is written). A request that
  // does not fit waits for others to end, up to the header deadline, then is answered 503 and
  // closed; one alone always fits. 96 MiB leaves the chart's 256Mi limit room for 1024 idle
  // TLS connections (about 100 KiB each) and the process itself.
  std::size_t max_buffered_bytes = std::size_t{96} << 20;
  std::string log_format = "json", log_level = "info";
  std::chrono::milliseconds shutdown_delay{5000};

  // Deadlines. Idle is longer than Go's http.Transport IdleConnTimeout (90s) so the API
  // server, not us, closes an idle keep-alive connection and never races a request into it.
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds body_timeout{30000};
  std::chrono::milliseconds write_timeout{10000};
  std::chrono::milliseconds idle_timeout{120000};
  // How often watched policy and TLS files are compared with what is in force.
  std::chrono::milliseconds reload_interval{1000};

  // --watch-cluster: list and watch the cluster objects of watched_kinds.h.
  WatchOptions watch;
};

// Runs until SIGTERM or SIGINT has drained the server. Returns the process exit code: 0 after
// a drain, 2 when it could not start (the message on stderr names the file or address).
int Serve(const ServeOptions& options);

// "host:port", "[v6]:port" or ":port" (all addresses). Throws std::invalid_argument.
struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
};
ListenAddress ParseListenAddress(std::string_view text);

}  // namespace rw::server
