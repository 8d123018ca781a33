#include "rdma_webhook/server/serve.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "rdma_webhook/admission/webhook.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/server/file_watch.h"
#include "rdma_webhook/server/log.h"
#include "rdma_webhook/server/metrics.h"
#include "tls.h"

namespace rw::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using log::Level;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);
// API servers send a handful of short headers; 16 KiB leaves room for proxies' additions.
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::uint32_t kProbeHeaderLimit = 8 * 1024;
constexpr std::uint64_t kProbeBodyLimit = 4096;
// After a 413 the client may still be sending. Closing with unread bytes makes the kernel send
// RST, which can destroy the answer before the client reads it, so read (and drop) a bounded
// amount for a bounded time first.
constexpr std::size_t kDiscardLimit = 8 * 1024 * 1024;
constexpr auto kDiscardTime = std::chrono::seconds(1);
constexpr auto kTlsShutdownTime = std::chrono::seconds(1);

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// What one request is answered with.
struct Answer {
  http::status status = http::status::ok;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;   // for 405
  bool close = false;  // the connection cannot carry another request
};

Answer Short(http::status status, std::string_view message, bool close = false) {
  Answer a;
  a.status = status;
  a.body = nlohmann::json{{"error", message}}.dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace);
  a.close = close;
  return a;
}

Answer Text(http::status status, std::string body) {
  Answer a;
  a.status = status;
  a.content_type = "text/plain; charset=utf-8";
  a.body = std::move(body);
  return a;
}

// application/json with any parameters (charset=utf-8), case-insensitive.
bool IsJson(std::string_view content_type) {
  const auto semicolon = content_type.find(';');
  std::string_view media = content_type.substr(0, semicolon);
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  while (!media.empty() && media.front() == ' ') media.remove_prefix(1);
  return beast::iequals(media, "application/json");
}

const boost::system::error_category& HttpCategory() {
  return make_error_code(http::error::end_of_stream).category();
}

std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

// The session of one TLS connection. The stream is used only from the connection's strand.
struct Connection {
  Connection(tcp::socket socket, std::shared_ptr<ssl::context> context)
      : tls(std::move(context)), stream(std::move(socket), *tls) {}
  std::shared_ptr<ssl::context> tls;  // the context in force at accept; outlives the stream
  TlsStream stream;
  bool idle = false;  // waiting for the first byte of a request; only touched on the strand
};

enum class Route { kMutate, kValidate, kHealthz, kUnknown };

class Server {
 public:
  explicit Server(const ServeOptions& options)
      : options_(options),
        threads_(options.threads != 0 ? options.threads
                                      : std::max(1u, std::thread::hardware_concurrency())),
        ioc_(static_cast<int>(threads_)),
        tls_acceptor_(net::make_strand(ioc_)),
        probe_acceptor_(net::make_strand(ioc_)),
        control_(net::make_strand(ioc_)),
        signals_(ioc_, SIGINT, SIGTERM, SIGHUP),
        tls_files_{options.tls_cert, options.tls_key, options.client_ca} {}

  // Throws std::runtime_error naming the file or address that prevents starting.
  void Start();
  int Run();

 private:
  net::awaitable<void> AcceptTls();
  net::awaitable<void> AcceptProbes();
  net::awaitable<void> TlsSession(tcp::socket socket);
  net::awaitable<bool> ServeRequest(Connection& conn, beast::flat_buffer& buffer);
  net::awaitable<bool> Write(Connection& conn, Answer answer, unsigned version, bool keep_alive);
  net::awaitable<void> Discard(Connection& conn);
  net::awaitable<void> ProbeSession(tcp::socket socket);
  net::awaitable<void> WatchFiles();
  net::awaitable<void> HandleSignals();
  net::awaitable<void> Drain();

  Answer Admit(admission::Endpoint endpoint, const std::string& body);
  Answer Probe(const http::request<http::string_body>& request) const;
  void ReloadPolicy(std::string_view trigger);
  void ReloadTls(std::string_view trigger);
  std::size_t Register(const std::shared_ptr<Connection>& conn);
  void Unregister(std::size_t id);

  ServeOptions options_;
  unsigned threads_;
  net::io_context ioc_;
  tcp::acceptor tls_acceptor_;
  tcp::acceptor probe_acceptor_;
  net::strand<net::io_context::executor_type> control_;  // reloads, signals, drain
  net::signal_set signals_;
  TlsFiles tls_files_;
  std::atomic<std::shared_ptr<const policy::Policy>> policy_;
  std::atomic<std::shared_ptr<ssl::context>> tls_;
  std::optional<FileWatch> policy_watch_, tls_watch_;
  admission::Webhook webhook_;
  Metrics metrics_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> terminating_{false};  // SIGTERM seen: not ready
  std::atomic<bool> draining_{false};     // delay over: no new connections or requests
  std::mutex connections_mu_;
  std::map<std::size_t, std::weak_ptr<Connection>> connections_;
  std::size_t next_connection_ = 0;
};

void Open(tcp::acceptor& acceptor, const std::string& text, net::io_context& ioc) {
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

void Server::Start() {
  std::shared_ptr<const policy::Policy> policy;
  if (options_.policy_file.empty()) {
    policy = std::make_shared<const policy::Policy>(policy::DefaultPolicy());
  } else {
    try {
      policy = std::make_shared<const policy::Policy>(
          policy::ParsePolicyText(ReadFile(options_.policy_file)));
    } catch (const policy::PolicyError& e) {
      throw std::runtime_error("policy " + options_.policy_file + ": " + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error("policy " + std::string(e.what()));
    }
    policy_watch_.emplace(std::vector<std::string>{options_.policy_file});
  }
  policy_.store(std::move(policy));
  if (options_.tls_cert.empty() || options_.tls_key.empty()) {
    throw std::runtime_error("--tls-cert and --tls-key are required");
  }
  tls_.store(MakeTlsContext(tls_files_));
  metrics_.SetCertificateExpiry(CertificateNotAfter(*tls_.load()));
  std::vector<std::string> watched{tls_files_.cert, tls_files_.key};
  if (!tls_files_.client_ca.empty()) watched.push_back(tls_files_.client_ca);
  tls_watch_.emplace(std::move(watched));
  Open(tls_acceptor_, options_.listen, ioc_);
  Open(probe_acceptor_, options_.probe_listen, ioc_);
}

int Server::Run() {
  net::co_spawn(tls_acceptor_.get_executor(), AcceptTls(), net::detached);
  net::co_spawn(probe_acceptor_.get_executor(), AcceptProbes(), net::detached);
  net::co_spawn(control_, WatchFiles(), net::detached);
  net::co_spawn(control_, HandleSignals(), net::detached);
  ready_ = true;
  log::Event(Level::kInfo, "serving",
             {{"listen", tls_acceptor_.local_endpoint().address().to_string() + ":" +
                             std::to_string(tls_acceptor_.local_endpoint().port())},
              {"probeListen", probe_acceptor_.local_endpoint().address().to_string() + ":" +
                                  std::to_string(probe_acceptor_.local_endpoint().port())},
              {"threads", threads_},
              {"policy", options_.policy_file.empty() ? "embedded default" : options_.policy_file},
              {"policyHash", policy_.load()->hash},
              {"clientCertificates", !tls_files_.client_ca.empty()}});
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads_; ++i) pool.emplace_back([this] { ioc_.run(); });
  ioc_.run();
  for (auto& t : pool) t.join();
  log::Event(Level::kInfo, "stopped");
  return 0;
}

std::size_t Server::Register(const std::shared_ptr<Connection>& conn) {
  std::lock_guard lock(connections_mu_);
  connections_[next_connection_] = conn;
  return next_connection_++;
}

void Server::Unregister(std::size_t id) {
  std::lock_guard lock(connections_mu_);
  connections_.erase(id);
}

net::awaitable<void> Server::AcceptTls() {
  net::steady_timer backoff(tls_acceptor_.get_executor());
  for (;;) {
    auto [ec, socket] = co_await tls_acceptor_.async_accept(net::make_strand(ioc_), kTuple);
    if (ec) {
      if (ec == net::error::operation_aborted || !tls_acceptor_.is_open()) co_return;
      // Out of descriptors or memory: back off rather than spin; sessions ending frees them.
      log::Event(Level::kWarn, "accept failed", {{"error", ec.message()}});
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(kTuple);
      continue;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto executor = socket.get_executor();
    net::co_spawn(executor, TlsSession(std::move(socket)), net::detached);
  }
}

net::awaitable<void> Server::AcceptProbes() {
  for (;;) {
    auto [ec, socket] = co_await probe_acceptor_.async_accept(net::make_strand(ioc_), kTuple);
    if (ec) {
      if (ec == net::error::operation_aborted || !probe_acceptor_.is_open()) co_return;
      continue;
    }
    auto executor = socket.get_executor();
    net::co_spawn(executor, ProbeSession(std::move(socket)), net::detached);
  }
}

net::awaitable<void> Server::TlsSession(tcp::socket socket) {
  auto conn = std::make_shared<Connection>(std::move(socket), tls_.load());
  const std::size_t id = Register(conn);
  struct Unregistration {
    Server& server;
    std::size_t id;
    ~Unregistration() { server.Unregister(id); }
  } unregistration{*this, id};
  auto& stream = conn->stream;
  auto& transport = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  try {
    transport.expires_after(options_.handshake_timeout);
    auto [detect_ec, is_tls] = co_await beast::async_detect_ssl(transport, buffer, kTuple);
    if (detect_ec) co_return;
    if (!is_tls) {
      // What Go's server says, so a plain-HTTP client learns what it did wrong.
      static constexpr std::string_view kPlainHttp =
          "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
          "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
      transport.expires_after(options_.write_timeout);
      co_await net::async_write(transport.socket(), net::buffer(kPlainHttp), kTuple);
      boost::system::error_code ignored;
      transport.socket().shutdown(tcp::socket::shutdown_send, ignored);
      co_return;
    }
    auto [handshake_ec, used] =
        co_await stream.async_handshake(ssl::stream_base::server, buffer.data(), kTuple);
    if (handshake_ec) {
      log::Event(Level::kDebug, "TLS handshake failed", {{"error", handshake_ec.message()}});
      co_return;
    }
    buffer.consume(used);
    bool first = true;
    for (;;) {
      if (buffer.size() == 0) {
        // Idle between requests: the drain may close the connection here, never mid-request.
        conn->idle = true;
        if (draining_) break;
        transport.expires_after(first ? options_.header_timeout : options_.idle_timeout);
        auto [read_ec, n] = co_await stream.async_read_some(buffer.prepare(4096), kTuple);
        conn->idle = false;
        if (read_ec) break;
        buffer.commit(n);
      }
      first = false;
      if (!co_await ServeRequest(*conn, buffer)) break;
    }
    transport.expires_after(kTlsShutdownTime);
    co_await stream.async_shutdown(kTuple);
  } catch (const std::exception& e) {
    log::Event(Level::kError, "connection failed", {{"error", e.what()}});
  }
  boost::system::error_code ignored;
  transport.socket().close(ignored);
}

net::awaitable<bool> Server::ServeRequest(Connection& conn, beast::flat_buffer& buffer) {
  auto& stream = conn.stream;
  auto& transport = beast::get_lowest_layer(stream);
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  // No limit while reading the head: Beast would refuse an over-limit Content-Length as a
  // header error, before the path and method are known. The limit is checked below and set for
  // the body read.
  parser.body_limit(boost::none);
  transport.expires_after(options_.header_timeout);
  auto [header_ec, header_n] = co_await http::async_read_header(stream, buffer, parser, kTuple);
  if (header_ec) {
    // A client that went away or ran out of time gets nothing; one that sent bytes that are
    // not HTTP is told so.
    if (header_ec == http::error::end_of_stream || header_ec == beast::error::timeout ||
        header_ec == net::error::operation_aborted || header_ec == net::error::eof ||
        header_ec == net::ssl::error::stream_truncated || header_ec.category() != HttpCategory()) {
      co_return false;
    }
    metrics_.CountRequest("other", 400, 0);
    co_await Write(
        conn,
        Short(http::status::bad_request, "malformed HTTP request: " + header_ec.message(), true),
        11, false);
    co_return false;
  }
  const auto start = Clock::now();
  metrics_.AddInflight(1);
  struct InflightGuard {
    Metrics& metrics;
    ~InflightGuard() { metrics.AddInflight(-1); }
  } inflight{metrics_};

  auto& request = parser.get();
  const std::string_view path = PathOf(request.target());
  Route route = Route::kUnknown;
  if (path == "/mutate") route = Route::kMutate;
  if (path == "/validate") route = Route::kValidate;
  if (path == "/healthz") route = Route::kHealthz;
  const bool admission = route == Route::kMutate || route == Route::kValidate;
  const std::string_view endpoint = route == Route::kMutate     ? "mutate"
                                    : route == Route::kValidate ? "validate"
                                    : route == Route::kHealthz  ? "healthz"
                                                                : "other";
  std::optional<Answer> early;
  if (route == Route::kUnknown) {
    early = Short(http::status::not_found, "unknown path; use /mutate, /validate or /healthz");
  } else if (admission && request.method() != http::verb::post) {
    early = Short(http::status::method_not_allowed, "use POST");
    early->allow = "POST";
  } else if (route == Route::kHealthz && request.method() != http::verb::get &&
             request.method() != http::verb::head) {
    early = Short(http::status::method_not_allowed, "use GET");
    early->allow = "GET, HEAD";
  } else if (admission && parser.content_length() &&
             *parser.content_length() > options_.max_body_bytes) {
    early = Short(http::status::payload_too_large,
                  "body of " + std::to_string(*parser.content_length()) +
                      " bytes is over the limit of " + std::to_string(options_.max_body_bytes),
                  true);
  } else if (admission && !IsJson(request[http::field::content_type])) {
    early = Short(http::status::unsupported_media_type, "content type must be application/json");
  }

  auto finish = [&](const Answer& a) {
    metrics_.CountRequest(endpoint, static_cast<int>(a.status),
                          std::chrono::duration<double>(Clock::now() - start).count());
  };
  const bool expects_continue = beast::iequals(request[http::field::expect], "100-continue");
  if (!parser.is_done()) {
    const bool over_limit =
        parser.content_length() && *parser.content_length() > options_.max_body_bytes;
    if (early && (over_limit || expects_continue)) {
      // Answer before the body: the client has not sent it (100-continue) or must not.
      early->close = true;
      finish(*early);
      co_await Write(conn, std::move(*early), request.version(), false);
      co_await Discard(conn);
      co_return false;
    }
    if (expects_continue) {
      http::response<http::empty_body> go_on{http::status::continue_, request.version()};
      transport.expires_after(options_.write_timeout);
      auto [continue_ec, continue_n] = co_await http::async_write(stream, go_on, kTuple);
      if (continue_ec) co_return false;
    }
    parser.body_limit(static_cast<std::uint64_t>(options_.max_body_bytes));
    transport.expires_after(options_.body_timeout);
    auto [body_ec, body_n] = co_await http::async_read(stream, buffer, parser, kTuple);
    if (body_ec == http::error::body_limit) {
      Answer a = Short(
          http::status::payload_too_large,
          "body is over the limit of " + std::to_string(options_.max_body_bytes) + " bytes", true);
      finish(a);
      co_await Write(conn, std::move(a), request.version(), false);
      co_await Discard(conn);
      co_return false;
    }
    if (body_ec) {
      // Timed out (a Content-Length larger than what came) or gone: nobody to answer.
      if (body_ec.category() != HttpCategory() || body_ec == http::error::end_of_stream ||
          body_ec == http::error::partial_message) {
        co_return false;
      }
      Answer a =
          Short(http::status::bad_request, "malformed HTTP body: " + body_ec.message(), true);
      finish(a);
      co_await Write(conn, std::move(a), request.version(), false);
      co_return false;
    }
  }
  Answer answer;
  if (early) {
    answer = std::move(*early);
  } else if (route == Route::kHealthz) {
    answer = Text(http::status::ok, "ok\n");
  } else {
    answer = Admit(
        route == Route::kMutate ? admission::Endpoint::kMutate : admission::Endpoint::kValidate,
        request.body());
  }
  const unsigned version = request.version();
  const bool keep_alive = request.keep_alive();
  finish(answer);
  co_return co_await Write(conn, std::move(answer), version, keep_alive);
}

net::awaitable<bool> Server::Write(Connection& conn, Answer answer, unsigned version,
                                   bool keep_alive) {
  http::response<http::string_body> response{answer.status, version};
  response.set(http::field::content_type, answer.content_type);
  if (!answer.allow.empty()) response.set(http::field::allow, answer.allow);
  response.body() = std::move(answer.body);
  const bool keep = keep_alive && !answer.close && !draining_;
  response.keep_alive(keep);
  response.prepare_payload();
  beast::get_lowest_layer(conn.stream).expires_after(options_.write_timeout);
  auto [ec, n] = co_await http::async_write(conn.stream, response, kTuple);
  co_return !ec && keep;
}

net::awaitable<void> Server::Discard(Connection& conn) {
  beast::get_lowest_layer(conn.stream).expires_after(kDiscardTime);
  std::array<char, 16384> sink;
  for (std::size_t total = 0; total < kDiscardLimit;) {
    auto [ec, n] = co_await conn.stream.async_read_some(net::buffer(sink), kTuple);
    if (ec) break;
    total += n;
  }
}

Answer Server::Admit(admission::Endpoint endpoint, const std::string& body) {
  const auto policy = policy_.load();
  admission::Outcome outcome = webhook_.Handle(endpoint, body, *policy);
  Answer answer;
  answer.status = static_cast<http::status>(outcome.http_status);
  answer.body = std::move(outcome.body);
  const std::string_view name = admission::ToString(endpoint);
  if (outcome.decided) {
    metrics_.CountDecision(name, outcome.decision.path, outcome.allowed);
    for (const auto& f : outcome.decision.findings) {
      metrics_.CountFinding(f.rule, rules::ToString(f.severity));
    }
  }
  nlohmann::json fields = {{"endpoint", name}, {"uid", outcome.uid}};
  auto describe = [&] {
    fields["operation"] = outcome.operation;
    fields["kind"] = outcome.kind;
    fields["namespace"] = outcome.ns;
    fields["name"] = outcome.name;
    fields["dryRun"] = outcome.dry_run;
    fields["path"] = outcome.decision.path;
  };
  if (outcome.http_status == 500) {
    fields["error"] = outcome.error;
    log::Event(Level::kError, "internal error; answered 500", fields);
  } else if (outcome.http_status != 200) {
    if (log::Enabled(Level::kDebug)) {
      fields["error"] = outcome.error;
      log::Event(Level::kDebug, "bad request", fields);
    }
  } else if (!outcome.allowed) {
    describe();
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& f : outcome.decision.findings) {
      if (f.severity == rules::Severity::kError) rules.push_back(f.rule);
    }
    fields["rules"] = rules;
    fields["message"] = outcome.decision.response.status.message;
    log::Event(Level::kInfo, "denied", fields);
  } else if (log::Enabled(Level::kDebug)) {
    describe();
    fields["patched"] = outcome.decision.response.patch.has_value();
    fields["warnings"] = outcome.decision.response.warnings;
    log::Event(Level::kDebug, "allowed", fields);
  }
  return answer;
}

net::awaitable<void> Server::ProbeSession(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kProbeHeaderLimit);
    parser.body_limit(kProbeBodyLimit);
    stream.expires_after(options_.header_timeout);
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, kTuple);
    if (ec) break;
    const auto& request = parser.get();
    Answer answer = Probe(request);
    http::response<http::string_body> response{answer.status, request.version()};
    response.set(http::field::content_type, answer.content_type);
    if (!answer.allow.empty()) response.set(http::field::allow, answer.allow);
    response.body() = std::move(answer.body);
    response.keep_alive(request.keep_alive());
    response.prepare_payload();
    stream.expires_after(options_.write_timeout);
    auto [write_ec, written] = co_await http::async_write(stream, response, kTuple);
    if (write_ec || !request.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

Answer Server::Probe(const http::request<http::string_body>& request) const {
  const std::string_view path = PathOf(request.target());
  if (path != "/healthz" && path != "/readyz" && path != "/metrics") {
    return Short(http::status::not_found, "unknown path; use /healthz, /readyz or /metrics");
  }
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    Answer a = Short(http::status::method_not_allowed, "use GET");
    a.allow = "GET, HEAD";
    return a;
  }
  if (path == "/healthz") return Text(http::status::ok, "ok\n");
  if (path == "/readyz") {
    // Fails as soon as SIGTERM arrives so endpoints drop the pod during the delay.
    if (ready_ && !terminating_) return Text(http::status::ok, "ok\n");
    return Text(http::status::service_unavailable, terminating_ ? "shutting down\n" : "starting\n");
  }
  Answer a = Text(http::status::ok, metrics_.Render());
  a.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return a;
}

void Server::ReloadPolicy(std::string_view trigger) {
  if (options_.policy_file.empty()) return;
  try {
    auto policy = std::make_shared<const policy::Policy>(
        policy::ParsePolicyText(ReadFile(options_.policy_file)));
    const std::string previous = policy_.load()->hash;
    const std::string hash = policy->hash;
    policy_.store(std::move(policy));
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

void Server::ReloadTls(std::string_view trigger) {
  try {
    auto context = MakeTlsContext(tls_files_);
    const std::int64_t not_after = CertificateNotAfter(*context);
    tls_.store(std::move(context));
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

net::awaitable<void> Server::WatchFiles() {
  net::steady_timer timer(control_);
  for (;;) {
    timer.expires_after(options_.reload_interval);
    auto [ec] = co_await timer.async_wait(kTuple);
    if (ec) co_return;
    if (policy_watch_ && policy_watch_->Changed()) ReloadPolicy("file changed");
    if (tls_watch_ && tls_watch_->Changed()) ReloadTls("file changed");
  }
}

net::awaitable<void> Server::HandleSignals() {
  for (;;) {
    auto [ec, signal] = co_await signals_.async_wait(kTuple);
    if (ec) co_return;
    if (signal == SIGHUP) {
      ReloadPolicy("SIGHUP");
      ReloadTls("SIGHUP");
      continue;
    }
    if (terminating_.exchange(true)) continue;
    log::Event(Level::kInfo, "shutting down: not ready; serving until the delay ends",
               {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"},
                {"delaySeconds", std::chrono::duration<double>(options_.shutdown_delay).count()}});
    net::co_spawn(control_, Drain(), net::detached);
  }
}

net::awaitable<void> Server::Drain() {
  // The API server keeps using open connections until the endpoint removal reaches it.
  net::steady_timer timer(control_);
  timer.expires_after(options_.shutdown_delay);
  co_await timer.async_wait(kTuple);
  draining_ = true;
  net::post(tls_acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    tls_acceptor_.close(ignored);
  });
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(connections_mu_);
    for (auto& [id, weak] : connections_) {
      if (auto conn = weak.lock()) open.push_back(std::move(conn));
    }
  }
  log::Event(Level::kInfo, "draining: no new connections; finishing requests in flight",
             {{"openConnections", open.size()}});
  for (auto& conn : open) {
    // On the connection's strand, so the check and the cancel cannot race its session.
    net::post(conn->stream.get_executor(), [conn] {
      if (conn->idle) beast::get_lowest_layer(conn->stream).cancel();
    });
  }
  open.clear();
  // A request in flight has at most the body and write deadlines left.
  const auto deadline = Clock::now() + options_.header_timeout + options_.body_timeout +
                        options_.write_timeout + kTlsShutdownTime;
  for (;;) {
    {
      std::lock_guard lock(connections_mu_);
      if (connections_.empty()) break;
    }
    if (Clock::now() > deadline) {
      log::Event(Level::kWarn, "drain deadline passed; closing remaining connections");
      break;
    }
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(kTuple);
  }
  ioc_.stop();
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

int Serve(const ServeOptions& options) {
  try {
    log::Setup(options.log_format, options.log_level);
  } catch (const std::exception& e) {
    std::cerr << "rdma-webhook serve: " << e.what() << '\n';
    return 2;
  }
  // A client that vanishes mid-write must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    Server server(options);
    try {
      server.Start();
    } catch (const std::exception& e) {
      log::Event(Level::kError, "cannot start", {{"error", e.what()}});
      return 2;
    }
    return server.Run();
  } catch (const std::exception& e) {
    log::Event(Level::kError, "server failed", {{"error", e.what()}});
    return 1;
  }
}

}  // namespace rw::server
