// The raw bytes one client sends on a connection of the TLS port (after the handshake), read
// the way the session reads them (Beast's parser, the same limits, a read buffer capped as the
// session's) and answered by the socket-free front, request after request.
//
// Invariants (docs/http.md, docs/reliability.md section 8):
//  - Beast's parser never throws: inside the session's async_read a throw ends the handler, as
//    the std::length_error of a 65,534-byte trailer field once ended the process;
//  - a line the capped buffer cannot hold fails as buffer_overflow, an error code;
//  - the front never throws and answers with a status docs/http.md lists;
//  - a request with a Transfer-Encoding that does not end in chunked is refused 400 and closes,
//    so nothing after it on the connection is ever parsed as a request;
//  - an answer that closes, or a request that asks to close, ends the connection.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "../../src/server/http_request.h"
#include "fuzz_util.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/server/front.h"
#include "rdma_webhook/server/log.h"
#include "rdma_webhook/server/metrics.h"

namespace {

namespace http = boost::beast::http;
using rw::fuzz::Check;

// A small body limit, so that the fuzzer's inputs reach past it.
constexpr std::size_t kBodyLimit = 4096;
// What one read from the socket delivers at most, as the session's reads of a TLS record.
constexpr std::size_t kReadSize = 4096;
// Requests on one connection the target follows (pipelining).
constexpr int kRequests = 8;

rw::server::Front& TheFront() {
  static rw::server::Metrics metrics;
  static rw::server::Front front(
      kBodyLimit, std::make_shared<const rw::policy::Policy>(rw::policy::DefaultPolicy()), metrics);
  return front;
}

// Feeds `rest` through the capped buffer into the parser until it has a whole request or fails,
// as async_read does; returns the error (none: a whole request).
boost::system::error_code ReadRequest(std::string_view& rest, boost::beast::flat_buffer& buffer,
                                      rw::server::RequestParser& parser) {
  boost::system::error_code ec;
  for (;;) {
    if (buffer.size() > 0) {
      const std::size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (!ec && parser.is_done()) return ec;
      if (ec && ec != http::error::need_more) return ec;
      if (!ec && used > 0) continue;
      ec = {};
    }
    if (rest.empty()) {
      if (!parser.got_some()) return http::error::end_of_stream;
      parser.put_eof(ec);
      return ec;
    }
    const std::size_t room = buffer.max_size() - buffer.size();
    if (room == 0) return http::error::buffer_overflow;
    const std::size_t n = std::min({room, rest.size(), kReadSize});
    std::memcpy(buffer.prepare(n).data(), rest.data(), n);
    buffer.commit(n);
    rest.remove_prefix(n);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = (rw::server::log::Setup("json", "error"), true);
  (void)quiet;
  static const std::set<int> kStatuses = {200, 400, 404, 405, 413, 415, 500, 501};
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  boost::beast::flat_buffer buffer{rw::server::kReadBufferLimit};
  for (int i = 0; i < kRequests; ++i) {
    rw::server::RequestParser parser;
    parser.header_limit(rw::server::kHeaderLimit);
    parser.body_limit(kBodyLimit);
    // A throw from here on is uncaught: libFuzzer reports it.
    if (ReadRequest(rest, buffer, parser)) return 0;  // the session answers 400 or just closes
    const rw::server::Request request = rw::server::RequestOf(parser);
    const rw::server::Front& front = TheFront();
    rw::server::Screening screening = front.Screen(request);
    const rw::server::Answer answer = front.Decide(std::move(screening), request);
    Check(kStatuses.count(answer.status) == 1, "a status docs/http.md does not list",
          std::to_string(answer.status));
    if (!request.transfer_encoding.empty() && !parser.chunked()) {
      Check(answer.status == 400 && answer.close,
            "a Transfer-Encoding not ending in chunked was not refused with a close",
            request.transfer_encoding);
    }
    if (answer.close || !parser.get().keep_alive()) return 0;
  }
  return 0;
}
