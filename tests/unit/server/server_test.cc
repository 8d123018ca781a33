#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../../../src/server/tls.h"
#include "rdma_webhook/server/env.h"
#include "rdma_webhook/server/file_watch.h"
#include "rdma_webhook/server/log.h"
#include "rdma_webhook/server/metrics.h"
#include "rdma_webhook/server/serve.h"

namespace rw::server {
namespace {

namespace fs = std::filesystem;

struct AddressCase {
  std::string text;
  std::string host;
  std::uint16_t port;
};
class ListenAddresses : public ::testing::TestWithParam<AddressCase> {};
TEST_P(ListenAddresses, Parse) {
  const ListenAddress a = ParseListenAddress(GetParam().text);
  EXPECT_EQ(a.host, GetParam().host);
  EXPECT_EQ(a.port, GetParam().port);
}
INSTANTIATE_TEST_SUITE_P(Table, ListenAddresses,
                         ::testing::Values(AddressCase{"0.0.0.0:8443", "0.0.0.0", 8443},
                                           AddressCase{"127.0.0.1:0", "127.0.0.1", 0},
                                           AddressCase{":8080", "", 8080},
                                           AddressCase{"[::1]:443", "::1", 443},
                                           AddressCase{"localhost:65535", "localhost", 65535}));

class BadListenAddresses : public ::testing::TestWithParam<std::string> {};
TEST_P(BadListenAddresses, Throw) {
  EXPECT_THROW(ParseListenAddress(GetParam()), std::invalid_argument);
}
INSTANTIATE_TEST_SUITE_P(Table, BadListenAddresses,
                         ::testing::Values("8443", "host:", "host:65536", "host:-1", "::1:80",
                                           "[::1]", "[::1]80", "host:80x", "host:123456"));

TEST(Metrics, RendersTheContractNames) {
  Metrics m;
  m.CountRequest("mutate", 200, 0.00005);
  m.CountRequest("mutate", 200, 0.003);
  m.CountRequest("validate", 400, 0.2);
  m.CountDecision("validate", "sriov", false);
  m.CountFinding("ipc-lock-missing", "error");
  m.CountReload("policy", false);
  m.AddInflight(2);
  m.AddInflight(-1);
  const std::string text = m.Render();
  for (const char* expected : {
           "rdma_webhook_requests_total{endpoint=\"mutate\",code=\"200\"} 2\n",
           "rdma_webhook_requests_total{endpoint=\"validate\",code=\"400\"} 1\n",
           "rdma_webhook_request_duration_seconds_bucket{le=\"0.0001\"} 1\n",
           "rdma_webhook_request_duration_seconds_bucket{le=\"0.005\"} 2\n",
           "rdma_webhook_request_duration_seconds_bucket{le=\"+Inf\"} 3\n",
           "rdma_webhook_request_duration_seconds_count 3\n",
           "rdma_webhook_decisions_total{endpoint=\"validate\",path=\"sriov\",allowed=\"false\"} "
           "1\n",
           "rdma_webhook_findings_total{rule=\"ipc-lock-missing\",severity=\"error\"} 1\n",
           "rdma_webhook_inflight_requests 1\n",
           "rdma_webhook_reloads_total{what=\"policy\",result=\"failure\"} 1\n",
           "rdma_webhook_reloads_total{what=\"tls\",result=\"success\"} 0\n",
           "rdma_webhook_build_info{version=\"",
           "# TYPE rdma_webhook_request_duration_seconds histogram\n",
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

TEST(Metrics, CertificateExpiryIsAbsentUntilSetThenAGauge) {
  Metrics m;
  EXPECT_EQ(m.Render().find("rdma_webhook_certificate_expiry_timestamp_seconds"),
            std::string::npos);
  m.SetCertificateExpiry(1798761600);
  m.SetCertificateExpiry(1893456000);  // a reload replaces the value
  const std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE rdma_webhook_certificate_expiry_timestamp_seconds gauge\n"
                      "rdma_webhook_certificate_expiry_timestamp_seconds 1893456000\n"),
            std::string::npos)
      << text;
}

TEST(Metrics, EscapesLabelValues) { EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd"); }

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("rw-server-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void Write(const fs::path& p, const std::string& content) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
}

TEST(FileWatch, SeesContentChangesOnly) {
  TempDir dir;
  const fs::path f = dir.path() / "policy.yaml";
  Write(f, "a");
  FileWatch watch({f.string()});
  EXPECT_FALSE(watch.Changed());
  Write(f, "a");  // same bytes rewritten: nothing to reload
  EXPECT_FALSE(watch.Changed());
  Write(f, "b");
  EXPECT_TRUE(watch.Changed());
  EXPECT_FALSE(watch.Changed());
  fs::remove(f);
  EXPECT_TRUE(watch.Changed());  // vanished: a reload attempt will log and count the failure
  Write(f, "b");
  EXPECT_TRUE(watch.Changed());
}

TEST(FileWatch, SeesTheKubernetesDataSymlinkSwap) {
  TempDir dir;
  const fs::path& root = dir.path();
  fs::create_directory(root / "..v1");
  fs::create_directory(root / "..v2");
  Write(root / "..v1" / "tls.crt", "one");
  Write(root / "..v2" / "tls.crt", "two");
  fs::create_directory_symlink("..v1", root / "..data");
  fs::create_symlink("..data/tls.crt", root / "tls.crt");
  FileWatch watch({(root / "tls.crt").string()});
  EXPECT_FALSE(watch.Changed());
  fs::create_directory_symlink("..v2", root / "..data_tmp");
  fs::rename(root / "..data_tmp", root / "..data");
  EXPECT_TRUE(watch.Changed());
  EXPECT_EQ(ReadBounded((root / "tls.crt").string(), FileKinds::kRegularOnly), "two");
}

TEST(ReadBounded, NamesTheFile) {
  try {
    ReadBounded("/nonexistent/rw/policy.yaml", FileKinds::kRegularOnly);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/rw/policy.yaml"), std::string::npos);
  }
}

TEST(Log, JsonFieldsFollowTheMessage) {
  const std::string line =
      log::FormatFields(true, "denied", nlohmann::json{{"uid", "u\"1"}, {"rules", {"a", "b"}}});
  const auto parsed = nlohmann::json::parse("{" + line + "}");
  EXPECT_EQ(parsed["msg"], "denied");
  EXPECT_EQ(parsed["uid"], "u\"1");
  EXPECT_EQ(parsed["rules"].size(), 2u);
}

// A review's uid and name are the client's to choose: a megabyte of either stays out of the line.
TEST(Log, FieldsAreBounded) {
  const std::string uid(1 << 20, 'u');
  const nlohmann::json rules(std::vector<std::string>(1000, "r"));
  for (const bool as_json : {true, false}) {
    const std::string line =
        log::FormatFields(as_json, "bad request", {{"uid", uid}, {"rules", rules}});
    EXPECT_LT(line.size(), log::kMaxFieldBytes + 1024) << as_json;
    EXPECT_NE(line.find("(1048576 bytes)"), std::string::npos);
    EXPECT_NE(line.find("(1000 items)"), std::string::npos);
  }
  const auto parsed =
      nlohmann::json::parse("{" + log::FormatFields(true, "m", {{"rules", rules}}) + "}");
  EXPECT_EQ(parsed["rules"].size(), log::kMaxFieldItems + 1);
  // A cut inside a UTF-8 sequence still makes a line of valid JSON.
  const std::string wide(log::kMaxFieldBytes + 1, 'a');
  const std::string cut = wide.substr(0, log::kMaxFieldBytes - 1) + "\xc3\xa9" + "tail";
  EXPECT_NO_THROW(nlohmann::json::parse("{" + log::FormatFields(true, "m", {{"name", cut}}) + "}"));
}

TEST(Log, TextQuotesValuesWithSpaces) {
  EXPECT_EQ(log::FormatFields(false, "serving", {{"policy", "embedded default"}, {"empty", ""}}),
            "serving empty=\"\" policy=\"embedded default\"");
}

TEST(Log, TextIsKeyValue) {
  EXPECT_EQ(log::FormatFields(false, "policy reloaded", {{"file", "/p.yaml"}, {"n", 2}}),
            "policy reloaded file=/p.yaml n=2");
}

TEST(Log, RejectsUnknownFormatAndLevel) {
  EXPECT_THROW(log::Setup("xml", "info"), std::invalid_argument);
  EXPECT_THROW(log::Setup("json", "loud"), std::invalid_argument);
  EXPECT_NO_THROW(log::Setup("text", "warn"));
}

// A self-signed ECDSA certificate made with the openssl CLI, as the integration suite does.
class TlsFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string cmd =
        "openssl req -x509 -nodes -newkey ec -pkeyopt "
        "ec_paramgen_curve:P-256 -days 1 -subj /CN=localhost -keyout " +
        (dir_.path() / "tls.key").string() + " -out " + (dir_.path() / "tls.crt").string() +
        " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  TlsFiles Files() const {
    return {(dir_.path() / "tls.crt").string(), (dir_.path() / "tls.key").string(), ""};
  }
  TempDir dir_;
};

TEST_F(TlsFilesTest, GoodPairBuildsAContext) { EXPECT_NE(MakeTlsContext(Files()), nullptr); }

TEST_F(TlsFilesTest, NotAfterIsTheCertificatesInUnixSeconds) {
  // Compare with what the openssl CLI prints, converted to Unix seconds by date(1) in UTC.
  const std::string cmd = "date -u -d \"$(openssl x509 -enddate -noout -in " +
                          (dir_.path() / "tls.crt").string() + " | cut -d= -f2)\" +%s > " +
                          (dir_.path() / "end").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(dir_.path() / "end");
  std::int64_t expected = 0;
  in >> expected;
  ASSERT_GT(expected, 0);
  EXPECT_EQ(CertificateNotAfter(*MakeTlsContext(Files())), expected);
}

TEST_F(TlsFilesTest, ErrorsNameTheFile) {
  TlsFiles f = Files();
  Write(dir_.path() / "bad.key", "garbage");
  f.key = (dir_.path() / "bad.key").string();
  try {
    MakeTlsContext(f);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(f.key), std::string::npos) << e.what();
  }
  f = Files();
  f.client_ca = (dir_.path() / "missing-ca.crt").string();
  try {
    MakeTlsContext(f);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(f.client_ca), std::string::npos) << e.what();
  }
}

TEST_F(TlsFilesTest, MismatchedKeyIsRefused) {
  const std::string cmd = "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " +
                          (dir_.path() / "other.key").string() + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  TlsFiles f = Files();
  f.key = (dir_.path() / "other.key").string();
  try {
    MakeTlsContext(f);
    FAIL();
  } catch (const std::runtime_error& e) {
    // A key of the right type that belongs to another certificate: said so, not "unknown
    // OpenSSL error".
    EXPECT_NE(std::string(e.what()).find("does not match certificate"), std::string::npos)
        << e.what();
  }
}

// The clock and the log of an Env; files are not read through it here.
class ClockEnv final : public Env {
 public:
  explicit ClockEnv(std::chrono::system_clock::time_point now) : now_(now) {}
  std::string ReadFile(const std::string& path, FileKinds kinds) override {
    return ReadBounded(path, kinds);
  }
  std::chrono::system_clock::time_point Now() override { return now_; }
  void Log(log::Level level, std::string_view message, const nlohmann::json& fields) override {
    logged.push_back({level, std::string(message), fields});
  }
  struct Line {
    log::Level level;
    std::string message;
    nlohmann::json fields;
  };
  std::vector<Line> logged;

 private:
  std::chrono::system_clock::time_point now_;
};

TEST_F(TlsFilesTest, AnExpiredCertificateIsServedWithAWarning) {
  // The certificate is valid for a day; two days on, it has expired.
  ClockEnv later(std::chrono::system_clock::now() + std::chrono::hours(48));
  const TlsLoad load = LoadTls(Files(), later);
  EXPECT_NE(load.context, nullptr);
  ASSERT_EQ(later.logged.size(), 1u);
  EXPECT_EQ(later.logged[0].level, log::Level::kWarn);
  EXPECT_NE(later.logged[0].message.find("expired"), std::string::npos);
  EXPECT_EQ(later.logged[0].fields["cert"], Files().cert);
  EXPECT_EQ(later.logged[0].fields["notAfter"], load.not_after);

  ClockEnv now(std::chrono::system_clock::now());
  LoadTls(Files(), now);
  EXPECT_TRUE(now.logged.empty());
}

}  // namespace
}  // namespace rw::server
