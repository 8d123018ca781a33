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

class Front {
 public:
  // `policy` is the policy in force until UsePolicy replaces it; `metrics` counts decisions and
  // findings and is rendered on /metrics; both must not be null / must outlive the front.
  Front(std::size_t max_body_bytes, std::shared_ptr<const policy::Policy> policy, Metrics& metrics,
        admission::Webhook webhook = admission::Webhook());

  // The refusal a TLS-port request gets from its head alone (404, 405, 413, 415), or nothing
  // when its body is worth reading.
  std::optional<Answer> Screen(const Request& head) const;
  // The answer to a whole TLS-port request: Screen's refusal, /healthz, or the admission
  // review's answer (counted and logged by the admission log). Thread-safe; never throws
  // for any input.
  Answer Respond(const Request& request) const;
  // The answer on the plain-HTTP probe port: /healthz, /readyz, /metrics.
  Answer Probe(const Request& request) const;

  std::shared_ptr<const policy::Policy> policy() const { return policy_.load(); }
  // Requests that start after this call are judged with `policy`; those in flight keep theirs.
  void UsePolicy(std::shared_ptr<const policy::Policy> policy) { policy_.store(std::move(policy)); }
  std::size_t max_body_bytes() const { return max_body_bytes_; }

  // /readyz: 503 "starting" until MarkReady, 503 "shutting down" from MarkTerminating on.
  void MarkReady() { ready_ = true; }
  // Returns whether termination had already begun (a second SIGTERM changes nothing).
  bool MarkTerminating() { return terminating_.exchange(true); }

 private:
  std::size_t max_body_bytes_;
  std::atomic<std::shared_ptr<const policy::Policy>> policy_;
  Metrics& metrics_;
  admission::Webhook webhook_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> terminating_{false};
};

}  // namespace rw::server
