#pragma once
// The server's front: what a request is answered, decided from its parsed head and body alone
// (routes, methods, content type, the body limit, the admission answer, the probes). No
// sockets, Beast or Asio here: the sessions read and write bytes, the front decides, so every
// answer can be tested without a connection.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rdma_webhook/admission/webhook.h"
#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/server/metrics.h"

namespace rw::server {

// What one request is answered with.
struct Answer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;   // for 405
  bool close = false;  // the connection cannot carry another request
};

// What the front reads of a request. Views into the session's parser, valid during the call.
struct Request {
  std::string_view method;  // as sent; methods are case-sensitive ("post" is not POST)
  std::string_view target;  // path and query
  std::string_view content_type;
  std::optional<std::uint64_t> content_length;  // as declared; absent for chunked bodies
  std::string_view body;                        // empty while only the head is read
  unsigned version = 11;                        // 10 for HTTP/1.0, 11 for HTTP/1.1
  // Every Transfer-Encoding field line, joined with ", " (empty: none sent).
  std::string transfer_encoding;
  // Whether the HTTP parser frames the body as chunked: its own reading of those lines, which
  // decides where this request ends and the next one begins.
  bool chunked = false;
  std::string_view content_encoding;  // as sent; empty: none
  std::size_t host_fields = 1;        // how many Host field lines the request had
};

// The paths of the TLS port.
enum class Route { kMutate, kValidate, kHealthz, kUnknown };
Route RouteOf(std::string_view target);
// The `endpoint` label of rdma_webhook_requests_total: mutate, validate, healthz or other.
std::string_view EndpointLabel(Route route);

// A short JSON answer `{"error": message}`, for refusals and for HTTP the session could not read.
Answer Refusal(int status, std::string_view message, bool close = false);
// 413 for a body found over the limit while reading it (chunked, or longer than declared).
Answer BodyOverLimit(std::size_t max_body_bytes);
// The refusal, on either port, of a head whose framing cannot be trusted: a Transfer-Encoding
// whose last coding is not chunked (RFC 9112 §6.3: the length cannot be known, 400 and close),
// one with a coding other than chunked (§6.1: 501 and close), a missing Host on HTTP/1.1 or more
// than one Host (§3.2: 400). Each closes: what follows on the connection is not a request.
std::optional<Answer> FramingRefusal(const Request& head);

// What the head of a TLS-port request decides, once per request: its route (also the metrics
// label) and the refusal it gets, if any.
struct Screening {
  Route route = Route::kUnknown;
  std::optional<Answer> refusal;  // 404, 405, 413, 415, a framing refusal; none: read the body
};

class Front {
 public:
  // `policy` is the policy in force until UsePolicy replaces it; `metrics` counts decisions and
  // findings and is rendered on /metrics; both must not be null / must outlive the front.
  Front(std::size_t max_body_bytes, std::shared_ptr<const policy::Policy> policy, Metrics& metrics,
        admission::Webhook webhook = admission::Webhook());

  // The route of a TLS-port request and the refusal it gets from its head alone.
  Screening Screen(const Request& head) const;
  // The answer to a whole TLS-port request whose head gave `screening`: its refusal,
  // /healthz, or the admission review's answer (counted and logged by the admission log).
  // Thread-safe; never throws for any input.
  Answer Decide(Screening screening, const Request& request) const;
  // Screen, then Decide.
  Answer Respond(const Request& request) const { return Decide(Screen(request), request); }
  // The answer on the plain-HTTP probe port: /healthz, /readyz, /metrics.
  Answer Probe(const Request& request) const;

  std::shared_ptr<const policy::Policy> policy() const { return policy_.load(); }
  // Requests that start after this call are judged with `policy`; those in flight keep theirs.
  void UsePolicy(std::shared_ptr<const policy::Policy> policy) { policy_.store(std::move(policy)); }
  std::size_t max_body_bytes() const { return max_body_bytes_; }

  // The cluster's objects in force: null until the watch publishes (and without
  // --watch-cluster), when reviews read an empty catalogue.
  std::shared_ptr<const catalogue::Catalogue> catalogue() const { return catalogue_.load(); }
  // Requests that start after this call read `catalogue`; those in flight keep theirs.
  void UseCatalogue(std::shared_ptr<const catalogue::Catalogue> catalogue) {
    catalogue_.store(std::move(catalogue));
  }

  // /readyz: 503 "starting" until MarkReady, 503 "shutting down" from MarkTerminating on.
  void MarkReady() { ready_ = true; }
  // Returns whether termination had already begun (a second SIGTERM changes nothing).
  bool MarkTerminating() { return terminating_.exchange(true); }

 private:
  std::optional<Answer> RefusalOf(Route route, const Request& head) const;

  std::size_t max_body_bytes_;
  std::atomic<std::shared_ptr<const policy::Policy>> policy_;
  std::atomic<std::shared_ptr<const catalogue::Catalogue>> catalogue_;
  Metrics& metrics_;
  admission::Webhook webhook_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> terminating_{false};
};

}  // namespace rw::server
