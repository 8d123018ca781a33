#include "rdma_webhook/server/front.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "admission_log.h"

namespace rw::server {
namespace {

// HTTP status codes the front answers with, named as RFC 9110 names them.
constexpr int kOk = 200;
constexpr int kNotFound = 404;
constexpr int kMethodNotAllowed = 405;
constexpr int kPayloadTooLarge = 413;
constexpr int kUnsupportedMediaType = 415;
constexpr int kNotImplemented = 501;
constexpr int kServiceUnavailable = 503;
constexpr int kBadRequest = 400;

Answer Text(int status, std::string body) {
  Answer a;
  a.status = status;
  a.content_type = "text/plain; charset=utf-8";
  a.body = std::move(body);
  return a;
}

Answer WrongMethod(std::string_view message, std::string allow) {
  Answer a = Refusal(kMethodNotAllowed, message);
  a.allow = std::move(allow);
  return a;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// application/json with any parameters (charset=utf-8), case-insensitive.
bool IsJson(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  while (!media.empty() && media.front() == ' ') media.remove_prefix(1);
  return EqualsIgnoringCase(media, "application/json");
}

bool IsRead(std::string_view method) { return method == "GET" || method == "HEAD"; }

bool StartsWithIgnoringCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && EqualsIgnoringCase(text.substr(0, prefix.size()), prefix);
}

// The path of a request target, without the query. The absolute form
// (`https://host/mutate?x`), which RFC 9112 §3.2.2 says a server must accept, is reduced to
// its path; an absolute form without a path is "/".
std::string_view PathOf(std::string_view target) {
  for (std::string_view scheme : {"https://", "http://"}) {
    if (StartsWithIgnoringCase(target, scheme)) {
      target.remove_prefix(scheme.size());
      const auto slash = target.find_first_of("/?");
      target = slash == std::string_view::npos || target[slash] == '?' ? std::string_view("/")
                                                                       : target.substr(slash);
      break;
    }
  }
  return target.substr(0, target.find('?'));
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

Route RouteOf(std::string_view target) {
  const std::string_view path = PathOf(target);
  if (path == "/mutate") return Route::kMutate;
  if (path == "/validate") return Route::kValidate;
  if (path == "/healthz") return Route::kHealthz;
  return Route::kUnknown;
}

std::string_view EndpointLabel(Route route) {
  switch (route) {
    case Route::kMutate:
      return "mutate";
    case Route::kValidate:
      return "validate";
    case Route::kHealthz:
      return "healthz";
    case Route::kUnknown:
      break;
  }
  return "other";
}

Answer Refusal(int status, std::string_view message, bool close) {
  Answer a;
  a.status = status;
  // replace: a message quoting the client's bytes must still be valid JSON.
  a.body = nlohmann::json{{"error", message}}.dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace);
  a.close = close;
  return a;
}

Answer BodyOverLimit(std::size_t max_body_bytes) {
  return Refusal(kPayloadTooLarge,
                 "body is over the limit of " + std::to_string(max_body_bytes) + " bytes", true);
}

std::optional<Answer> FramingRefusal(const Request& head) {
  if (head.host_fields > 1 || (head.host_fields == 0 && head.version >= 11)) {
    return Refusal(kBadRequest,
                   head.host_fields == 0 ? "an HTTP/1.1 request needs a Host header"
                                         : "more than one Host header",
                   true);
  }
  if (head.transfer_encoding.empty()) return std::nullopt;
  // The codings in order; chunked must be the last one and only once.
  std::string_view rest = head.transfer_encoding;
  std::string_view last;
  bool other = false;
  std::size_t chunked = 0;
  bool malformed = false;
  // RFC 9110 §5.6.2: a coding's name is a token. Beast's parser reads a list with a name that is
  // not one (`bid",chunked`) as not chunked, so it is refused as a framing error (400), not as
  // an unsupported coding (501).
  const auto token_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  };
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view coding = Trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (coding.empty()) continue;
    last = coding;
    const std::string_view name = Trimmed(coding.substr(0, coding.find(';')));
    if (name.empty() || !std::all_of(name.begin(), name.end(), token_char)) malformed = true;
    if (EqualsIgnoringCase(coding, "chunked")) {
      ++chunked;
    } else {
      other = true;
    }
  }
  // The parser, not this reading, decides where the body ends: a list it does not frame as
  // chunked leaves the body's length unknown here, whatever the names say. Beast's list reading
  // takes no coding parameters (`gzip;q=1, chunked`, `b;x=y",chunked`).
  if (!head.chunked) malformed = true;
  if (malformed || !EqualsIgnoringCase(last, "chunked") || chunked != 1) {
    return Refusal(kBadRequest,
                   "Transfer-Encoding '" + head.transfer_encoding +
                       "' does not end in chunked once; the body length cannot be known",
                   true);
  }
  if (other) {
    return Refusal(kNotImplemented,
                   "Transfer-Encoding '" + head.transfer_encoding + "': only chunked is supported",
                   true);
  }
  return std::nullopt;
}

Front::Front(std::size_t max_body_bytes, std::shared_ptr<const policy::Policy> policy,
             Metrics& metrics, admission::Webhook webhook)
    : max_body_bytes_(max_body_bytes),
      policy_(std::move(policy)),
      metrics_(metrics),
      webhook_(std::move(webhook)) {}

Screening Front::Screen(const Request& head) const {
  const Route route = RouteOf(head.target);
  return Screening{route, RefusalOf(route, head)};
}

std::optional<Answer> Front::RefusalOf(Route route, const Request& head) const {
  if (auto refusal = FramingRefusal(head)) return refusal;
  const bool admission = route == Route::kMutate || route == Route::kValidate;
  if (route == Route::kUnknown) {
    return Refusal(kNotFound, "unknown path; use /mutate, /validate or /healthz");
  }
  if (admission && head.method != "POST") return WrongMethod("use POST", "POST");
  if (route == Route::kHealthz && !IsRead(head.method)) return WrongMethod("use GET", "GET, HEAD");
  if (admission && head.content_length && *head.content_length > max_body_bytes_) {
    return Refusal(kPayloadTooLarge,
                   "body of " + std::to_string(*head.content_length) +
                       " bytes is over the limit of " + std::to_string(max_body_bytes_),
                   true);
  }
  if (admission && !IsJson(head.content_type)) {
    return Refusal(kUnsupportedMediaType, "content type must be application/json");
  }
  // RFC 9110 §15.5.16: a content coding the server does not apply is a 415, not a body to
  // parse as JSON.
  const std::string_view coding = Trimmed(head.content_encoding);
  if (admission && !coding.empty() && !EqualsIgnoringCase(coding, "identity")) {
    return Refusal(kUnsupportedMediaType, "Content-Encoding '" + std::string(coding) +
                                              "' is not supported; send the " + "body unencoded");
  }
  return std::nullopt;
}

Answer Front::Decide(Screening screening, const Request& request) const {
  if (screening.refusal) return std::move(*screening.refusal);
  const Route route = screening.route;
  if (route == Route::kHealthz) return Text(kOk, "ok\n");
  const auto endpoint =
      route == Route::kMutate ? admission::Endpoint::kMutate : admission::Endpoint::kValidate;
  const auto policy = policy_.load();
  const auto catalogue = catalogue_.load();
  admission::Outcome outcome = webhook_.Handle(
      endpoint, request.body, *policy, catalogue ? *catalogue : catalogue::Catalogue::Empty());
  RecordAdmission(endpoint, outcome, metrics_);
  Answer answer;
  answer.status = outcome.http_status;
  answer.body = std::move(outcome.body);
  return answer;
}

Answer Front::Probe(const Request& request) const {
  if (auto refusal = FramingRefusal(request)) return std::move(*refusal);
  const std::string_view path = PathOf(request.target);
  if (path != "/healthz" && path != "/readyz" && path != "/metrics") {
    return Refusal(kNotFound, "unknown path; use /healthz, /readyz or /metrics");
  }
  if (!IsRead(request.method)) return WrongMethod("use GET", "GET, HEAD");
  if (path == "/healthz") return Text(kOk, "ok\n");
  if (path == "/readyz") {
    // Fails as soon as SIGTERM arrives so endpoints drop the pod during the delay.
    if (ready_ && !terminating_) return Text(kOk, "ok\n");
    return Text(kServiceUnavailable, terminating_ ? "shutting down\n" : "starting\n");
  }
  Answer a = Text(kOk, metrics_.Render());
  a.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return a;
}

}  // namespace rw::server
