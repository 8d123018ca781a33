#pragma once
// The server's life after start: policy and TLS files reloaded when they change (polled, so a
// Secret's `..data` swap is seen) or on SIGHUP; SIGTERM and SIGINT fail /readyz at once, keep
// serving for --shutdown-delay, then drain: no new connections, requests in flight finish, the
// io_context stops.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>

#include "listener.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/server/connections.h"
#include "rdma_webhook/server/file_watch.h"
#include "rdma_webhook/server/front.h"
#include "rdma_webhook/server/metrics.h"
#include "rdma_webhook/server/policy_reload.h"
#include "rdma_webhook/server/serve.h"
#include "tls.h"

namespace rw::server {

// The policy in `file`, or the embedded default when `file` is empty. Throws
// std::runtime_error naming the file and, for a policy error, the field.
std::shared_ptr<const policy::Policy> ReadPolicy(const std::string& file);

class Lifecycle {
 public:
  // Everything passed in outlives this. Reads the TLS files and hands the context to the
  // listener; throws std::runtime_error naming the file that cannot be used.
  Lifecycle(boost::asio::io_context& ioc, const ServeOptions& options, Front& front,
            Listener& listener, Connections& connections, Metrics& metrics);

  // Starts watching files and signals.
  void Start();

 private:
  boost::asio::awaitable<void> WatchFiles();
  boost::asio::awaitable<void> HandleSignals();
  boost::asio::awaitable<void> Drain();
  void ReloadTls(std::string_view trigger);

  boost::asio::io_context& ioc_;
  const ServeOptions& options_;
  Front& front_;
  Listener& listener_;
  Connections& connections_;
  Metrics& metrics_;
  boost::asio::strand<boost::asio::io_context::executor_type> control_;  // reloads, signals, drain
  boost::asio::signal_set signals_;
  TlsFiles tls_files_;
  PolicyReload policy_reload_;
  std::optional<FileWatch> tls_watch_;
};

}  // namespace rw::server
