// The policy loader and the reload, driven through a fake Env: what the file holds is a map
// entry, the log is a vector, and nothing sleeps.
#include "rdma_webhook/server/policy_reload.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rdma_webhook/server/policy_loader.h"

namespace rw::server {
namespace {

constexpr const char* kHostPolicy = R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: "off", validation: warn}
namespaces:
  - {names: [team-a], mode: hostNetwork, validation: deny}
)";

struct LogLine {
  log::Level level;
  std::string message;
  nlohmann::json fields;
};

class FakeEnv final : public Env {
 public:
  std::map<std::string, std::string> files;
  std::map<std::string, ReadError::Kind> broken;  // paths whose read fails, and how
  std::vector<LogLine> lines;
  int reads = 0;

  std::string ReadFile(const std::string& path, FileKinds) override {
    ++reads;
    if (auto it = broken.find(path); it != broken.end()) {
      throw ReadError(
          it->second, path,
          it->second == ReadError::Kind::kTooLarge ? "larger than 64 MiB" : "not a regular file");
    }
    auto it = files.find(path);
    if (it == files.end()) throw ReadError(ReadError::Kind::kUnreadable, path, "cannot read: gone");
    return it->second;
  }
  std::chrono::system_clock::time_point Now() override { return {}; }
  void Log(log::Level level, std::string_view message, const nlohmann::json& fields) override {
    lines.push_back({level, std::string(message), fields});
  }
};

std::uint64_t Reloads(const Metrics& metrics, const std::string& result) {
  const std::string text = metrics.Render();
  const std::string key = "rdma_webhook_reloads_total{what=\"policy\",result=\"" + result + "\"} ";
  const auto at = text.find(key);
  return at == std::string::npos ? 0 : std::stoull(text.substr(at + key.size()));
}

TEST(LoadPolicy, TypesEachFailure) {
  FakeEnv env;
  env.files["/p/good.yaml"] = kHostPolicy;
  env.files["/p/bad.yaml"] =
      "apiVersion: rdma-webhook/v1\nkind: Policy\ndefaults: {mode: warpDrive}\n";
  env.broken["/p/zero"] = ReadError::Kind::kTooLarge;
  env.broken["/p/fifo"] = ReadError::Kind::kNotAFile;

  const PolicyLoad good = LoadPolicy(env, "/p/good.yaml", FileKinds::kRegularOnly);
  ASSERT_FALSE(good.error.has_value());
  ASSERT_NE(good.policy, nullptr);

  const PolicyLoad bad = LoadPolicy(env, "/p/bad.yaml", FileKinds::kRegularOnly);
  ASSERT_TRUE(bad.error.has_value());
  EXPECT_EQ(bad.policy, nullptr);
  EXPECT_EQ(bad.error->kind, PolicyLoadError::Kind::kInvalid);
  EXPECT_NE(bad.error->detail.find("warpDrive"), std::string::npos);
  // file:line:col first, where the field is written, as editors and CI annotate it.
  EXPECT_EQ(bad.error->Message().rfind("/p/bad.yaml:3:12: defaults.mode: ", 0), 0u)
      << bad.error->Message();

  EXPECT_EQ(LoadPolicy(env, "/p/zero", FileKinds::kAny).error->kind,
            PolicyLoadError::Kind::kTooLarge);
  EXPECT_EQ(LoadPolicy(env, "/p/fifo", FileKinds::kAny).error->kind,
            PolicyLoadError::Kind::kUnreadable);
  const PolicyLoad missing = LoadPolicy(env, "/p/missing", FileKinds::kAny);
  EXPECT_EQ(missing.error->kind, PolicyLoadError::Kind::kUnreadable);
  EXPECT_EQ(missing.error->detail, "cannot read: gone");  // the file is named once, not twice
}

TEST(LoadPolicy, NoFileIsTheEmbeddedDefaultWithoutReading) {
  FakeEnv env;
  const PolicyLoad load = LoadPolicy(env, "", FileKinds::kRegularOnly);
  ASSERT_FALSE(load.error.has_value());
  EXPECT_EQ(load.policy->hash, policy::DefaultPolicy().hash);
  EXPECT_EQ(env.reads, 0);
}

class PolicyReloadTest : public ::testing::Test {
 protected:
  PolicyReloadTest() { env_.files[kFile] = kHostPolicy; }
  const std::string kFile = "/etc/rdma-webhook/policy.yaml";
  FakeEnv env_;
  Metrics metrics_;
  Front front_{4096, std::make_shared<const policy::Policy>(policy::ParsePolicyText(kHostPolicy)),
               metrics_};
};

TEST_F(PolicyReloadTest, ABrokenFileKeepsThePolicyCountsAndLogsThenRecovers) {
  PolicyReload reload(env_, kFile, front_, metrics_);
  const std::string first = front_.policy()->hash;
  EXPECT_FALSE(reload.Poll());  // nothing changed since construction

  env_.files[kFile] = "apiVersion: rdma-webhook/v1\nkind: Policy\ndefaults: {mode: warpDrive}\n";
  EXPECT_TRUE(reload.Poll());
  EXPECT_EQ(front_.policy()->hash, first);
  EXPECT_EQ(Reloads(metrics_, "failure"), 1u);
  ASSERT_EQ(env_.lines.size(), 1u);
  EXPECT_EQ(env_.lines[0].level, log::Level::kError);
  EXPECT_EQ(env_.lines[0].message, "policy reload failed; the previous policy stays in force");
  EXPECT_EQ(env_.lines[0].fields["file"], kFile);
  EXPECT_EQ(env_.lines[0].fields["trigger"], "file changed");
  EXPECT_NE(env_.lines[0].fields["error"].get<std::string>().find("warpDrive"), std::string::npos);
  EXPECT_EQ(env_.lines[0].fields["policyHash"], first);

  EXPECT_FALSE(reload.Poll());  // the same broken content is not retried every interval

  env_.files[kFile] = std::string(kHostPolicy) + "  - {names: [team-b], mode: hostNetwork}\n";
  EXPECT_TRUE(reload.Poll());
  EXPECT_NE(front_.policy()->hash, first);
  EXPECT_EQ(Reloads(metrics_, "success"), 1u);
  ASSERT_EQ(env_.lines.size(), 2u);
  EXPECT_EQ(env_.lines[1].level, log::Level::kInfo);
  EXPECT_EQ(env_.lines[1].fields["previousPolicyHash"], first);
  EXPECT_EQ(env_.lines[1].fields["policyHash"], front_.policy()->hash);
}

TEST_F(PolicyReloadTest, AFileThatVanishesOrBecomesADeviceKeepsThePolicy) {
  PolicyReload reload(env_, kFile, front_, metrics_);
  const std::string first = front_.policy()->hash;
  env_.files.erase(kFile);
  EXPECT_TRUE(reload.Poll());
  env_.broken[kFile] = ReadError::Kind::kTooLarge;
  EXPECT_FALSE(reload.Poll());  // unreadable before, unreadable now: no change seen
  reload.Reload("SIGHUP");      // but SIGHUP always reads
  EXPECT_EQ(front_.policy()->hash, first);
  EXPECT_EQ(Reloads(metrics_, "failure"), 2u);
  EXPECT_EQ(env_.lines.back().fields["trigger"], "SIGHUP");
  EXPECT_NE(env_.lines.back().fields["error"].get<std::string>().find("64 MiB"), std::string::npos);
  env_.broken.clear();
  env_.files[kFile] = kHostPolicy;
  EXPECT_TRUE(reload.Poll());
  EXPECT_EQ(Reloads(metrics_, "success"), 1u);
  EXPECT_EQ(front_.policy()->hash, first);
}

TEST_F(PolicyReloadTest, WithoutAFileNothingIsRead) {
  PolicyReload reload(env_, "", front_, metrics_);
  const int reads = env_.reads;
  EXPECT_FALSE(reload.Poll());
  reload.Reload("SIGHUP");
  EXPECT_EQ(env_.reads, reads);
  EXPECT_TRUE(env_.lines.empty());
}

}  // namespace
}  // namespace rw::server
