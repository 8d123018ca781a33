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

namespace rw::server {
namespace {

namespace net = boost::asio;
using Clock = std::chrono::steady_clock;
using log::Level;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);

}  // namespace

std::shared_ptr<const policy::Policy> ReadPolicy(const std::string& file) {
  if (file.empty()) return std::make_shared<const policy::Policy>(policy::DefaultPolicy());
  try {
    return std::make_shared<const policy::Policy>(policy::ParsePolicyText(ReadFile(file)));
  } catch (const policy::PolicyError& e) {
    throw std::runtime_error("policy " + file + ": " + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error("policy " + std::string(e.what()));
  }
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
      tls_files_{options.tls_cert, options.tls_key, options.client_ca} {
  if (!options.policy_file.empty()) {
    policy_watch_.emplace(std::vector<std::string>{options.policy_file});
  }
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    throw std::runtime_error("--tls-cert and --tls-key are required");
  }
  auto context = MakeTlsContext(tls_files_);
  metrics_.SetCertificateExpiry(CertificateNotAfter(*context));
  listener_.UseTls(std::move(context));
  std::vector<std::string> watched{tls_files_.cert, tls_files_.key};
  if (!tls_files_.client_ca.empty()) watched.push_back(tls_files_.client_ca);
  tls_watch_.emplace(std::move(watched));
}

void Lifecycle::Start() {
  net::co_spawn(control_, WatchFiles(), net::detached);
  net::co_spawn(control_, HandleSignals(), net::detached);
}

void Lifecycle::ReloadPolicy(std::string_view trigger) {
  if (options_.policy_file.empty()) return;
  try {
    // Not ReadPolicy: the log line names the file in a field of its own.
    auto policy = std::make_shared<const policy::Policy>(
        policy::ParsePolicyText(ReadFile(options_.policy_file)));
    const std::string previous = front_.policy()->hash;
    const std::string hash = policy->hash;
    front_.UsePolicy(std::move(policy));
    metrics_.CountReload("policy", true);
    log::Event(Level::kInfo, "policy reloaded",
               {{"file", options_.policy_file},
                {"trigger", trigger},
                {"policyHash", hash},
                {"previousPolicyHash", previous}});
  } catch (const std::exception& e) {
    metrics_.CountReload("policy", false);
    log::Event(Level::kError, "policy reload failed; the previous policy stays in force",
               {{"file", options_.policy_file}, {"trigger", trigger}, {"error", e.what()}});
  }
}

void Lifecycle::ReloadTls(std::string_view trigger) {
  try {
    auto context = MakeTlsContext(tls_files_);
    const std::int64_t not_after = CertificateNotAfter(*context);
    listener_.UseTls(std::move(context));
    metrics_.SetCertificateExpiry(not_after);
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
    if (policy_watch_ && policy_watch_->Changed()) ReloadPolicy("file changed");
    if (tls_watch_ && tls_watch_->Changed()) ReloadTls("file changed");
  }
}

net::awaitable<void> Lifecycle::HandleSignals() {
  for (;;) {
    auto [ec, signal] = co_await signals_.async_wait(kTuple);
    if (ec) co_return;
    if (signal == SIGHUP) {
      ReloadPolicy("SIGHUP");
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
