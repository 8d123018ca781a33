#include "lifecycle.h"

#include <csignal>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rdma_webhook/server/log.h"
#include "rdma_webhook/server/policy_loader.h"

namespace rw::server {
namespace {

namespace net = boost::asio;
using Clock = std::chrono::steady_clock;
using log::Level;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);

}  // namespace

std::shared_ptr<const policy::Policy> ReadPolicy(const std::string& file) {
  PolicyLoad load = LoadPolicy(Env::Default(), file, FileKinds::kRegularOnly);
  if (load.error) throw std::runtime_error("policy " + load.error->Message());
  return std::move(load.policy);
}

Lifecycle::Lifecycle(net::io_context& ioc, const ServeOptions& options, Front& front,
                     Listener& listener, Connections& connections, Metrics& metrics)
    : ioc_(ioc),
      options_(options),
      front_(front),
      listener_(listener),
      connections_(connections),
      metrics_(metrics),
      control_(net::make_strand(ioc)),
      signals_(ioc, SIGINT, SIGTERM, SIGHUP),
      tls_files_{options.tls_cert, options.tls_key, options.client_ca},
      policy_reload_(Env::Default(), options.policy_file, front, metrics) {
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    throw std::runtime_error("--tls-cert and --tls-key are required");
  }
  TlsLoad tls = LoadTls(tls_files_, Env::Default());
  metrics_.SetCertificateExpiry(tls.not_after);
  listener_.UseTls(std::move(tls.context));
  std::vector<std::string> watched{tls_files_.cert, tls_files_.key};
  if (!tls_files_.client_ca.empty()) watched.push_back(tls_files_.client_ca);
  tls_watch_.emplace(std::move(watched));
}

void Lifecycle::Start() {
  net::co_spawn(control_, WatchFiles(), net::detached);
  net::co_spawn(control_, HandleSignals(), net::detached);
}

void Lifecycle::ReloadTls(std::string_view trigger) {
  try {
    TlsLoad tls = LoadTls(tls_files_, Env::Default());
    listener_.UseTls(std::move(tls.context));
    metrics_.SetCertificateExpiry(tls.not_after);
    metrics_.CountReload("tls", true);
    log::Event(Level::kInfo, "TLS certificate reloaded",
               {{"cert", tls_files_.cert}, {"key", tls_files_.key}, {"trigger", trigger}});
  } catch (const std::exception& e) {
    metrics_.CountReload("tls", false);
    log::Event(Level::kError, "TLS reload failed; the previous certificate stays in force",
               {{"cert", tls_files_.cert},
                {"key", tls_files_.key},
                {"trigger", trigger},
                {"error", e.what()}});
  }
}

net::awaitable<void> Lifecycle::WatchFiles() {
  net::steady_timer timer(control_);
  for (;;) {
    timer.expires_after(options_.reload_interval);
    auto [ec] = co_await timer.async_wait(kTuple);
    if (ec) co_return;
    policy_reload_.Poll();
    if (tls_watch_ && tls_watch_->Changed()) ReloadTls("file changed");
  }
}

net::awaitable<void> Lifecycle::HandleSignals() {
  for (;;) {
    auto [ec, signal] = co_await signals_.async_wait(kTuple);
    if (ec) co_return;
    if (signal == SIGHUP) {
      policy_reload_.Reload("SIGHUP");
      ReloadTls("SIGHUP");
      continue;
    }
    if (front_.MarkTerminating()) continue;
    log::Event(Level::kInfo, "shutting down: not ready; serving until the delay ends",
               {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"},
                {"delaySeconds", std::chrono::duration<double>(options_.shutdown_delay).count()}});
    net::co_spawn(control_, Drain(), net::detached);
  }
}

net::awaitable<void> Lifecycle::Drain() {
  // The API server keeps using open connections until the endpoint removal reaches it.
  net::steady_timer timer(control_);
  timer.expires_after(options_.shutdown_delay);
  co_await timer.async_wait(kTuple);
  listener_.CloseTls();
  const std::size_t open = connections_.StartDrain();
  log::Event(Level::kInfo, "draining: no new connections; finishing requests in flight",
             {{"openConnections", open}});
  // A request in flight has at most the body and write deadlines left.
  const auto deadline = Clock::now() + options_.header_timeout + options_.body_timeout +
                        options_.write_timeout + kTlsShutdownTime;
  while (connections_.open() != 0) {
    if (Clock::now() > deadline) {
      log::Event(Level::kWarn, "drain deadline passed; closing remaining connections");
      break;
    }
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(kTuple);
  }
  ioc_.stop();
}

}  // namespace rw::server
