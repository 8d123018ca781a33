#pragma once
// The front's Answer as the Beast response a session writes; shared by both sessions.
#include <utility>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "rdma_webhook/server/front.h"

namespace rw::server {

inline boost::beast::http::response<boost::beast::http::string_body> ResponseFor(Answer answer,
                                                                                 unsigned version,
                                                                                 bool keep_alive) {
  namespace http = boost::beast::http;
  http::response<http::string_body> response{static_cast<http::status>(answer.status), version};
  response.set(http::field::content_type, answer.content_type);
  if (!answer.allow.empty()) response.set(http::field::allow, answer.allow);
  response.body() = std::move(answer.body);
  response.keep_alive(keep_alive);
  response.prepare_payload();
  return response;
}

// The front's view of a request Beast has parsed (the head, and the body once read).
template <class Parser>
Request RequestOf(const Parser& parser) {
  namespace http = boost::beast::http;
  const auto& message = parser.get();
  Request request;
  request.method = message.method_string();
  request.target = message.target();
  request.content_type = message[http::field::content_type];
  if (parser.content_length()) request.content_length = *parser.content_length();
  request.body = message.body();
  return request;
}

}  // namespace rw::server
