// The server's front without sockets: every route, limit and answer of the TLS and probe ports,
// from a parsed request to the Answer the session would write.
#include "rdma_webhook/server/front.h"

#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/buffer.hpp>
#include <nlohmann/json.hpp>

#include "../../../src/server/http_request.h"

namespace rw::server {
namespace {

using nlohmann::json;

constexpr std::size_t kLimit = 4096;

std::shared_ptr<const policy::Policy> HostNetworkPolicy() {
  return std::make_shared<const policy::Policy>(policy::ParsePolicyText(R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: "off", validation: warn}
namespaces:
  - {names: [team-a], mode: hostNetwork, validation: deny}
)"));
}

std::shared_ptr<const policy::Policy> DefaultPolicy() {
  return std::make_shared<const policy::Policy>(policy::DefaultPolicy());
}

// A GPU pod in `ns` that shows RDMA: the host-network policy mutates it in team-a.
std::string Review(const std::string& uid, const std::string& ns = "team-a",
                   const std::string& version = "admission.k8s.io/v1", bool host_network = false) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "trainer"}, {"namespace", ns}}},
              {"spec",
               {{"containers",
                 {{{"name", "trainer"},
                   {"image", "pytorch"},
                   {"env", {{{"name", "NCCL_IB_HCA"}, {"value", "mlx5"}}}},
                   {"resources", {{"limits", {{"nvidia.com/gpu", 8}}}}}}}}}}};
  if (host_network) pod["spec"]["hostNetwork"] = true;
  return json{{"apiVersion", version},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", uid},
                {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                {"operation", "CREATE"},
                {"namespace", ns},
                {"object", pod}}}}
      .dump();
}

Request Post(std::string_view target, std::string_view body,
             std::string_view content_type = "application/json") {
  Request r;
  r.method = "POST";
  r.target = target;
  r.content_type = content_type;
  r.content_length = body.size();
  r.body = body;
  return r;
}

Request Get(std::string_view target, std::string_view method = "GET") {
  Request r;
  r.method = method;
  r.target = target;
  return r;
}

class FrontTest : public ::testing::Test {
 protected:
  Metrics metrics_;
  Front front_{kLimit, HostNetworkPolicy(), metrics_};
};

// A request head of the tables below; the Request views into it.
struct Head {
  std::string method, target, content_type;
  std::optional<std::uint64_t> content_length;

  Request View() const {
    Request r;
    r.method = method;
    r.target = target;
    r.content_type = content_type;
    r.content_length = content_length;
    return r;
  }
};

struct RefusalCase {
  std::string name;
  Head head;
  int status;
  std::string allow;  // expected Allow header, empty: none
  bool close;
};
void PrintTo(const RefusalCase& row, std::ostream* out) { *out << row.name; }

class Refusals : public FrontTest, public ::testing::WithParamInterface<RefusalCase> {};

// Each refusal is decided from the head alone (Screen) and is what the whole request gets
// (Respond), with a short JSON body naming the problem.
TEST_P(Refusals, FromTheHeadAlone) {
  const RefusalCase& c = GetParam();
  const Request head = c.head.View();
  const std::optional<Answer> screened = front_.Screen(head).refusal;
  ASSERT_TRUE(screened.has_value());
  EXPECT_EQ(screened->status, c.status);
  EXPECT_EQ(screened->allow, c.allow);
  EXPECT_EQ(screened->close, c.close);
  EXPECT_EQ(screened->content_type, "application/json");
  const json body = json::parse(screened->body);
  EXPECT_FALSE(body.at("error").get<std::string>().empty());
  const Answer whole = front_.Respond(head);
  EXPECT_EQ(whole.status, c.status);
  EXPECT_EQ(whole.body, screened->body);
}

INSTANTIATE_TEST_SUITE_P(
    Table, Refusals,
    ::testing::Values(
        RefusalCase{"UnknownPath", {"POST", "/nope", "application/json", 10}, 404, "", false},
        RefusalCase{"SubPath", {"POST", "/mutate/extra", "application/json", 10}, 404, "", false},
        RefusalCase{"ProbePathOnTheTlsPort", {"GET", "/readyz", "", {}}, 404, "", false},
        RefusalCase{"GetMutate", {"GET", "/mutate", "application/json", {}}, 405, "POST", false},
        RefusalCase{"PutValidate", {"PUT", "/validate", "application/json", 2}, 405, "POST", false},
        RefusalCase{
            "LowercasePost", {"post", "/mutate", "application/json", 2}, 405, "POST", false},
        RefusalCase{"PostHealthz", {"POST", "/healthz", "", 0}, 405, "GET, HEAD", false},
        RefusalCase{"DeclaredOverLimit",
                    {"POST", "/mutate", "application/json", kLimit + 1},
                    413,
                    "",
                    true},
        RefusalCase{"OverLimitBeatsContentType",
                    {"POST", "/validate", "text/plain", kLimit + 1},
                    413,
                    "",
                    true},
        RefusalCase{"TextPlain", {"POST", "/mutate", "text/plain", 2}, 415, "", false},
        RefusalCase{"Yaml", {"POST", "/validate", "application/yaml", 2}, 415, "", false},
        RefusalCase{"NoContentType", {"POST", "/mutate", "", 2}, 415, "", false},
        RefusalCase{"JsonPrefix", {"POST", "/mutate", "application/jsonx", 2}, 415, "", false},
        RefusalCase{
            "WrongMethodBeatsSize", {"GET", "/mutate", "", kLimit + 1}, 405, "POST", false}),
    [](const auto& row) { return row.param.name; });

struct AcceptedHead {
  std::string name;
  Head head;
};
void PrintTo(const AcceptedHead& row, std::ostream* out) { *out << row.name; }
class AcceptedHeads : public FrontTest, public ::testing::WithParamInterface<AcceptedHead> {};

TEST_P(AcceptedHeads, AreWorthReadingTheBodyOf) {
  EXPECT_FALSE(front_.Screen(GetParam().head.View()).refusal.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    Table, AcceptedHeads,
    ::testing::Values(
        AcceptedHead{"Mutate", {"POST", "/mutate", "application/json", 100}},
        AcceptedHead{"ValidateWithQuery", {"POST", "/validate?timeout=10s", "application/json", 1}},
        AcceptedHead{"Charset", {"POST", "/mutate", "application/json; charset=utf-8", 1}},
        AcceptedHead{"CaseAndSpaces", {"POST", "/mutate", " Application/JSON ;charset=UTF-8", 1}},
        AcceptedHead{"AtTheLimit", {"POST", "/mutate", "application/json", kLimit}},
        AcceptedHead{"ChunkedHasNoLength", {"POST", "/mutate", "application/json", {}}},
        AcceptedHead{"GetHealthz", {"GET", "/healthz", "", {}}},
        AcceptedHead{"HeadHealthz", {"HEAD", "/healthz?x=1", "", {}}}),
    [](const auto& row) { return row.param.name; });

TEST_F(FrontTest, HealthzIsPlainOk) {
  const Answer a = front_.Respond(Get("/healthz"));
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "ok\n");
  EXPECT_EQ(a.content_type, "text/plain; charset=utf-8");
  EXPECT_FALSE(a.close);
}

TEST_F(FrontTest, ReviewIsAnsweredEchoingTheUidInTheRequestsVersion) {
  for (const std::string version : {"admission.k8s.io/v1", "admission.k8s.io/v1beta1"}) {
    const std::string body = Review("uid-42", "team-a", version);
    const Answer a = front_.Respond(Post("/mutate", body));
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.content_type, "application/json");
    const json answer = json::parse(a.body);
    EXPECT_EQ(answer.at("apiVersion"), version);
    EXPECT_EQ(answer.at("response").at("uid"), "uid-42");
    EXPECT_EQ(answer.at("response").at("patchType"), "JSONPatch") << a.body;
  }
}

struct MalformedCase {
  std::string name;
  std::string body;
};
void PrintTo(const MalformedCase& row, std::ostream* out) { *out << row.name; }
class MalformedBodies : public FrontTest, public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(MalformedBodies, Are400) {
  for (const char* target : {"/mutate", "/validate"}) {
    const Answer a = front_.Respond(Post(target, GetParam().body));
    EXPECT_EQ(a.status, 400) << target << ": " << a.body;
    EXPECT_TRUE(json::accept(a.body)) << a.body;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, MalformedBodies,
    ::testing::Values(MalformedCase{"Empty", ""}, MalformedCase{"NotJson", "{not json"},
                      MalformedCase{"NotAReview", R"({"apiVersion":"v1","kind":"Pod"})"},
                      MalformedCase{"Array", "[1,2]"}),
    [](const auto& row) { return row.param.name; });

TEST_F(FrontTest, MalformedReviewWithAUidEchoesIt) {
  json review = json::parse(Review("uid-7"));
  review["request"].erase("object");
  const Answer a = front_.Respond(Post("/validate", review.dump()));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(json::parse(a.body).at("response").at("uid"), "uid-7");
}

// On the host network without IPC_LOCK: a denial, with its error findings counted.
TEST_F(FrontTest, DecisionsAndFindingsAreCounted) {
  const Answer a =
      front_.Respond(Post("/validate", Review("uid-1", "team-a", "admission.k8s.io/v1", true)));
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(json::parse(a.body)["response"]["allowed"], false) << a.body;
  const std::string text = metrics_.Render();
  EXPECT_NE(text.find("rdma_webhook_decisions_total{endpoint=\"validate\",path=\"hostNetwork\","
                      "allowed=\"false\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("rdma_webhook_findings_total{rule=\"ipc-lock-missing\",severity=\"error\"} 1"),
      std::string::npos)
      << text;
}

TEST_F(FrontTest, UsePolicyJudgesLaterRequestsWithTheNewPolicy) {
  const std::string body = Review("uid-1");
  EXPECT_TRUE(
      json::parse(front_.Respond(Post("/mutate", body)).body)["response"].contains("patch"));
  front_.UsePolicy(DefaultPolicy());
  EXPECT_EQ(front_.policy()->hash, DefaultPolicy()->hash);
  EXPECT_FALSE(
      json::parse(front_.Respond(Post("/mutate", body)).body)["response"].contains("patch"));
}

TEST(Front, AnExceptionInTheCoreIs500EchoingTheUid) {
  Metrics metrics;
  const Front front(
      kLimit, DefaultPolicy(), metrics,
      admission::Webhook([](auto, const auto&, const auto&, const auto&) -> admission::Decision {
        throw std::runtime_error("boom");
      }));
  const Answer a = front.Respond(Post("/mutate", Review("uid-9")));
  EXPECT_EQ(a.status, 500);
  EXPECT_EQ(json::parse(a.body).at("response").at("uid"), "uid-9");
}

TEST(Front, ReviewsReadTheCatalogueInForce) {
  // The watch publishes a catalogue; the next review's decision reads it, the one before did not.
  Metrics metrics;
  std::vector<std::size_t> seen;
  Front front(kLimit, DefaultPolicy(), metrics,
              admission::Webhook([&seen](admission::Endpoint e, admission::Request r,
                                         const policy::Policy& p, const catalogue::Catalogue& c) {
                seen.push_back(c.size());
                return admission::Decide(e, std::move(r), p, c);
              }));
  front.Respond(Post("/validate", Review("uid-1")));
  const json nad = {{"apiVersion", "k8s.cni.cncf.io/v1"},
                    {"kind", "NetworkAttachmentDefinition"},
                    {"metadata", {{"name", "rdma-net"}, {"namespace", "team-a"}}}};
  front.UseCatalogue(std::make_shared<const catalogue::Catalogue>(
      catalogue::Catalogue::From({nad}, catalogue::Source::kCluster)));
  front.Respond(Post("/validate", Review("uid-2")));
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(front.catalogue()->source(), catalogue::Source::kCluster);
}

TEST(Front, RefusalBodiesStayJsonForAnyMessage) {
  const Answer a = Refusal(400, "malformed HTTP request: \xff\xfe bytes", true);
  EXPECT_EQ(a.status, 400);
  EXPECT_TRUE(a.close);
  EXPECT_TRUE(json::accept(a.body)) << a.body;
  const Answer over = BodyOverLimit(kLimit);
  EXPECT_EQ(over.status, 413);
  EXPECT_TRUE(over.close);
  EXPECT_NE(over.body.find(std::to_string(kLimit)), std::string::npos);
}

TEST(Routes, AcceptTheAbsoluteForm) {
  // RFC 9112 §3.2.2: a server must accept the absolute form of a request target.
  EXPECT_EQ(RouteOf("https://webhook.example:8443/mutate"), Route::kMutate);
  EXPECT_EQ(RouteOf("HTTP://webhook/validate?timeout=10s"), Route::kValidate);
  EXPECT_EQ(RouteOf("https://webhook"), Route::kUnknown);
  EXPECT_EQ(RouteOf("https://webhook?/mutate"), Route::kUnknown);
  EXPECT_EQ(RouteOf("/https://webhook/mutate"), Route::kUnknown);
}

// Whether Beast's parser, as the sessions set it up, frames a body sent with this
// Transfer-Encoding as chunked.
bool BeastReadsChunked(const std::string& transfer_encoding) {
  RequestParser parser;
  parser.header_limit(kHeaderLimit);
  const std::string head =
      "POST /mutate HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: " + transfer_encoding + "\r\n\r\n";
  boost::system::error_code ec;
  parser.put(boost::asio::buffer(head), ec);
  return parser.is_header_done() && parser.chunked();
}

Request Framed(std::string transfer_encoding, std::size_t host_fields = 1, unsigned version = 11) {
  Request r = Post("/mutate", "{}");
  r.chunked = BeastReadsChunked(transfer_encoding);
  r.transfer_encoding = std::move(transfer_encoding);
  r.host_fields = host_fields;
  r.version = version;
  return r;
}

// RFC 9112 §6.1 and §6.3: a Transfer-Encoding that does not end in chunked leaves the body's
// length unknown, so the rest of the connection could be a smuggled request: 400 and close,
// on both ports. A coding other than chunked before it is one the server does not apply: 501.
TEST(Framing, TransferEncodingMustEndInChunkedOnce) {
  for (const char* te : {"gzip", "xchunked", "identity", "chunked, gzip", "chunked, chunked", " , ",
                         "bid\",chunked", "g zip, chunked", "b;ext=valid\",chunked",
                         // Beast's list reading takes no coding parameters: not framed as chunked.
                         "gzip;q=1, chunked"}) {
    SCOPED_TRACE(te);
    const auto refusal = FramingRefusal(Framed(te));
    ASSERT_TRUE(refusal.has_value());
    EXPECT_EQ(refusal->status, 400);
    EXPECT_TRUE(refusal->close);
    EXPECT_NE(refusal->body.find("chunked"), std::string::npos);
  }
  const auto gzip_then_chunked = FramingRefusal(Framed("gzip, chunked"));
  ASSERT_TRUE(gzip_then_chunked.has_value());
  EXPECT_EQ(gzip_then_chunked->status, 501);
  EXPECT_TRUE(gzip_then_chunked->close);
  // RFC 9110 §5.6.1: empty list elements are allowed; codings are case-insensitive.
  for (const char* te : {"chunked", "Chunked", "chunked,", " ,chunked "}) {
    SCOPED_TRACE(te);
    EXPECT_FALSE(FramingRefusal(Framed(te)).has_value());
  }
  EXPECT_FALSE(FramingRefusal(Framed("")).has_value());
}

// RFC 9112 §3.2: an HTTP/1.1 request without Host, or any request with two, is 400.
TEST(Framing, HostOnceOnHttp11) {
  EXPECT_EQ(FramingRefusal(Framed("", 0))->status, 400);
  EXPECT_EQ(FramingRefusal(Framed("", 2))->status, 400);
  EXPECT_EQ(FramingRefusal(Framed("", 2, 10))->status, 400);
  EXPECT_FALSE(FramingRefusal(Framed("", 0, 10)).has_value());  // HTTP/1.0 has no Host
  EXPECT_FALSE(FramingRefusal(Framed("", 1)).has_value());
}

TEST_F(FrontTest, FramingIsRefusedOnBothPorts) {
  Request smuggling = Framed("gzip");
  EXPECT_EQ(front_.Respond(smuggling).status, 400);
  EXPECT_TRUE(front_.Respond(smuggling).close);
  Request probe = Get("/healthz");
  probe.host_fields = 2;
  EXPECT_EQ(front_.Probe(probe).status, 400);
  EXPECT_TRUE(front_.Probe(probe).close);
}

TEST_F(FrontTest, AContentCodingIs415) {
  // RFC 9110 §15.5.16: a body in a coding the server does not apply is 415, not a JSON error.
  Request gzip = Post("/mutate", "\x1f\x8b");
  gzip.content_encoding = "gzip";
  const Answer a = front_.Respond(gzip);
  EXPECT_EQ(a.status, 415);
  EXPECT_NE(a.body.find("gzip"), std::string::npos);
  gzip.content_encoding = "identity";
  EXPECT_FALSE(front_.Screen(gzip).refusal.has_value());
}

TEST(Routes, NameTheEndpointLabel) {
  EXPECT_EQ(EndpointLabel(RouteOf("/mutate")), "mutate");
  EXPECT_EQ(EndpointLabel(RouteOf("/validate?timeout=10s")), "validate");
  EXPECT_EQ(EndpointLabel(RouteOf("/healthz")), "healthz");
  EXPECT_EQ(EndpointLabel(RouteOf("/metrics")), "other");
  EXPECT_EQ(EndpointLabel(RouteOf("")), "other");
}

TEST_F(FrontTest, ReadyzFollowsStartAndTermination) {
  auto readyz = [&] { return front_.Probe(Get("/readyz")); };
  EXPECT_EQ(readyz().status, 503);
  EXPECT_EQ(readyz().body, "starting\n");
  front_.MarkReady();
  EXPECT_EQ(readyz().status, 200);
  EXPECT_FALSE(front_.MarkTerminating());
  EXPECT_TRUE(front_.MarkTerminating());
  EXPECT_EQ(readyz().status, 503);
  EXPECT_EQ(readyz().body, "shutting down\n");
  // Alive until the process ends: only readiness follows termination.
  EXPECT_EQ(front_.Probe(Get("/healthz")).status, 200);
}

TEST_F(FrontTest, ProbePortServesMetricsAndRefusesTheRest) {
  const Answer metrics = front_.Probe(Get("/metrics"));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(metrics.body.find("rdma_webhook_build_info"), std::string::npos);
  EXPECT_EQ(front_.Probe(Get("/metrics", "HEAD")).status, 200);
  const Answer post = front_.Probe(Get("/healthz", "POST"));
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.allow, "GET, HEAD");
  EXPECT_EQ(front_.Probe(Get("/mutate")).status, 404);
}

}  // namespace
}  // namespace rw::server
