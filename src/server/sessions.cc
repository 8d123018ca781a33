// The per-connection sessions: one TLS connection on the webhook port, in the shape of Beast's
// async-ssl server (a deadline before every handshake, read and write, a fresh parser per request
// with an explicit limit, error codes rather than exceptions on the I/O path), and one plain-HTTP
// connection on the probe port. What a request is answered is the front's. Both sessions are in
// one file because they instantiate the same Beast HTTP templates: apart, the build compiled
// them twice (53 s of CPU instead of 42 s on the 2-core machine).
#include "sessions.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "http_request.h"
#include "rdma_webhook/server/log.h"

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
// After a 413 the client may still be sending. Closing with unread bytes makes the kernel send
// RST, which can destroy the answer before the client reads it, so read (and drop) a bounded
// amount for a bounded time first.
constexpr std::size_t kDiscardLimit = 8 * 1024 * 1024;
constexpr auto kDiscardTime = std::chrono::seconds(1);
// The probe port's requests are small: what a refused one may still send is dropped up to this.
constexpr std::size_t kProbeDiscardLimit = 64 * 1024;
// How often a request waiting for room under --max-buffered-bytes tries again.
constexpr auto kLeaseRetry = std::chrono::milliseconds(5);
constexpr int kBadRequest = 400;
constexpr int kServiceUnavailable = 503;

// The front's Answer as the response a session writes. The answer to HEAD has the header
// fields GET's would have, Content-Length included, and no content (RFC 9110 §9.3.2): a body
// there would be read as the start of the next answer on the connection.
http::response<http::string_body> ResponseFor(Answer answer, unsigned version, bool keep_alive,
                                              bool head = false) {
  http::response<http::string_body> response{static_cast<http::status>(answer.status), version};
  response.set(http::field::content_type, answer.content_type);
  if (!answer.allow.empty()) response.set(http::field::allow, answer.allow);
  response.body() = std::move(answer.body);
  response.keep_alive(keep_alive);
  response.prepare_payload();
  if (head) std::string().swap(response.body());
  return response;
}

const boost::system::error_category& HttpCategory() {
  return make_error_code(http::error::end_of_stream).category();
}

std::string PeerOf(const tcp::socket& socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  return peer.address().to_string() + ":" + std::to_string(peer.port());
}

// A request refused before the decision (framing, bounds, route, the budget), at debug: the
// review's own refusals are logged by the admission log, with the review's fields.
void LogRefusal(const tcp::socket& socket, std::string_view port, const Answer& answer) {
  if (!log::Enabled(Level::kDebug)) return;
  log::Event(Level::kDebug, "request refused",
             {{"port", port},
              {"peer", PeerOf(socket)},
              {"status", answer.status},
              {"answer", answer.body}});
}

class TlsSession {
 public:
  TlsSession(tcp::socket socket, std::shared_ptr<ssl::context> tls, Connections::Slot slot,
             const SessionContext& context)
      : tls_(std::move(tls)),
        stream_(std::move(socket), *tls_),
        slot_(std::move(slot)),
        context_(context) {}

  net::awaitable<void> Run();
  // On the session's strand: the drain closes a connection that waits for a request, never one
  // in the middle of one.
  void CloseIfIdle() {
    if (idle_) beast::get_lowest_layer(stream_).cancel();
  }
  auto executor() { return stream_.get_executor(); }
  Connections::Slot& slot() { return slot_; }

 private:
  beast::tcp_stream& transport() { return beast::get_lowest_layer(stream_); }
  net::awaitable<bool> Detect();
  net::awaitable<bool> ServeRequest();
  net::awaitable<bool> Write(Answer answer, unsigned version, bool keep_alive, bool head = false);
  net::awaitable<void> Discard();
  net::awaitable<std::optional<MemoryBudget::Lease>> AwaitLease(std::size_t cost);

  std::shared_ptr<ssl::context> tls_;  // the context in force at accept; outlives the stream
  beast::ssl_stream<beast::tcp_stream> stream_;
  Connections::Slot slot_;
  const SessionContext& context_;
  beast::flat_buffer buffer_{kReadBufferLimit};
  bool idle_ = false;  // waiting for the first byte of a request; only touched on the strand
};

// Reads the first bytes: true for a TLS client hello. A plain-HTTP client is told what it did
// wrong, in the words of Go's server.
net::awaitable<bool> TlsSession::Detect() {
  transport().expires_after(context_.options.handshake_timeout);
  auto [detect_ec, is_tls] = co_await beast::async_detect_ssl(transport(), buffer_, kTuple);
  if (detect_ec) co_return false;
  if (!is_tls) {
    static constexpr std::string_view kPlainHttp =
        "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
    transport().expires_after(context_.options.write_timeout);
    co_await net::async_write(transport().socket(), net::buffer(kPlainHttp), kTuple);
    boost::system::error_code ignored;
    transport().socket().shutdown(tcp::socket::shutdown_send, ignored);
    co_return false;
  }
  co_return true;
}

net::awaitable<void> TlsSession::Run() {
  try {
    if (!co_await Detect()) co_return;
    auto [handshake_ec, used] =
        co_await stream_.async_handshake(ssl::stream_base::server, buffer_.data(), kTuple);
    if (handshake_ec) {
      log::Event(Level::kDebug, "TLS handshake failed", {{"error", handshake_ec.message()}});
      co_return;
    }
    buffer_.consume(used);
    bool first = true;
    for (;;) {
      if (buffer_.size() == 0) {
        // Idle between requests: the drain may close the connection here, never mid-request.
        idle_ = true;
        if (context_.connections.draining()) break;
        transport().expires_after(first ? context_.options.header_timeout
                                        : context_.options.idle_timeout);
        // As much as the buffer already has room for (within its bound): a review's first TLS
        // record whole, not its first 4 KiB.
        const std::size_t room =
            std::min(std::max<std::size_t>(4096, buffer_.capacity()), buffer_.max_size());
        auto [read_ec, n] = co_await stream_.async_read_some(buffer_.prepare(room), kTuple);
        idle_ = false;
        if (read_ec) break;
        buffer_.commit(n);
      }
      first = false;
      if (!co_await ServeRequest()) break;
    }
    transport().expires_after(kTlsShutdownTime);
    co_await stream_.async_shutdown(kTuple);
  } catch (const std::exception& e) {
    context_.metrics.CountConnectionError();
    log::Event(Level::kError, "connection failed", {{"error", e.what()}});
  }
  boost::system::error_code ignored;
  transport().socket().close(ignored);
}

// Serves one request from the buffer and the stream; false when the connection must end.
net::awaitable<bool> TlsSession::ServeRequest() {
  const Front& front = context_.front;
  Metrics& metrics = context_.metrics;
  const std::size_t max_body = context_.options.max_body_bytes;
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  // No limit while reading the head: Beast would refuse an over-limit Content-Length as a
  // header error, before the path and method are known. The front checks the declared length
  // and the limit is set for the body read.
  parser.body_limit(boost::none);
  transport().expires_after(context_.options.header_timeout);
  auto [header_ec, header_n] = co_await http::async_read_header(stream_, buffer_, parser, kTuple);
  if (header_ec) {
    // A client that went away or ran out of time gets nothing; one that sent bytes that are
    // not HTTP is told so.
    if (header_ec == http::error::end_of_stream || header_ec == beast::error::timeout ||
        header_ec == net::error::operation_aborted || header_ec == net::error::eof ||
        header_ec == net::ssl::error::stream_truncated || header_ec.category() != HttpCategory()) {
      co_return false;
    }
    metrics.CountRequest("other", kBadRequest, 0);
    Answer a = Refusal(kBadRequest, "malformed HTTP request: " + header_ec.message(), true);
    LogRefusal(transport().socket(), "tls", a);
    co_await Write(std::move(a), 11, false);
    co_return false;
  }
  const auto start = Clock::now();
  metrics.AddInflight(1);
  struct InflightGuard {
    Metrics& metrics;
    ~InflightGuard() { metrics.AddInflight(-1); }
  } inflight{metrics};

  const auto& request = parser.get();
  // Route and refusal from the head, once: the label, the early answer and the decision use it.
  Screening screening = front.Screen(RequestOf(parser));
  const std::string_view endpoint = EndpointLabel(screening.route);
  auto finish = [&](const Answer& a) {
    metrics.CountRequest(endpoint, a.status,
                         std::chrono::duration<double>(Clock::now() - start).count());
  };
  auto refuse = [&](const Answer& a) {
    finish(a);
    LogRefusal(transport().socket(), "tls", a);
  };
  // RFC 9110 §10.1.1: an HTTP/1.0 client cannot read a 100; its expectation is ignored.
  const bool expects_continue =
      request.version() >= 11 && beast::iequals(request[http::field::expect], "100-continue");
  if (!parser.is_done()) {
    std::optional<Answer>& early = screening.refusal;
    const bool over_limit = parser.content_length() && *parser.content_length() > max_body;
    if (early && (over_limit || expects_continue || early->close)) {
      // Answer before the body: the client has not sent it (100-continue) or must not.
      early->close = true;
      refuse(*early);
      co_await Write(std::move(*early), request.version(), false);
      co_await Discard();
      co_return false;
    }
  }
  // Reserved in two stages, held until the answer is written. While the body is read, what it
  // holds as text (a chunked body has no declared length: as much as the limit lets it grow
  // to); once it is here, what the decision and the answer will hold of its real length. A
  // client that declares a large body and then stalls holds one body's worth, so one connection
  // cannot hold the whole budget until its body deadline.
  const std::uint64_t body_bytes = parser.is_done() ? 0
                                   : parser.content_length()
                                       ? std::min<std::uint64_t>(*parser.content_length(), max_body)
                                       : max_body;
  const auto busy = [&]() {
    return Refusal(kServiceUnavailable,
                   "server busy: the requests in flight hold --max-buffered-bytes (" +
                       std::to_string(context_.budget.capacity()) + " bytes); retry",
                   true);
  };
  std::optional<MemoryBudget::Lease> lease = co_await AwaitLease(ReadingCost(body_bytes));
  if (!lease) {
    Answer a = busy();
    refuse(a);
    co_await Write(std::move(a), request.version(), false);
    if (!parser.is_done()) co_await Discard();
    co_return false;
  }
  if (!parser.is_done()) {
    if (expects_continue) {
      http::response<http::empty_body> go_on{http::status::continue_, request.version()};
      transport().expires_after(context_.options.write_timeout);
      auto [continue_ec, continue_n] = co_await http::async_write(stream_, go_on, kTuple);
      if (continue_ec) co_return false;
    }
    parser.body_limit(static_cast<std::uint64_t>(max_body));
    // Beast reads at most the buffer's free room at a time: a buffer left at 4 KiB took a 30 KB
    // review in eight TLS reads, each a trip through the event loop. Room for the body, within
    // the buffer's bound (kReadBufferLimit), is two or three.
    buffer_.reserve(std::min<std::size_t>(buffer_.size() + body_bytes, buffer_.max_size()));
    transport().expires_after(context_.options.body_timeout);
    auto [body_ec, body_n] = co_await http::async_read(stream_, buffer_, parser, kTuple);
    if (body_ec == http::error::body_limit) {
      Answer a = BodyOverLimit(max_body);
      refuse(a);
      co_await Write(std::move(a), request.version(), false);
      co_await Discard();
      co_return false;
    }
    if (body_ec == http::error::buffer_overflow) {
      Answer a = Refusal(kBadRequest,
                         "chunk line or trailer section over the limit of " +
                             std::to_string(kReadBufferLimit) + " bytes",
                         true);
      refuse(a);
      co_await Write(std::move(a), request.version(), false);
      co_await Discard();
      co_return false;
    }
    if (body_ec) {
      // Timed out (a Content-Length larger than what came) or gone: nobody to answer.
      if (body_ec.category() != HttpCategory() || body_ec == http::error::end_of_stream ||
          body_ec == http::error::partial_message) {
        co_return false;
      }
      Answer a = Refusal(kBadRequest, "malformed HTTP body: " + body_ec.message(), true);
      refuse(a);
      co_await Write(std::move(a), request.version(), false);
      co_return false;
    }
  }
  // The second stage: the reading lease is given back first, so that a request alone always
  // fits, and the decision's cost of the body that came is waited for as the first was.
  lease.reset();
  const std::optional<MemoryBudget::Lease> deciding =
      co_await AwaitLease(RequestCost(parser.get().body().size()));
  if (!deciding) {
    Answer a = busy();
    refuse(a);
    co_await Write(std::move(a), request.version(), false);
    co_return false;
  }
  Answer answer = front.Decide(std::move(screening), RequestOf(parser));
  const unsigned version = request.version();
  const bool keep_alive = request.keep_alive();
  const bool head = request.method() == http::verb::head;
  // The body is not needed while the answer is written, which takes as long as the client
  // makes it (up to the write deadline): only the answer stays held.
  std::string().swap(parser.get().body());
  finish(answer);
  // A review's own refusals are the admission log's; the rest (an unknown path, a wrong method)
  // are this one's.
  if (answer.status >= 400 && endpoint != "mutate" && endpoint != "validate")
    LogRefusal(transport().socket(), "tls", answer);
  co_return co_await Write(std::move(answer), version, keep_alive, head);
}

// Writes one answer; true when the connection may carry another request.
net::awaitable<bool> TlsSession::Write(Answer answer, unsigned version, bool keep_alive,
                                       bool head) {
  const bool keep = keep_alive && !answer.close && !context_.connections.draining();
  auto response = ResponseFor(std::move(answer), version, keep, head);
  transport().expires_after(context_.options.write_timeout);
  auto [ec, n] = co_await http::async_write(stream_, response, kTuple);
  co_return !ec && keep;
}

// A lease of `cost` from the budget, waiting while other requests hold it, for at most the
// header deadline: a burst of large reviews is served in turn rather than refused.
net::awaitable<std::optional<MemoryBudget::Lease>> TlsSession::AwaitLease(std::size_t cost) {
  const auto deadline = Clock::now() + context_.options.header_timeout;
  net::steady_timer timer(stream_.get_executor());
  for (;;) {
    if (auto lease = context_.budget.Reserve(cost)) co_return lease;
    if (Clock::now() >= deadline) co_return std::nullopt;
    timer.expires_after(kLeaseRetry);
    auto [ec] = co_await timer.async_wait(kTuple);
    if (ec) co_return std::nullopt;
  }
}

net::awaitable<void> TlsSession::Discard() {
  transport().expires_after(kDiscardTime);
  std::array<char, 16384> sink;
  for (std::size_t total = 0; total < kDiscardLimit;) {
    auto [ec, n] = co_await stream_.async_read_some(net::buffer(sink), kTuple);
    if (ec) break;
    total += n;
  }
}

// What a probe connection is told when its request cannot be read: 413 past the body bound,
// 400 for bytes that are not HTTP or a head or line past its bound, as on the TLS port; nothing
// to a client that went away or ran out of time.
std::optional<Answer> ProbeReadRefusal(const boost::system::error_code& ec) {
  if (ec == http::error::body_limit) return BodyOverLimit(kProbeBodyLimit);
  if (ec.category() != HttpCategory() || ec == http::error::end_of_stream ||
      ec == http::error::partial_message) {
    return std::nullopt;
  }
  if (ec == http::error::buffer_overflow) {
    return Refusal(kBadRequest,
                   "request head, chunk line or trailer section over the probe port's limit of " +
                       std::to_string(kProbeReadBufferLimit) + " bytes",
                   true);
  }
  return Refusal(kBadRequest, "malformed HTTP request: " + ec.message(), true);
}

// A connection on the probe port: requests until the client closes or a deadline passes. It
// keeps its place under kMaxProbeConnections until it ends.
net::awaitable<void> ProbeSession(tcp::socket socket, [[maybe_unused]] ProbeSlot slot,
                                  const SessionContext& context) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer{kProbeReadBufferLimit};
  try {
    for (bool first = true;; first = false) {
      if (!first && buffer.size() == 0) {
        // Between requests the keep-alive deadline applies, as on the TLS port.
        stream.expires_after(context.options.idle_timeout);
        auto [idle_ec, idle_n] = co_await stream.async_read_some(buffer.prepare(4096), kTuple);
        if (idle_ec) break;
        buffer.commit(idle_n);
      }
      http::request_parser<http::string_body> parser;
      parser.header_limit(kProbeHeaderLimit);
      parser.body_limit(kProbeBodyLimit);
      stream.expires_after(context.options.header_timeout);
      auto [ec, n] = co_await http::async_read(stream, buffer, parser, kTuple);
      if (ec) {
        if (auto refusal = ProbeReadRefusal(ec)) {
          LogRefusal(stream.socket(), "probe", *refusal);
          auto response = ResponseFor(std::move(*refusal), 11, false);
          stream.expires_after(context.options.write_timeout);
          co_await http::async_write(stream, response, kTuple);
          // Unread bytes at close make the kernel send RST, which can destroy the answer.
          stream.expires_after(kDiscardTime);
          std::array<char, 4096> sink;
          for (std::size_t total = 0; total < kProbeDiscardLimit;) {
            auto [discard_ec, got] = co_await stream.async_read_some(net::buffer(sink), kTuple);
            if (discard_ec) break;
            total += got;
          }
        }
        break;
      }
      Answer answer = context.front.Probe(RequestOf(parser));
      const bool keep_alive = parser.get().keep_alive() && !answer.close;
      auto response = ResponseFor(std::move(answer), parser.get().version(), keep_alive,
                                  parser.get().method() == http::verb::head);
      stream.expires_after(context.options.write_timeout);
      auto [write_ec, written] = co_await http::async_write(stream, response, kTuple);
      if (write_ec || !keep_alive) break;
    }
  } catch (const std::exception& e) {
    context.metrics.CountConnectionError();
    log::Event(Level::kError, "probe connection failed", {{"error", e.what()}});
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace

void StartTlsSession(tcp::socket socket, std::shared_ptr<ssl::context> tls, Connections::Slot slot,
                     const SessionContext& context) {
  auto session =
      std::make_shared<TlsSession>(std::move(socket), std::move(tls), std::move(slot), context);
  // The drain reaches the session only while it lives, and only on its strand.
  session->slot().OnDrain([weak = std::weak_ptr<TlsSession>(session)] {
    if (auto s = weak.lock()) net::post(s->executor(), [s] { s->CloseIfIdle(); });
  });
  auto executor = session->executor();
  net::co_spawn(
      executor, [session]() { return session->Run(); }, net::detached);
}

void StartProbeSession(tcp::socket socket, ProbeSlot slot, const SessionContext& context) {
  auto executor = socket.get_executor();
  net::co_spawn(executor, ProbeSession(std::move(socket), std::move(slot), context), net::detached);
}

}  // namespace rw::server
