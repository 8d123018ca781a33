#pragma once
// The server's HTTPS client of the Kubernetes API server, over the same Beast, Asio and OpenSSL
// as its listener: one GET per connection, the ServiceAccount token and the CA bundle read from
// their files for every connection (so a rotated token or CA is used from the next request on),
// every read under a deadline and a size bound.
#include <chrono>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "rdma_webhook/server/env.h"
#include "rdma_webhook/server/kube_protocol.h"
#include "rdma_webhook/server/watch_options.h"

namespace rw::server {

// A request that got no complete answer. what() says why in a sentence for the log.
class KubeError : public std::runtime_error {
 public:
  // kConnect: no connection, TLS failed, the connection broke or a deadline passed.
  // kTooLarge: the answer was over its bound. kSetup: the CA or token file cannot be used.
  enum class Kind { kConnect, kTooLarge, kSetup };
  KubeError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Header fields of an answer, together, at most this long (the API server sends a few hundred
// bytes).
inline constexpr std::size_t kMaxAnswerHeaderBytes = 64 * 1024;
// The body of an answer that is not 200 OK on a watch (a Status object) is read up to this.
inline constexpr std::size_t kMaxStatusBodyBytes = 64 * 1024;

struct KubeAnswer {
  int status = 0;
  std::string body;  // the body of a GET; of a watch only when status is not 200
};

class KubeClient {
 public:
  // `env` reads the token and CA files; it outlives the client.
  KubeClient(ApiServerEndpoint endpoint, Env& env);

  // GET `target`; the body is at most `max_body` bytes (KubeError kTooLarge past it); everything
  // within `deadline`. Throws KubeError.
  boost::asio::awaitable<KubeAnswer> Get(std::string target, std::size_t max_body,
                                         std::chrono::milliseconds deadline);

  // GET a watch `target`. On 200 every line of the stream goes to `on_line`, split by
  // `lines` (KubeError kTooLarge for a line past its bound), until the server ends the stream,
  // `on_line` returns false, or `deadline` passes (a KubeError kConnect, as a broken stream).
  // Any other status is returned with its body (at most kMaxStatusBodyBytes).
  boost::asio::awaitable<KubeAnswer> Watch(std::string target, LineSplitter& lines,
                                           std::chrono::milliseconds deadline,
                                           const std::function<bool(std::string_view)>& on_line);

  const ApiServerEndpoint& endpoint() const { return endpoint_; }

 private:
  ApiServerEndpoint endpoint_;
  Env& env_;
};

}  // namespace rw::server
