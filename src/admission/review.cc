#include "rdma_webhook/admission/review.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/codec/json_text.h"
#include "rdma_webhook/codec/yaml.h"

namespace rw::admission {
namespace {

namespace bj = boost::json;
using nlohmann::json;

// The member `key` of an object, or nullptr when it is absent or null.
const bj::value* Present(const bj::object& parent, std::string_view key) {
  const bj::value* v = parent.if_contains(key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

// `source` moved into `target` with its storage (Boost.JSON's move assignment would copy it into
// the target's).
void Adopt(bj::value& target, bj::value&& source) {
  target.~value();
  ::new (&target) bj::value(std::move(source));
}

// Reads an optional string field; a present value of another type is a decode error, because
// a review the API server wrote never has one.
std::string OptionalString(const bj::object& parent, const char* key, std::string_view where,
                           const std::string& uid, const std::string& api_version) {
  const bj::value* v = Present(parent, key);
  if (v == nullptr) return {};
  if (!v->is_string()) {
    throw DecodeError(std::string(where) + "." + key + " must be a string", uid, api_version);
  }
  return std::string(v->get_string());
}

struct Envelope {
  std::string uid, api_version;
};

// The uid and apiVersion of a review whose text nlohmann refused only for a number out of a
// double's range (or that a NUL byte cuts short): every such number is read as 0 and the text
// parsed again, without throwing. Empty fields when it is still no review. It runs only on
// bodies already refused, never on a decodable review, so it costs the request path nothing:
// measured on a 10.8 KB review, DecodeReview took 111-131 us valid and 557-561 us with a 1e400
// (fast parser, nlohmann, then this), and what it buys is the uid echo that lets the API server
// read the 400 as an answer to its review.
Envelope ReadEnvelope(std::string_view body) {
  std::string text;
  text.reserve(body.size());
  bool in_string = false;
  for (std::size_t i = 0; i < body.size();) {
    const char c = body[i];
    if (in_string) {
      text += c;
      if (c == '\\' && i + 1 < body.size()) text += body[++i];
      if (c == '"') in_string = false;
      ++i;
    } else if (c == '"') {
      in_string = true;
      text += c;
      ++i;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i + 1;
      while (end < body.size() && body[end] != '\0' &&
             std::strchr("0123456789.eE+-", body[end]) != nullptr) {
        ++end;
      }
      const std::string number(body.substr(i, end - i));
      const double value = std::strtod(number.c_str(), nullptr);
      text += std::isfinite(value) ? number : std::string("0");
      i = end;
    } else {
      text += c;
      ++i;
    }
  }
  Envelope out;
  const json review = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!review.is_object()) return out;
  auto api = review.find("apiVersion");
  if (api == review.end() || !api->is_string() ||
      (*api != kApiVersionV1 && *api != kApiVersionV1beta1) ||
      review.value("kind", json()) != "AdmissionReview") {
    return out;
  }
  auto req = review.find("request");
  if (req == review.end() || !req->is_object()) return out;
  auto uid = req->find("uid");
  if (uid == req->end() || !uid->is_string()) return out;
  out.uid = uid->get<std::string>();
  out.api_version = api->get<std::string>();
  return out;
}

// The review parsed into `arena`. Returned by value, so the caller's value is constructed in the
// arena (Boost.JSON's assignment would copy it into the target's storage).
bj::value ParseReview(std::string_view body, const codec::DomArena& arena) {
  try {
    return codec::ParseDom(body, codec::kMaxNestingDepth, arena.storage());
  } catch (const codec::JsonTooDeep&) {
    // Hostile depth is refused before anything that deep is built (docs/reliability.md).
    throw DecodeError("JSON nested deeper than " + std::to_string(codec::kMaxNestingDepth) +
                      " levels");
  } catch (const json::parse_error& e) {
    throw DecodeError(std::string("malformed JSON: ") + e.what());
  } catch (const json::out_of_range& e) {
    // A number beyond a double (1e400, or an integer of 400 digits) is valid JSON syntax that no
    // decoder of the API server's can hold: Go's encoding/json answers "cannot unmarshal number
    // 1e400 into Go value of type float64", so no object the API server stored carries one. The
    // body is malformed input (400), not a fault of ours (500). The envelope itself may still
    // be readable, as controller-runtime reads it (the object stays raw bytes there): echo its
    // uid when it is.
    const Envelope envelope = ReadEnvelope(body);
    throw DecodeError(std::string("malformed JSON: ") + e.what(), envelope.uid,
                      envelope.api_version);
  }
}

}  // namespace

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    this->~Request();
    new (this) Request(std::move(other));
  }
  return *this;
}

Request DecodeReview(std::string_view body) {
  // nlohmann's reader, which has the last word on text the fast parser refuses, takes a NUL byte
  // for the end of its input: a review followed by `\0` and garbage was read as the review. A
  // raw NUL is never JSON (RFC 8259 §7: control characters are escaped inside strings), and Go's
  // encoding/json refuses it, so the body is malformed; the uid is echoed when what precedes the
  // NUL holds one.
  if (const auto nul = body.find('\0'); nul != std::string_view::npos) {
    const Envelope envelope = ReadEnvelope(body.substr(0, nul));
    throw DecodeError("malformed JSON: a NUL byte at offset " + std::to_string(nul), envelope.uid,
                      envelope.api_version);
  }
  // Sized from the body, so a review is parsed into one block; every value below lives in it,
  // and the arena outlives them all: it goes to the request last.
  auto arena = std::make_unique<codec::DomArena>(body.size());
  bj::value review = ParseReview(body, *arena);
  if (!review.is_object()) throw DecodeError("not an AdmissionReview: body is not a JSON object");
  const bj::object& top = review.get_object();
  const bj::value* api = top.if_contains("apiVersion");
  if (api == nullptr || !api->is_string() ||
      (api->get_string() != kApiVersionV1 && api->get_string() != kApiVersionV1beta1)) {
    throw DecodeError("not an AdmissionReview: apiVersion must be admission.k8s.io/v1 or v1beta1");
  }
  const bj::value* kind = top.if_contains("kind");
  if (kind == nullptr || !kind->is_string() || kind->get_string() != "AdmissionReview") {
    throw DecodeError("not an AdmissionReview: kind must be AdmissionReview");
  }
  bj::value* request = review.get_object().if_contains("request");
  if (request == nullptr || !request->is_object()) {
    throw DecodeError("AdmissionReview without request");
  }
  bj::object& req = request->get_object();
  Request r;
  r.api_version = std::string(api->get_string());
  const bj::value* uid = req.if_contains("uid");
  if (uid == nullptr || !uid->is_string() || uid->get_string().empty()) {
    throw DecodeError("request.uid must be a non-empty string", {}, r.api_version);
  }
  r.uid = std::string(uid->get_string());
  r.operation = OptionalString(req, "operation", "request", r.uid, r.api_version);
  if (r.operation.empty()) {
    throw DecodeError("request.operation must be set", r.uid, r.api_version);
  }
  r.sub_resource = OptionalString(req, "subResource", "request", r.uid, r.api_version);
  r.ns = OptionalString(req, "namespace", "request", r.uid, r.api_version);
  r.name = OptionalString(req, "name", "request", r.uid, r.api_version);
  if (const bj::value* dry = Present(req, "dryRun")) {
    if (!dry->is_bool())
      throw DecodeError("request.dryRun must be a boolean", r.uid, r.api_version);
    r.dry_run = dry->get_bool();
  }
  // Go's decoder of the API server's types (controller-runtime's, say) refuses these as anything
  // but objects; they are not read here, but a review that carries them wrong is not one.
  for (const char* field : {"kind", "resource", "requestKind", "requestResource", "userInfo"}) {
    if (const bj::value* f = Present(req, field); f != nullptr && !f->is_object())
      throw DecodeError(std::string("request.") + field + " must be a JSON object", r.uid,
                        r.api_version);
  }
  // Moved out of the review by construction: both values stay in the arena.
  if (bj::value* obj = req.if_contains("object")) Adopt(r.object, std::move(*obj));
  if (bj::value* old = req.if_contains("oldObject")) Adopt(r.old_object, std::move(*old));

  const bool writes = r.operation == "CREATE" || r.operation == "UPDATE";
  if (writes && r.object.is_null()) {
    throw DecodeError("request.object is missing for " + r.operation, r.uid, r.api_version);
  }
  if (writes && !r.object.is_object()) {
    throw DecodeError("request.object must be a JSON object", r.uid, r.api_version);
  }
  if (r.operation == "UPDATE" && !r.old_object.is_object()) {
    throw DecodeError("request.oldObject must be a JSON object for UPDATE", r.uid, r.api_version);
  }
  if (r.ns.empty() && r.object.is_object()) {
    const bj::value* meta = r.object.get_object().if_contains("metadata");
    if (meta != nullptr && meta->is_object()) {
      const bj::value* ns = meta->get_object().if_contains("namespace");
      if (ns != nullptr && ns->is_string()) r.ns = std::string(ns->get_string());
    }
  }
  r.arena = std::move(arena);
  return r;
}

namespace {

// The response is written by hand: it is a handful of known fields, and nlohmann's serializer
// validates UTF-8 byte by byte, which made encoding a tenth of a small review's cost. Keys are
// written in the order nlohmann wrote them (sorted), so the bytes did not change.
void AppendString(std::string& out, std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  // Escapes, and bytes that are not UTF-8 replaced rather than thrown on (strings come from
  // parsed JSON or the core).
  out += json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

void AppendMember(std::string& out, bool& first, std::string_view key) {
  if (!first) out += ',';
  first = false;
  AppendString(out, key);
  out += ':';
}

}  // namespace

std::string EncodeReview(std::string_view api_version, const Response& response) {
  const std::string_view version =
      api_version == kApiVersionV1beta1 ? kApiVersionV1beta1 : kApiVersionV1;
  std::string out;
  out.reserve(256 + (response.patch ? response.patch->size() * 4 / 3 : 0) +
              response.status.message.size());
  out += "{\"apiVersion\":";
  AppendString(out, version);
  out += ",\"kind\":\"AdmissionReview\",\"response\":{";
  bool first = true;
  AppendMember(out, first, "allowed");
  out += response.allowed ? "true" : "false";
  if (!response.audit_annotations.empty()) {
    AppendMember(out, first, "auditAnnotations");
    out += '{';
    bool first_annotation = true;
    for (const auto& [key, value] : response.audit_annotations) {
      AppendMember(out, first_annotation, key);
      AppendString(out, value);
    }
    out += '}';
  }
  // controller-runtime sets patchType only together with a patch; the API server rejects a
  // patchType without one.
  if (response.patch) {
    AppendMember(out, first, "patch");
    // Base64's alphabet needs no escape: the scan AppendString makes would find none.
    out += '"';
    // Written into the answer itself: a separate encoded copy was the largest transient of a
    // large review's answer (4/3 of the patch).
    AppendBase64(out, *response.patch);
    out += '"';
    AppendMember(out, first, "patchType");
    out += "\"JSONPatch\"";
  }
  if (response.status.code != 0) {
    AppendMember(out, first, "status");
    out += "{\"code\":" + std::to_string(response.status.code);
    if (!response.status.message.empty()) {
      out += ",\"message\":";
      AppendString(out, response.status.message);
    }
    out += ",\"metadata\":{}";
    if (!response.status.reason.empty()) {
      out += ",\"reason\":";
      AppendString(out, response.status.reason);
    }
    out += response.allowed ? ",\"status\":\"Success\"}" : ",\"status\":\"Failure\"}";
  }
  AppendMember(out, first, "uid");
  AppendString(out, response.uid);
  if (!response.warnings.empty()) {
    AppendMember(out, first, "warnings");
    out += '[';
    for (std::size_t i = 0; i < response.warnings.size(); ++i) {
      if (i > 0) out += ',';
      AppendString(out, response.warnings[i]);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

std::string Base64(std::string_view bytes) {
  std::string out;
  AppendBase64(out, bytes);
  return out;
}

namespace {

constexpr std::array<char, 64> kBase64Alphabet = {
    'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P',
    'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'a', 'b', 'c', 'd', 'e', 'f',
    'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v',
    'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '+', '/'};

// The two characters of every 12-bit value (8 KiB), so that three bytes take two lookups and two
// stores: a character at a time took ~32 instructions per three bytes of the patch.
constexpr std::array<char, 8192> kBase64Pairs = [] {
  std::array<char, 8192> pairs{};
  for (std::size_t v = 0; v < 4096; ++v) {
    pairs[2 * v] = kBase64Alphabet[v >> 6];
    pairs[2 * v + 1] = kBase64Alphabet[v & 63];
  }
  return pairs;
}();

}  // namespace

void AppendBase64(std::string& out, std::string_view bytes) {
  // Sized once and written by index: appending a character at a time checked the capacity for
  // every one of them, on the one answer field that grows with the patch.
  const std::size_t start = out.size();
  out.resize(start + (bytes.size() + 2) / 3 * 4, '=');
  char* o = out.data() + start;
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  const char* pairs = kBase64Pairs.data();
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3, o += 4) {
    const unsigned v = (unsigned{in[i]} << 16) | (unsigned{in[i + 1]} << 8) | in[i + 2];
    std::memcpy(o, pairs + 2 * (v >> 12), 2);
    std::memcpy(o + 2, pairs + 2 * (v & 4095), 2);
  }
  const std::size_t rest = n - i;
  if (rest > 0) {  // the padding '=' is already there
    unsigned v = unsigned{in[i]} << 16;
    if (rest == 2) v |= unsigned{in[i + 1]} << 8;
    o[0] = kBase64Alphabet[(v >> 18) & 63];
    o[1] = kBase64Alphabet[(v >> 12) & 63];
    if (rest == 2) o[2] = kBase64Alphabet[(v >> 6) & 63];
  }
}

}  // namespace rw::admission
