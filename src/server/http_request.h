#pragma once
// How a session reads a request with Beast: the bounds it parses with, and the front's view of
// what Beast parsed. Shared by the sessions and the fuzz target over a connection's raw bytes
// (tests/fuzz/fuzz_http.cc), so that both read requests the same way.
#include <cstddef>
#include <cstdint>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "rdma_webhook/server/front.h"

namespace rw::server {

// API servers send a handful of short headers; 16 KiB leaves room for proxies' additions.
inline constexpr std::uint32_t kHeaderLimit = 16 * 1024;
// Kubelet's probes and metrics scrapes send small requests.
inline constexpr std::uint32_t kProbeHeaderLimit = 8 * 1024;
inline constexpr std::uint64_t kProbeBodyLimit = 4096;
// What a connection holds of a request besides its body: the head, one chunk-size line with its
// extensions, or the trailer section. Beast's parser needs each whole in the buffer, and bounds
// only the head (header_limit): with an unbounded buffer a chunk line `2;` followed by 256 MiB
// was held whole, and a trailer field of 65,534 bytes made Beast's fields throw
// std::length_error out of the I/O loop, killing the process. With the buffer capped, a longer
// line fails the read with http::error::buffer_overflow (400 and close), far below 65,533.
inline constexpr std::size_t kReadBufferLimit = 2 * kHeaderLimit;            // 32 KiB
inline constexpr std::size_t kProbeReadBufferLimit = 2 * kProbeHeaderLimit;  // 16 KiB

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// The front's view of a request Beast has parsed (the head, and the body once read). Views into
// the parser's message, valid while it lives.
inline Request RequestOf(const RequestParser& parser) {
  namespace http = boost::beast::http;
  const auto& message = parser.get();
  Request request;
  request.method = message.method_string();
  request.target = message.target();
  request.content_type = message[http::field::content_type];
  if (parser.content_length()) request.content_length = *parser.content_length();
  request.body = message.body();
  request.version = message.version();
  const auto [first_te, end_te] = message.equal_range(http::field::transfer_encoding);
  for (auto field = first_te; field != end_te; ++field) {
    if (!request.transfer_encoding.empty()) request.transfer_encoding += ", ";
    request.transfer_encoding += field->value();
  }
  request.chunked = parser.chunked();
  request.content_encoding = message[http::field::content_encoding];
  request.host_fields = message.count(http::field::host);
  return request;
}

}  // namespace rw::server
