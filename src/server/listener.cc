#include "listener.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rdma_webhook/server/log.h"

namespace rw::server {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using log::Level;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);
// After an accept failure (out of descriptors or memory): long enough not to spin, short enough
// that a freed descriptor is used at once. The pending connection waits in the listen backlog.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(50);

void Bind(tcp::acceptor& acceptor, const std::string& text, net::io_context& ioc) {
  ListenAddress address;
  try {
    address = ParseListenAddress(text);
  } catch (const std::exception& e) {
    throw std::runtime_error("listen address '" + text + "': " + e.what());
  }
  boost::system::error_code ec;
  tcp::endpoint endpoint;
  auto ip = net::ip::make_address(address.host.empty() ? "0.0.0.0" : address.host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(ip, address.port);
  } else {
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(address.host, std::to_string(address.port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error("listen address '" + text +
                               "': cannot resolve host: " + ec.message());
    }
    endpoint = results.begin()->endpoint();
  }
  auto fail = [&](const char* step) {
    throw std::runtime_error("listen " + text + ": " + step + ": " + ec.message());
  };
  acceptor.open(endpoint.protocol(), ec);
  if (ec) fail("open");
  acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (ec) fail("reuse_address");
  acceptor.bind(endpoint, ec);
  if (ec) fail("bind");
  acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) fail("listen");
}

std::string AddressOf(const tcp::acceptor& acceptor) {
  const auto endpoint = acceptor.local_endpoint();
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

// Accepts until the acceptor closes, each connection on a strand of its own. A failed accept
// (EMFILE, ENFILE, ENOBUFS, ENOMEM) backs off instead of spinning or ending the loop: sessions
// ending free descriptors, and accepting resumes by itself. One log line per run of failures.
net::awaitable<void> AcceptLoop(net::io_context& ioc, tcp::acceptor& acceptor,
                                std::string_view port, std::function<void(tcp::socket)> hand_off) {
  net::steady_timer backoff(acceptor.get_executor());
  bool failing = false;
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(net::make_strand(ioc), kTuple);
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
      if (!failing) {
        log::Event(Level::kWarn, "accept failed; retrying until it succeeds",
                   {{"port", port}, {"error", ec.message()}});
      }
      failing = true;
      backoff.expires_after(kAcceptBackoff);
      co_await backoff.async_wait(kTuple);
      continue;
    }
    if (failing) log::Event(Level::kInfo, "accepting again", {{"port", port}});
    failing = false;
    hand_off(std::move(socket));
  }
}

}  // namespace

ListenAddress ParseListenAddress(std::string_view text) {
  ListenAddress out;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw std::invalid_argument("expected [address]:port");
    }
    out.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) throw std::invalid_argument("expected host:port");
    out.host = std::string(text.substr(0, colon));
    if (out.host.find(':') != std::string::npos) {
      throw std::invalid_argument("write IPv6 addresses as [address]:port");
    }
    port = text.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw std::invalid_argument("port must be a number from 0 to 65535");
  }
  const unsigned long value = std::stoul(std::string(port));
  if (value > 65535) throw std::invalid_argument("port must be a number from 0 to 65535");
  out.port = static_cast<std::uint16_t>(value);
  return out;
}

Listener::Listener(net::io_context& ioc, const SessionContext& sessions)
    : ioc_(ioc),
      sessions_(sessions),
      tls_acceptor_(net::make_strand(ioc)),
      probe_acceptor_(net::make_strand(ioc)) {}

void Listener::Open() {
  Bind(tls_acceptor_, sessions_.options.listen, ioc_);
  Bind(probe_acceptor_, sessions_.options.probe_listen, ioc_);
}

void Listener::Start() {
  net::co_spawn(tls_acceptor_.get_executor(),
                AcceptLoop(ioc_, tls_acceptor_, "tls",
                           [this](tcp::socket socket) { HandOffTls(std::move(socket)); }),
                net::detached);
  net::co_spawn(probe_acceptor_.get_executor(),
                AcceptLoop(ioc_, probe_acceptor_, "probe",
                           [this](tcp::socket socket) { HandOffProbe(std::move(socket)); }),
                net::detached);
}

void Listener::HandOffTls(tcp::socket socket) {
  auto slot = sessions_.connections.Admit();
  boost::system::error_code ignored;
  if (!slot) {
    // Closed at once: a flood of idle connections must not take the descriptors that the API
    // server's connections need. The client sees the connection end and retries elsewhere.
    socket.close(ignored);
    if (!at_limit_) {
      log::Event(Level::kWarn, "--max-connections open; closing new connections until below",
                 {{"maxConnections", sessions_.connections.limit()}});
    }
    at_limit_ = true;
    return;
  }
  if (at_limit_) log::Event(Level::kInfo, "below --max-connections again; serving new connections");
  at_limit_ = false;
  socket.set_option(tcp::no_delay(true), ignored);
  StartTlsSession(std::move(socket), tls_.load(), std::move(*slot), sessions_);
}

void Listener::HandOffProbe(tcp::socket socket) {
  auto slot = ProbeSlot::Admit(sessions_.probe_connections);
  if (!slot) {
    boost::system::error_code ignored;
    socket.close(ignored);
    if (!probe_at_limit_) {
      log::Event(Level::kWarn, "probe connections at their limit; closing new ones until below",
                 {{"maxProbeConnections", kMaxProbeConnections}});
    }
    probe_at_limit_ = true;
    return;
  }
  if (probe_at_limit_) log::Event(Level::kInfo, "probe connections below their limit again");
  probe_at_limit_ = false;
  StartProbeSession(std::move(socket), std::move(*slot), sessions_);
}

void Listener::CloseTls() {
  net::post(tls_acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    tls_acceptor_.close(ignored);
  });
}

std::string Listener::TlsAddress() const { return AddressOf(tls_acceptor_); }
std::string Listener::ProbeAddress() const { return AddressOf(probe_acceptor_); }

}  // namespace rw::server
