#include "kube_client.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <openssl/ssl.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "rdma_webhook/build_info.h"

namespace rw::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);
// A connection and its TLS handshake; the request's own deadline follows.
constexpr std::chrono::seconds kConnectTimeout{10};
// How much of a watch body one read hands on.
constexpr std::size_t kStreamChunk = 16 * 1024;

bool IsAddress(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

// The context comes before the stream, which refers to it, and outlives it.
struct Connection {
  Connection(const net::any_io_executor& executor, ssl::context context)
      : tls(std::move(context)), stream(executor, tls) {}
  ssl::context tls;
  beast::ssl_stream<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
};

KubeError Broken(std::string_view what, const boost::system::error_code& ec) {
  return KubeError(KubeError::Kind::kConnect, std::string(what) + ": " + ec.message());
}

}  // namespace

KubeClient::KubeClient(ApiServerEndpoint endpoint, Env& env)
    : endpoint_(std::move(endpoint)), env_(env) {}

namespace {

ssl::context ClientContext(Env& env, const std::string& ca_file) {
  std::string ca;
  try {
    ca = env.ReadFile(ca_file, FileKinds::kRegularOnly);
  } catch (const std::exception& e) {
    throw KubeError(KubeError::Kind::kSetup, std::string("API server CA ") + e.what());
  }
  ssl::context context(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);
  context.set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  context.add_certificate_authority(net::buffer(ca), ec);
  if (ec) {
    throw KubeError(KubeError::Kind::kSetup,
                    "API server CA " + ca_file + ": no PEM certificate (" + ec.message() + ")");
  }
  return context;
}

net::awaitable<std::unique_ptr<Connection>> Open(const ApiServerEndpoint& endpoint, Env& env) {
  auto executor = co_await net::this_coro::executor;
  auto c = std::make_unique<Connection>(executor, ClientContext(env, endpoint.ca_file));
  tcp::resolver resolver(executor);
  auto [resolve_ec, results] =
      co_await resolver.async_resolve(endpoint.host, endpoint.port, kTuple);
  if (resolve_ec) throw Broken("resolving " + endpoint.host, resolve_ec);
  auto& transport = beast::get_lowest_layer(c->stream);
  transport.expires_after(kConnectTimeout);
  auto [connect_ec, ignored] = co_await transport.async_connect(results, kTuple);
  if (connect_ec) throw Broken("connecting to " + endpoint.Url(), connect_ec);
  // SNI for a name; the certificate must name the host (or carry the address) either way.
  if (!IsAddress(endpoint.host)) {
    SSL_set_tlsext_host_name(c->stream.native_handle(), endpoint.host.c_str());
  }
  c->stream.set_verify_callback(ssl::host_name_verification(endpoint.host));
  auto [handshake_ec] = co_await c->stream.async_handshake(ssl::stream_base::client, kTuple);
  if (handshake_ec) throw Broken("TLS with " + endpoint.Url(), handshake_ec);
  co_return c;
}

http::request<http::empty_body> Request(const ApiServerEndpoint& endpoint, Env& env,
                                        const std::string& target) {
  std::string token;
  try {
    token = Trimmed(env.ReadFile(endpoint.token_file, FileKinds::kRegularOnly));
  } catch (const std::exception& e) {
    throw KubeError(KubeError::Kind::kSetup, std::string("API server token ") + e.what());
  }
  if (token.empty()) {
    throw KubeError(KubeError::Kind::kSetup,
                    "API server token " + endpoint.token_file + " is empty");
  }
  http::request<http::empty_body> req{http::verb::get, target, 11};
  const bool v6 = endpoint.host.find(':') != std::string::npos;
  req.set(http::field::host,
          (v6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" + endpoint.port);
  req.set(http::field::authorization, "Bearer " + token);
  req.set(http::field::accept, "application/json");
  req.set(http::field::user_agent, std::string("rdma-webhook/") + build::kVersion);
  return req;
}

// A connection to the API server with the request for `target` written; `deadline` runs from
// here to the answer's last byte.
net::awaitable<std::unique_ptr<Connection>> Send(const ApiServerEndpoint& endpoint, Env& env,
                                                 const std::string& target,
                                                 std::chrono::milliseconds deadline) {
  auto req = Request(endpoint, env, target);
  auto c = co_await Open(endpoint, env);
  beast::get_lowest_layer(c->stream).expires_after(deadline);
  auto [write_ec, written] = co_await http::async_write(c->stream, req, kTuple);
  if (write_ec) throw Broken("sending GET " + target, write_ec);
  co_return c;
}

}  // namespace

net::awaitable<KubeAnswer> KubeClient::Get(std::string target, std::size_t max_body,
                                           std::chrono::milliseconds deadline) {
  auto c = co_await Send(endpoint_, env_, target, deadline);
  http::response_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(kMaxAnswerHeaderBytes));
  parser.body_limit(max_body);
  auto [read_ec, read] = co_await http::async_read(c->stream, c->buffer, parser, kTuple);
  if (read_ec == http::error::body_limit) {
    throw KubeError(KubeError::Kind::kTooLarge, "the answer to GET " + target + " is over " +
                                                    std::to_string(max_body) + " bytes");
  }
  if (read_ec) throw Broken("reading the answer to GET " + target, read_ec);
  co_return KubeAnswer{static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
}

net::awaitable<KubeAnswer> KubeClient::Watch(std::string target, LineSplitter& lines,
                                             std::chrono::milliseconds deadline,
                                             const std::function<bool(std::string_view)>& on_line) {
  auto c = co_await Send(endpoint_, env_, target, deadline);
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(kMaxAnswerHeaderBytes));
  // The stream has no total bound: it ends by the deadline; each line has its own.
  parser.body_limit(boost::none);
  auto [head_ec, head] = co_await http::async_read_header(c->stream, c->buffer, parser, kTuple);
  if (head_ec) throw Broken("reading the answer to the watch " + target, head_ec);
  KubeAnswer answer{static_cast<int>(parser.get().result_int()), {}};
  // On the heap: a coroutine frame stays small.
  std::vector<char> chunk(kStreamChunk);
  bool more = true;
  while (more && !parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    auto [ec, n] = co_await http::async_read_some(c->stream, c->buffer, parser, kTuple);
    if (ec == http::error::need_buffer) ec = {};
    const std::string_view got(chunk.data(), chunk.size() - parser.get().body().size);
    if (answer.status != 200) {
      if (answer.body.size() + got.size() > kMaxStatusBodyBytes) break;  // the status is enough
      answer.body.append(got);
    } else if (!lines.Feed(got, [&](std::string_view line) {
                 if (more) more = on_line(line);
               })) {
      throw KubeError(KubeError::Kind::kTooLarge,
                      "a watch event of " + target + " is over --watch-max-object-bytes");
    }
    if (ec) {
      if (answer.status != 200) break;
      throw Broken("the watch " + target, ec);
    }
  }
  co_return answer;
}

}  // namespace rw::server
