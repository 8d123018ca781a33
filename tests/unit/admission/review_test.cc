#include "rdma_webhook/admission/review.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rdma_webhook/codec/dom.h"

namespace rw::admission {
namespace {

using nlohmann::json;

std::string Review(const json& request, std::string_view version = kApiVersionV1) {
  return json{{"apiVersion", version}, {"kind", "AdmissionReview"}, {"request", request}}.dump();
}

const json kPod = {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", "p"}, {"namespace", "from-object"}}},
                   {"spec", {{"containers", json::array()}}}};

struct DecodeFailure {
  std::string name;
  std::string body;
  std::string uid_echoed;  // the uid the error carries, "" when unknown
};

class DecodeFailures : public ::testing::TestWithParam<DecodeFailure> {};

TEST_P(DecodeFailures, AreDecodeErrors) {
  try {
    DecodeReview(GetParam().body);
    FAIL() << "decoded";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.uid(), GetParam().uid_echoed);
    EXPECT_FALSE(std::string(e.what()).empty());
  }
}

std::string Nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

INSTANTIATE_TEST_SUITE_P(
    Table, DecodeFailures,
    ::testing::Values(
        DecodeFailure{"MalformedJson", "{\"apiVersion\":", ""}, DecodeFailure{"EmptyBody", "", ""},
        DecodeFailure{"NotAnObject", "[1,2]", ""},
        DecodeFailure{"OtherApiVersion",
                      R"({"apiVersion":"v1","kind":"AdmissionReview","request":{"uid":"u"}})", ""},
        DecodeFailure{"OtherKind",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"u"}})",
                      ""},
        DecodeFailure{"NoRequest",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", ""},
        DecodeFailure{"NoUid", Review({{"operation", "CREATE"}, {"object", kPod}}), ""},
        DecodeFailure{"UidNotString", Review({{"uid", 7}, {"operation", "CREATE"}}), ""},
        DecodeFailure{"NoOperation", Review({{"uid", "u1"}, {"object", kPod}}), "u1"},
        DecodeFailure{"CreateWithoutObject", Review({{"uid", "u2"}, {"operation", "CREATE"}}),
                      "u2"},
        DecodeFailure{"ObjectIsAString",
                      Review({{"uid", "u3"}, {"operation", "CREATE"}, {"object", "pod"}}), "u3"},
        DecodeFailure{"ObjectIsAnArray",
                      Review({{"uid", "u4"}, {"operation", "CREATE"}, {"object", json::array()}}),
                      "u4"},
        DecodeFailure{"UpdateWithoutOldObject",
                      Review({{"uid", "u5"}, {"operation", "UPDATE"}, {"object", kPod}}), "u5"},
        DecodeFailure{
            "NamespaceNotString",
            Review({{"uid", "u6"}, {"operation", "CREATE"}, {"namespace", 1}, {"object", kPod}}),
            "u6"},
        DecodeFailure{
            "DryRunNotBoolean",
            Review({{"uid", "u7"}, {"operation", "CREATE"}, {"dryRun", "yes"}, {"object", kPod}}),
            "u7"},
        // Typed members of the request Go's decoder refuses in another shape.
        DecodeFailure{
            "KindNotAnObject",
            Review({{"uid", "u8"}, {"operation", "CREATE"}, {"kind", "Pod"}, {"object", kPod}}),
            "u8"},
        DecodeFailure{"UserInfoNotAnObject",
                      Review({{"uid", "u9"},
                              {"operation", "CREATE"},
                              {"userInfo", json::array()},
                              {"object", kPod}}),
                      "u9"},
        DecodeFailure{"HostileNesting", "{\"a\":" + Nested(100000) + "}", ""},
        // Numbers no double holds: valid syntax Go's decoder refuses, so malformed input; the
        // envelope is still read for its uid and version, wherever the number stands.
        DecodeFailure{"NumberOverflowInObject",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                      R"("request":{"uid":"big","operation":"CREATE","object":{"n":1e400}}})",
                      "big"},
        DecodeFailure{"NumberOverflowBeforeUid",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                      R"("request":{"object":{"n":-1E+400},"uid":"first","operation":"CREATE"}})",
                      "first"},
        DecodeFailure{"IntegerOverflow",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                      R"("request":{"uid":"digits","operation":"CREATE","object":{"n":1)" +
                          std::string(400, '0') + "}}}",
                      "digits"},
        DecodeFailure{"NumberOverflowInAStringLookalike",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                      R"("request":{"uid":"s\"1e400","operation":"CREATE","object":{"n":1e999}}})",
                      "s\"1e400"},
        DecodeFailure{"NumberOverflowOutsideAReview", R"({"n":1e400})", ""},
        DecodeFailure{"NumberOverflowAndBrokenAfter",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                      R"("request":{"uid":"x","object":{"n":1e400},)",
                      ""}),
    [](const auto& row) { return row.param.name; });

TEST(DecodeReview, ANulByteIsMalformedEvenAfterAWholeReview) {
  const std::string review =
      Review({{"uid", "n-1"}, {"operation", "CREATE"}, {"object", kPod}}, kApiVersionV1beta1);
  for (const std::string& tail : {std::string("\0", 1), std::string("\0garbage", 8)}) {
    try {
      DecodeReview(review + tail);
      FAIL() << "decoded";
    } catch (const DecodeError& e) {
      EXPECT_NE(std::string(e.what()).find("NUL byte at offset " + std::to_string(review.size())),
                std::string::npos)
          << e.what();
      EXPECT_EQ(e.uid(), "n-1");
      EXPECT_EQ(e.api_version(), kApiVersionV1beta1);
    }
  }
  EXPECT_THROW(DecodeReview(std::string("{\0}", 3)), DecodeError);
}

TEST(DecodeReview, ReadsV1) {
  const Request r = DecodeReview(Review({{"uid", "abc"},
                                         {"operation", "CREATE"},
                                         {"namespace", "team-a"},
                                         {"name", "p"},
                                         {"dryRun", true},
                                         {"object", kPod}}));
  EXPECT_EQ(r.api_version, kApiVersionV1);
  EXPECT_EQ(r.uid, "abc");
  EXPECT_EQ(r.operation, "CREATE");
  EXPECT_EQ(r.ns, "team-a");
  EXPECT_EQ(r.name, "p");
  EXPECT_TRUE(r.dry_run);
  EXPECT_EQ(rw::codec::FromDom(r.object), kPod);
  EXPECT_TRUE(r.old_object.is_null());
}

// The objects are parsed into the request's own arena and moved out of the review with it:
// a copy into the default heap would cost what the arena saves (codec/dom.h).
TEST(DecodeReview, ObjectsLiveInTheRequestsArena) {
  Request r = DecodeReview(
      Review({{"uid", "u"}, {"operation", "UPDATE"}, {"object", kPod}, {"oldObject", kPod}}));
  ASSERT_NE(r.arena, nullptr);
  EXPECT_EQ(r.object.storage().get(), r.arena->storage().get());
  EXPECT_EQ(r.old_object.storage().get(), r.arena->storage().get());
  const void* arena = r.arena->storage().get();
  Request moved = std::move(r);
  EXPECT_EQ(moved.object.storage().get(), arena);
  Request assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.object.storage().get(), arena);
  EXPECT_EQ(rw::codec::FromDom(assigned.old_object), kPod);
}

TEST(DecodeReview, ReadsV1beta1) {
  const Request r = DecodeReview(
      Review({{"uid", "b"}, {"operation", "CREATE"}, {"object", kPod}}, kApiVersionV1beta1));
  EXPECT_EQ(r.api_version, kApiVersionV1beta1);
}

TEST(DecodeReview, NamespaceFallsBackToObjectMetadata) {
  const Request r = DecodeReview(Review({{"uid", "b"}, {"operation", "CREATE"}, {"object", kPod}}));
  EXPECT_EQ(r.ns, "from-object");
}

TEST(DecodeReview, DeleteNeedsNoObject) {
  const Request r =
      DecodeReview(Review({{"uid", "d"}, {"operation", "DELETE"}, {"oldObject", kPod}}));
  EXPECT_TRUE(r.object.is_null());
  EXPECT_EQ(r.operation, "DELETE");
}

TEST(DecodeReview, NestingAtTheLimitIsAccepted) {
  json deep = json::array();
  for (int i = 0; i < 100; ++i) deep = json::array({deep});
  json pod = kPod;
  pod["spec"]["deep"] = deep;
  EXPECT_NO_THROW(DecodeReview(Review({{"uid", "n"}, {"operation", "CREATE"}, {"object", pod}})));
}

TEST(DecodeReview, NumberOverflowIsMalformedJsonKeepingTheVersion) {
  try {
    DecodeReview(R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview",)"
                 R"("request":{"uid":"b","operation":"CREATE","object":{"n":1e400}}})");
    FAIL() << "decoded";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.api_version(), kApiVersionV1beta1);
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  }
}

TEST(DecodeReview, LargeButFiniteNumbersAreRead) {
  const Request r =
      DecodeReview(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                   R"("request":{"uid":"f","operation":"CREATE","object":{"a":1e308,"b":-1e-400,)"
                   R"("c":18446744073709551616}}})");
  EXPECT_EQ(r.uid, "f");
  EXPECT_EQ(r.object.at("a").as_double(), 1e308);
  EXPECT_EQ(r.object.at("b").as_double(), -0.0);
  EXPECT_TRUE(r.object.at("c").is_double());
}

TEST(EncodeReview, PatchTypeOnlyWithPatch) {
  Response r;
  r.uid = "u";
  json without = json::parse(EncodeReview(kApiVersionV1, r));
  EXPECT_FALSE(without["response"].contains("patchType"));
  EXPECT_FALSE(without["response"].contains("patch"));
  EXPECT_FALSE(without["response"].contains("status"));
  r.patch = R"([{"op":"add","path":"/a","value":1}])";
  json with = json::parse(EncodeReview(kApiVersionV1, r));
  EXPECT_EQ(with["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(with["response"]["patch"], Base64(*r.patch));
}

TEST(EncodeReview, AnswersInTheRequestsVersion) {
  Response r;
  r.uid = "u";
  EXPECT_EQ(json::parse(EncodeReview(kApiVersionV1beta1, r))["apiVersion"], kApiVersionV1beta1);
  EXPECT_EQ(json::parse(EncodeReview(kApiVersionV1, r))["apiVersion"], kApiVersionV1);
  EXPECT_EQ(json::parse(EncodeReview("", r))["apiVersion"], kApiVersionV1);
}

TEST(EncodeReview, DenialCarriesStatus) {
  Response r;
  r.uid = "u";
  r.allowed = false;
  r.status = {403, "Forbidden", "no"};
  r.warnings = {"w"};
  r.audit_annotations = {{"path", "sriov"}};
  const json out = json::parse(EncodeReview(kApiVersionV1, r))["response"];
  EXPECT_EQ(out["uid"], "u");
  EXPECT_EQ(out["allowed"], false);
  EXPECT_EQ(out["status"]["code"], 403);
  EXPECT_EQ(out["status"]["reason"], "Forbidden");
  EXPECT_EQ(out["status"]["message"], "no");
  EXPECT_EQ(out["warnings"], json::array({"w"}));
  EXPECT_EQ(out["auditAnnotations"]["path"], "sriov");
}

struct Base64Case {
  std::string in, out;
};
class Base64Vectors : public ::testing::TestWithParam<Base64Case> {};
TEST_P(Base64Vectors, MatchRfc4648) { EXPECT_EQ(Base64(GetParam().in), GetParam().out); }
INSTANTIATE_TEST_SUITE_P(Rfc4648, Base64Vectors,
                         ::testing::Values(Base64Case{"", ""}, Base64Case{"f", "Zg=="},
                                           Base64Case{"fo", "Zm8="}, Base64Case{"foo", "Zm9v"},
                                           Base64Case{"foob", "Zm9vYg=="},
                                           Base64Case{"fooba", "Zm9vYmE="},
                                           Base64Case{"foobar", "Zm9vYmFy"},
                                           Base64Case{std::string("\xff\xfe\x00", 3), "//4A"}));

// RFC 4648 read off its definition, six bits at a time: the encoder's lookup tables must write
// the same characters for every 12-bit value, at every offset and every length of tail.
std::string ReferenceBase64(std::string_view bytes) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t bits = 0, held = 0;
  for (const char c : bytes) {
    held = (held << 8) | static_cast<unsigned char>(c);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(held >> bits) & 63];
    }
  }
  if (bits > 0) out += alphabet[(held << (6 - bits)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

TEST(Base64, EveryTwelveBitValueAtEveryOffsetAsTheDefinitionWrites) {
  std::string bytes;
  for (unsigned v = 0; v < 65536; ++v) {
    bytes += static_cast<char>(v >> 8);
    bytes += static_cast<char>(v & 255);
  }
  for (std::size_t cut = 0; cut < 6; ++cut) {
    const std::string_view part = std::string_view(bytes).substr(cut, bytes.size() - 2 * cut);
    ASSERT_EQ(Base64(part), ReferenceBase64(part)) << "cut " << cut;
  }
  std::string appended = "prefix";
  AppendBase64(appended, "foob");
  EXPECT_EQ(appended, "prefixZm9vYg==");
}

}  // namespace
}  // namespace rw::admission

namespace rw::admission {
namespace {

// What EncodeReview wrote when nlohmann serialized the whole answer: the hand-written encoder
// must produce the same bytes.
std::string ReferenceEncoding(std::string_view api_version, const Response& response) {
  using nlohmann::json;
  json out = json::object();
  out["uid"] = response.uid;
  out["allowed"] = response.allowed;
  if (response.patch) {
    out["patchType"] = "JSONPatch";
    out["patch"] = Base64(*response.patch);
  }
  if (!response.audit_annotations.empty()) out["auditAnnotations"] = response.audit_annotations;
  if (!response.warnings.empty()) out["warnings"] = response.warnings;
  if (response.status.code != 0) {
    json status = {{"metadata", json::object()},
                   {"status", response.allowed ? "Success" : "Failure"},
                   {"code", response.status.code}};
    if (!response.status.reason.empty()) status["reason"] = response.status.reason;
    if (!response.status.message.empty()) status["message"] = response.status.message;
    out["status"] = std::move(status);
  }
  json review = {
      {"apiVersion", api_version == kApiVersionV1beta1 ? kApiVersionV1beta1 : kApiVersionV1},
      {"kind", "AdmissionReview"},
      {"response", std::move(out)}};
  return review.dump(-1, ' ', false, json::error_handler_t::replace);
}

TEST(EncodeReview, SameBytesAsSerializingTheWholeAnswer) {
  const std::vector<std::string> texts = {"",
                                          "plain",
                                          "quote \" and \\ backslash",
                                          "tab\tnew\nline\x01",
                                          "caf\xc3\xa9 \xe2\x80\xa6",
                                          "bad \xff byte",
                                          "\x7f delete"};
  int cases = 0;
  for (const auto& text : texts) {
    for (const bool allowed : {true, false}) {
      Response r;
      r.uid = "uid-" + text;
      r.allowed = allowed;
      if (allowed) r.patch = "[{\"op\":\"add\",\"path\":\"/x\",\"value\":\"" + text + "\"}]";
      r.audit_annotations = {{"path", "sriov"}, {"policy-hash", text}};
      r.warnings = {text, "rule: fix"};
      if (!allowed) r.status = {403, text.empty() ? "" : "Forbidden", text};
      for (const auto version : {kApiVersionV1, kApiVersionV1beta1}) {
        EXPECT_EQ(EncodeReview(version, r), ReferenceEncoding(version, r)) << "text: " << text;
        ++cases;
      }
    }
  }
  Response bare;
  bare.uid = "u";
  EXPECT_EQ(EncodeReview("junk", bare), ReferenceEncoding("junk", bare));
  EXPECT_EQ(cases, 28);
}

}  // namespace
}  // namespace rw::admission
