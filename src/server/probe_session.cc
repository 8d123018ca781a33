// One plain-HTTP connection on the probe port: kubelet's probes and metrics scrapes. Small
// requests under tight limits, the session's deadlines; the front answers.
#include <cstdint>
#include <memory>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "http_answer.h"
#include "sessions.h"

namespace rw::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);
constexpr std::uint32_t kProbeHeaderLimit = 8 * 1024;
constexpr std::uint64_t kProbeBodyLimit = 4096;

net::awaitable<void> ProbeSession(tcp::socket socket, const SessionContext& context) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kProbeHeaderLimit);
    parser.body_limit(kProbeBodyLimit);
    stream.expires_after(context.options.header_timeout);
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, kTuple);
    if (ec) break;
    const bool keep_alive = parser.get().keep_alive();
    auto response =
        ResponseFor(context.front.Probe(RequestOf(parser)), parser.get().version(), keep_alive);
    stream.expires_after(context.options.write_timeout);
    auto [write_ec, written] = co_await http::async_write(stream, response, kTuple);
    if (write_ec || !keep_alive) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace

void StartProbeSession(tcp::socket socket, const SessionContext& context) {
  auto executor = socket.get_executor();
  net::co_spawn(executor, ProbeSession(std::move(socket), context), net::detached);
}

}  // namespace rw::server
