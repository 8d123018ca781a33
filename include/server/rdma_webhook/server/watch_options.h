#pragma once
// How `serve --watch-cluster` reaches the API server and the bounds of what it accepts from it
// (docs/http.md#the-cluster-watch). Pure: parsing the flags' and the environment's values, and
// the retry schedule.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace rw::server {

struct WatchOptions {
  bool enabled = false;  // --watch-cluster
  // --kube-api-server https://host[:port]; empty: in-cluster (KUBERNETES_SERVICE_HOST/_PORT).
  std::string api_server;
  // --kube-ca, --kube-token-file; empty: the ServiceAccount's mounted files.
  std::string ca_file, token_file;

  // timeoutSeconds of a WATCH: the API server ends it then and the reflector watches again from
  // where it was (client-go picks 5 to 10 minutes; each watch here draws from [t, 2t)).
  std::chrono::seconds watch_timeout{300};
  // /readyz waits at most this long for the first LIST of every kind (--watch-ready-timeout).
  std::chrono::milliseconds ready_timeout{30000};
  // A kind the API server does not serve (404: its CRD is not installed) or that RBAC forbids
  // (403) is asked for again after this long (--watch-absent-retry). A kind that was listed
  // keeps its objects through a refusal shorter than this (a restarted API server's first
  // moment).
  std::chrono::milliseconds absent_retry{60000};
  // Connection errors and other failures: exponential backoff from `backoff_initial` doubling
  // up to `backoff_max`, each wait drawn from [d/2, d) (client-go: 800 ms, 30 s).
  std::chrono::milliseconds backoff_initial{800};
  std::chrono::milliseconds backoff_max{30000};
  // Events are gathered this long before the snapshot the webhook reads is rebuilt.
  std::chrono::milliseconds debounce{250};

  // Bounds on what the API server sends; past each the answer is dropped, logged and retried,
  // and the memory it would have taken is never allocated.
  // One watch event line, that is one object (etcd refuses objects over 1.5 MiB by default).
  std::size_t max_object_bytes = std::size_t{4} << 20;  // --watch-max-object-bytes
  // One LIST page body (`limit=page_size` objects).
  std::size_t max_list_bytes = std::size_t{64} << 20;  // --watch-max-list-bytes
  std::size_t page_size = 500;                         // client-go's page size
  // Objects held per kind (--watch-max-objects).
  std::size_t max_objects = 50000;
};

// Where the API server is and how to trust it and prove who we are.
struct ApiServerEndpoint {
  std::string host;  // a name or an address, without brackets
  std::string port;
  std::string ca_file;
  std::string token_file;
  std::string Url() const;  // https://host:port, brackets around an IPv6 address
};

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// "https://host[:port]" (port 443 when absent; "[::1]:6443" for IPv6). Throws
// std::invalid_argument naming --kube-api-server.
ApiServerEndpoint ParseApiServerUrl(std::string_view url);

// The endpoint of `options`, or in-cluster from `getenv` (KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT) and the ServiceAccount's token and CA files. Throws
// std::invalid_argument naming the missing variable or flag.
ApiServerEndpoint ResolveApiServer(const WatchOptions& options,
                                   const std::function<const char*(const char*)>& getenv);

// The wait before retry number `attempt` (0 first): min(max, initial * 2^attempt) scaled by
// 0.5 + unit_random / 2, unit_random in [0, 1).
std::chrono::milliseconds BackoffDelay(unsigned attempt, std::chrono::milliseconds initial,
                                       std::chrono::milliseconds max, double unit_random);

}  // namespace rw::server
