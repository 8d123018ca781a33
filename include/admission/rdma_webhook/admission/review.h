#pragma once
// AdmissionReview (admission.k8s.io/v1 and v1beta1) decoding and encoding. No I/O: bytes in,
// values out, values in, bytes out. The two versions share one shape; the response is written
// in the version of the request.
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "rdma_webhook/codec/dom.h"

namespace rw::admission {

inline constexpr std::string_view kApiVersionV1 = "admission.k8s.io/v1";
inline constexpr std::string_view kApiVersionV1beta1 = "admission.k8s.io/v1beta1";

// The body is not JSON, not an AdmissionReview, or lacks what a review must carry. Answered
// with HTTP 400. `uid` is set when the request's uid could be read, so the answer can echo it.
class DecodeError : public std::runtime_error {
 public:
  DecodeError(const std::string& message, std::string uid = {}, std::string api_version = {})
      : std::runtime_error(message), uid_(std::move(uid)), api_version_(std::move(api_version)) {}
  const std::string& uid() const { return uid_; }
  const std::string& api_version() const { return api_version_; }

 private:
  std::string uid_;
  std::string api_version_;
};

// The fields of `request` the webhook reads.
struct Request {
  std::string api_version;  // of the review: kApiVersionV1 or kApiVersionV1beta1
  std::string uid;
  std::string operation;     // CREATE, UPDATE, DELETE, CONNECT
  std::string sub_resource;  // "" for the main resource; "status", "scale", ...
  std::string ns;            // request.namespace, else object.metadata.namespace
  std::string name;
  bool dry_run = false;
  // The arena the review was parsed into (codec::DomArena): the objects live in it and go with
  // it at once. Declared before them, so it is freed after them.
  std::unique_ptr<codec::DomArena> arena;
  boost::json::value object;      // null when absent (DELETE)
  boost::json::value old_object;  // null when absent (CREATE)

  Request() = default;
  Request(Request&&) = default;
  // Boost.JSON's move assignment keeps the target's storage and would copy the objects into
  // it: a request is moved by construction, with its arena.
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
};

// Throws DecodeError. Refuses nesting deeper than codec::kMaxNestingDepth before parsing, and a
// missing or non-object `object` for CREATE and UPDATE.
Request DecodeReview(std::string_view body);

struct Status {
  int code = 0;  // 0: no status written
  std::string reason;
  std::string message;
};

// The fields of `response` the webhook writes.
struct Response {
  std::string uid;
  bool allowed = true;
  std::optional<std::string> patch;  // RFC 6902 JSON text; written base64 with patchType JSONPatch
  std::map<std::string, std::string> audit_annotations;
  std::vector<std::string> warnings;
  Status status;
};

// The review in `api_version` (v1 when empty or unknown) holding `response`.
std::string EncodeReview(std::string_view api_version, const Response& response);

// RFC 4648 base64 with padding; AppendBase64 writes it at the end of `out`.
std::string Base64(std::string_view bytes);
void AppendBase64(std::string& out, std::string_view bytes);

}  // namespace rw::admission
