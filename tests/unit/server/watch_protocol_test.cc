// What the cluster watch reads from the API server, without a network: LIST pages, watch event
// lines, Status bodies, the bounded line splitter, the store, the endpoint and the backoff.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rdma_webhook/server/kube_protocol.h"
#include "rdma_webhook/server/object_store.h"
#include "rdma_webhook/server/watch_options.h"
#include "rdma_webhook/server/watched_kinds.h"

namespace rw::server {
namespace {

using nlohmann::json;

const WatchedKind& Kind(std::string_view resource) {
  for (const auto& k : WatchedKinds()) {
    if (k.resource == resource) return k;
  }
  throw std::logic_error("no such kind");
}

TEST(WatchedKinds, NamesAndPathsAreTheApiServers) {
  const auto& dc = Kind("deviceclasses");
  EXPECT_EQ(dc.Name(), "deviceclasses.resource.k8s.io");
  EXPECT_EQ(dc.CollectionPath(), "/apis/resource.k8s.io/v1/deviceclasses");
  EXPECT_FALSE(dc.namespaced);
  const auto& nad = Kind("network-attachment-definitions");
  EXPECT_EQ(nad.CollectionPath(), "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions");
  EXPECT_EQ(nad.kind, "NetworkAttachmentDefinition");
  EXPECT_EQ(Kind("computedomains").ApiVersion(), "resource.nvidia.com/v1beta1");
  EXPECT_EQ(WatchedKinds().size(), 7u);
}

TEST(ParseListPage, ItemsGetTheirKindAndLoseManagedFields) {
  const auto page = ParseListPage(
      R"({"kind":"DeviceClassList","apiVersion":"resource.k8s.io/v1",
          "metadata":{"resourceVersion":"42","continue":"abc"},
          "items":[{"metadata":{"name":"rdma","resourceVersion":"40",
                                "managedFields":[{"manager":"kubectl"}]},"spec":{}}]})",
      Kind("deviceclasses"));
  EXPECT_EQ(page.resource_version, "42");
  EXPECT_EQ(page.continue_token, "abc");
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0]["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(page.items[0]["kind"], "DeviceClass");
  EXPECT_FALSE(page.items[0]["metadata"].contains("managedFields"));
}

TEST(ParseListPage, NullItemsIsAnEmptyList) {
  const auto page =
      ParseListPage(R"({"metadata":{"resourceVersion":"7"},"items":null})", Kind("resourceclaims"));
  EXPECT_TRUE(page.items.empty());
  EXPECT_TRUE(page.continue_token.empty());
}

TEST(ParseListPage, BrokenAnswersNameWhatIsWrong) {
  const auto& k = Kind("deviceclasses");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "is not JSON"},
      {"[]", "is no object"},
      {R"({"items":[]})", "no metadata.resourceVersion"},
      {R"({"metadata":{"resourceVersion":"1"},"items":{}})", "items is no array"},
      {R"({"metadata":{"resourceVersion":"1"},"items":[3]})", "an item is no object"},
  };
  for (const auto& [body, message] : cases) {
    try {
      ParseListPage(body, k);
      ADD_FAILURE() << body << " was read";
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("deviceclasses.resource.k8s.io"), std::string::npos);
    }
  }
}

TEST(ParseWatchEvent, EveryType) {
  const auto& k = Kind("network-attachment-definitions");
  auto added = ParseWatchEvent(
      R"({"type":"ADDED","object":{"metadata":{"name":"n","namespace":"a","resourceVersion":"5"}}})",
      k);
  EXPECT_EQ(added.type, EventType::kAdded);
  EXPECT_EQ(added.resource_version, "5");
  EXPECT_EQ(added.object["kind"], "NetworkAttachmentDefinition");
  auto bookmark = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"NetworkAttachmentDefinition","metadata":{"resourceVersion":"9"}}})",
      k);
  EXPECT_EQ(bookmark.type, EventType::kBookmark);
  EXPECT_EQ(bookmark.resource_version, "9");
  auto gone = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version"}})",
      k);
  EXPECT_EQ(gone.type, EventType::kError);
  EXPECT_EQ(gone.code, 410);
  EXPECT_EQ(gone.message, "too old resource version");
}

TEST(ParseWatchEvent, RefusesWhatCannotBeApplied) {
  const auto& k = Kind("deviceclasses");
  for (const char* line : {
           R"({"type":"SOMETHING","object":{}})",
           R"({"type":"ADDED"})",
           R"({"type":"ADDED","object":{"metadata":{"name":"x"}}})",  // no resourceVersion
           R"({"type":"DELETED","object":{"metadata":{"resourceVersion":"3"}}})",  // no name
           "{",
       }) {
    EXPECT_THROW(ParseWatchEvent(line, k), ProtocolError) << line;
  }
}

TEST(ParseStatus, ReadsTheCodeOfARefusal) {
  const auto status = ParseStatus(
      R"({"kind":"Status","apiVersion":"v1","code":403,"reason":"Forbidden","message":"no"})");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 403);
  EXPECT_EQ(status->reason, "Forbidden");
  EXPECT_FALSE(ParseStatus("<html>proxy error</html>"));
  EXPECT_FALSE(ParseStatus(R"({"kind":"Pod"})"));
}

std::vector<std::string> Split(LineSplitter& s, const std::vector<std::string>& pieces,
                               bool* ok = nullptr) {
  std::vector<std::string> lines;
  bool all = true;
  for (const auto& p : pieces) {
    all = s.Feed(p, [&](std::string_view line) { lines.emplace_back(line); }) && all;
  }
  if (ok) *ok = all;
  return lines;
}

TEST(LineSplitter, LinesAcrossChunksAndCrlf) {
  LineSplitter s(100);
  EXPECT_EQ(Split(s, {"{\"a\"", ":1}\n{\"b\":2}\r\n\n", "{\"c\"", ":3}"}),
            (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_EQ(s.pending(), 7u);
  EXPECT_EQ(Split(s, {"\n"}), (std::vector<std::string>{"{\"c\":3}"}));
}

TEST(LineSplitter, ALineOverTheBoundStopsWithoutKeepingIt) {
  LineSplitter s(8);
  bool ok = true;
  EXPECT_EQ(Split(s, {"12345678\n", "1234", "56789"}, &ok), (std::vector<std::string>{"12345678"}));
  EXPECT_FALSE(ok);
  EXPECT_EQ(s.pending(), 0u);
}

WatchEvent Event(EventType type, const std::string& name, const std::string& rv,
                 const std::string& ns = "") {
  WatchEvent e;
  e.type = type;
  e.resource_version = rv;
  e.object = {{"metadata", {{"name", name}, {"resourceVersion", rv}}}};
  if (!ns.empty()) e.object["metadata"]["namespace"] = ns;
  return e;
}

TEST(ObjectStore, AppliesEventsByNamespaceAndName) {
  ObjectStore store(10);
  using R = ObjectStore::Result;
  EXPECT_EQ(store.Apply(Event(EventType::kAdded, "n", "1", "a")), R::kChanged);
  EXPECT_EQ(store.Apply(Event(EventType::kAdded, "n", "2", "b")), R::kChanged);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.Apply(Event(EventType::kModified, "n", "3", "a")), R::kChanged);
  EXPECT_EQ((*store.Find("a/n"))["metadata"]["resourceVersion"], "3");
  EXPECT_EQ(store.Apply(Event(EventType::kModified, "n", "3", "a")), R::kUnchanged);
  EXPECT_EQ(store.Apply(Event(EventType::kDeleted, "n", "4", "b")), R::kChanged);
  EXPECT_EQ(store.Apply(Event(EventType::kDeleted, "gone", "5", "b")), R::kUnchanged);
  EXPECT_EQ(store.Apply(Event(EventType::kBookmark, "", "6")), R::kUnchanged);
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(store.Find("b/n"), nullptr);
}

TEST(ObjectStore, BoundedInObjects) {
  ObjectStore store(2);
  using R = ObjectStore::Result;
  EXPECT_EQ(store.Apply(Event(EventType::kAdded, "a", "1")), R::kChanged);
  EXPECT_EQ(store.Apply(Event(EventType::kAdded, "b", "2")), R::kChanged);
  EXPECT_EQ(store.Apply(Event(EventType::kAdded, "c", "3")), R::kOverLimit);
  EXPECT_EQ(store.Apply(Event(EventType::kModified, "b", "4")), R::kChanged);  // not a new one
  std::vector<json> three(3, json{{"metadata", {{"name", "x"}}}});
  EXPECT_EQ(store.Replace(three), R::kOverLimit);
  EXPECT_EQ(store.size(), 2u);
}

TEST(ObjectStore, ReplaceIsWhatTheListSays) {
  ObjectStore store(10);
  store.Apply(Event(EventType::kAdded, "old", "1"));
  std::vector<json> items = {json{{"metadata", {{"name", "new"}}}}};
  EXPECT_EQ(store.Replace(items), ObjectStore::Result::kChanged);
  EXPECT_EQ(store.Find("old"), nullptr);
  ASSERT_NE(store.Find("new"), nullptr);
  EXPECT_EQ(store.Replace(items), ObjectStore::Result::kUnchanged);
  std::vector<json> out;
  store.CopyTo(out);
  EXPECT_EQ(out.size(), 1u);
}

TEST(ApiServerUrl, Forms) {
  auto e = ParseApiServerUrl("https://10.0.0.1:6443");
  EXPECT_EQ(e.host, "10.0.0.1");
  EXPECT_EQ(e.port, "6443");
  e = ParseApiServerUrl("https://kubernetes.default.svc/");
  EXPECT_EQ(e.port, "443");
  e = ParseApiServerUrl("https://[fd00::1]:6443");
  EXPECT_EQ(e.host, "fd00::1");
  EXPECT_EQ(e.Url(), "https://[fd00::1]:6443");
  for (const char* bad : {"http://x:1", "https://:1", "https://x:0", "https://x:99999",
                          "https://x/api", "https://[::1", "https://x:port"}) {
    EXPECT_THROW(ParseApiServerUrl(bad), std::invalid_argument) << bad;
  }
}

TEST(ResolveApiServer, InClusterFromTheEnvironment) {
  WatchOptions options;
  auto env = [](const char* name) -> const char* {
    if (std::string(name) == "KUBERNETES_SERVICE_HOST") return "10.96.0.1";
    if (std::string(name) == "KUBERNETES_SERVICE_PORT") return "443";
    return nullptr;
  };
  const auto e = ResolveApiServer(options, env);
  EXPECT_EQ(e.Url(), "https://10.96.0.1:443");
  EXPECT_EQ(e.token_file, "/var/run/secrets/kubernetes.io/serviceaccount/token");
  EXPECT_EQ(e.ca_file, "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
  try {
    ResolveApiServer(options, [](const char*) -> const char* { return nullptr; });
    ADD_FAILURE() << "resolved without an environment";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("--kube-api-server"), std::string::npos);
  }
  options.api_server = "https://127.0.0.1:1234";
  options.token_file = "/tmp/t";
  const auto flags = ResolveApiServer(options, env);
  EXPECT_EQ(flags.port, "1234");
  EXPECT_EQ(flags.token_file, "/tmp/t");
}

TEST(BackoffDelay, DoublesToTheCapWithJitterBelowIt) {
  using std::chrono::milliseconds;
  const milliseconds initial(800), cap(30000);
  EXPECT_EQ(BackoffDelay(0, initial, cap, 0.0), milliseconds(400));
  EXPECT_EQ(BackoffDelay(0, initial, cap, 0.999999), milliseconds(799));
  EXPECT_EQ(BackoffDelay(2, initial, cap, 0.0), milliseconds(1600));
  EXPECT_EQ(BackoffDelay(10, initial, cap, 0.0), milliseconds(15000));
  EXPECT_EQ(BackoffDelay(4000000000u, initial, cap, 0.999999), milliseconds(29999));
}

}  // namespace
}  // namespace rw::server
