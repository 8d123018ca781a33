// `rdma-webhook serve`: the server's parts wired together. What each part does is in its own
// file: listener (ports, accept), sessions (TLS and probe connections), front (what a request
// is answered), admission log, connections (limit and drain), lifecycle (reload, signals, drain).
#include "rdma_webhook/server/serve.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "cluster_watch.h"
#include "lifecycle.h"
#include "listener.h"
#include "rdma_webhook/server/connections.h"
#include "rdma_webhook/server/front.h"
#include "rdma_webhook/server/log.h"
#include "rdma_webhook/server/memory_budget.h"
#include "rdma_webhook/server/metrics.h"
#include "sessions.h"

namespace rw::server {
namespace {

using log::Level;

unsigned ThreadsFor(const ServeOptions& options) {
  return options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
}

// Constructing it reads the policy and TLS files and binds both ports, in that order: every
// startup error is thrown from the constructor, naming the file or address.
class Server {
 public:
  explicit Server(const ServeOptions& options)
      : options_(options),
        threads_(ThreadsFor(options)),
        connections_(FitConnectionLimit(options.max_connections), metrics_),
        front_(options.max_body_bytes, ReadPolicy(options.policy_file), metrics_),
        budget_(options.max_buffered_bytes),
        sessions_{options_, front_, metrics_, connections_, budget_, probe_connections_},
        ioc_(static_cast<int>(threads_)),
        listener_(ioc_, sessions_),
        lifecycle_(ioc_, options_, front_, listener_, connections_, metrics_) {
    if (options_.watch.enabled) {
      watch_.emplace(
          options_.watch, Env::Default(), metrics_,
          [this](std::shared_ptr<const catalogue::Catalogue> catalogue) {
            front_.UseCatalogue(std::move(catalogue));
          },
          [this] { front_.MarkReady(); });
    }
    listener_.Open();
  }

  // Serves until the drain stops the io_context; returns the exit code.
  int Run();

 private:
  // One thread's share of the io_context. A handler that throws (a Beast composed operation
  // calling code that throws, such as its fields on an oversized line) unwinds out of run():
  // uncaught on a pool thread that is std::terminate, SIGABRT for every connection. Caught
  // here, only the connection whose handler threw ends (its coroutine is destroyed with the
  // handler, closing its socket); it is counted and logged, and the thread runs on.
  void RunLoop();

  // What sessions refer to comes before ioc_: destroying ioc_ destroys the sessions it still
  // holds (after a drain deadline), and their slots and guards reach back into these.
  const ServeOptions options_;
  const unsigned threads_;
  Metrics metrics_;
  Connections connections_;
  Front front_;
  MemoryBudget budget_;
  std::atomic<std::size_t> probe_connections_{0};
  const SessionContext sessions_;
  boost::asio::io_context ioc_;
  Listener listener_;
  Lifecycle lifecycle_;
  // After ioc_: it holds a strand of it (cluster_watch.h).
  std::optional<ClusterWatch> watch_;
};

void Server::RunLoop() {
  for (;;) {
    try {
      ioc_.run();
      return;
    } catch (const std::exception& e) {
      metrics_.CountConnectionError();
      log::Event(Level::kError, "a connection's I/O threw; connection closed",
                 {{"error", e.what()}});
    } catch (...) {
      metrics_.CountConnectionError();
      log::Event(Level::kError, "a connection's I/O threw; connection closed",
                 {{"error", "unknown exception"}});
    }
  }
}

int Server::Run() {
  listener_.Start();
  lifecycle_.Start();
  // With the watch, /readyz waits for the first LIST of every kind (or its timeout).
  if (watch_) {
    watch_->Start(ioc_);
  } else {
    front_.MarkReady();
  }
  if (connections_.limit() < options_.max_connections) {
    log::Event(Level::kWarn, "--max-connections lowered to what the descriptor limit allows",
               {{"requested", options_.max_connections},
                {"maxConnections", connections_.limit()},
                {"maxBufferedBytes", budget_.capacity()},
                {"descriptorHeadroom", kDescriptorHeadroom}});
  }
  log::Event(Level::kInfo, "serving",
             {{"listen", listener_.TlsAddress()},
              {"probeListen", listener_.ProbeAddress()},
              {"threads", threads_},
              {"maxConnections", connections_.limit()},
              {"maxBufferedBytes", budget_.capacity()},
              {"policy", options_.policy_file.empty() ? "embedded default" : options_.policy_file},
              {"policyHash", front_.policy()->hash},
              {"clientCertificates", !options_.client_ca.empty()},
              {"watchCluster", options_.watch.enabled}});
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads_; ++i) pool.emplace_back([this] { RunLoop(); });
  RunLoop();
  for (auto& t : pool) t.join();
  log::Event(Level::kInfo, "stopped");
  return 0;
}

}  // namespace

int Serve(const ServeOptions& options) {
  try {
    log::Setup(options.log_format, options.log_level);
  } catch (const std::exception& e) {
    std::cerr << "rdma-webhook serve: " << e.what() << '\n';
    return 2;
  }
  // A client that vanishes mid-write must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<Server> server;
  try {
    server = std::make_unique<Server>(options);
  } catch (const std::exception& e) {
    log::Event(Level::kError, "cannot start", {{"error", e.what()}});
    return 2;
  }
  try {
    return server->Run();
  } catch (const std::exception& e) {
    log::Event(Level::kError, "server failed", {{"error", e.what()}});
    return 1;
  }
}

}  // namespace rw::server
