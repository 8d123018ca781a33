// The TLS connection table without sockets: the --max-connections limit, its metrics, and the
// drain's reach into open connections.
#include "rdma_webhook/server/connections.h"

#include <sys/resource.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace rw::server {
namespace {

bool Renders(const Metrics& metrics, const std::string& line) {
  return metrics.Render().find(line + "\n") != std::string::npos;
}

TEST(Connections, AdmitsUpToTheLimitThenRefusesAndCounts) {
  Metrics metrics;
  Connections connections(2, metrics);
  std::vector<Connections::Slot> open;
  for (int i = 0; i < 2; ++i) {
    auto slot = connections.Admit();
    ASSERT_TRUE(slot.has_value());
    open.push_back(std::move(*slot));
  }
  EXPECT_EQ(connections.open(), 2u);
  EXPECT_TRUE(Renders(metrics, "rdma_webhook_open_connections 2"));
  EXPECT_FALSE(connections.Admit().has_value());
  EXPECT_FALSE(connections.Admit().has_value());
  EXPECT_TRUE(Renders(metrics, "rdma_webhook_connections_refused_total 2"));
  // A closed connection gives its place back.
  open.pop_back();
  EXPECT_EQ(connections.open(), 1u);
  EXPECT_TRUE(Renders(metrics, "rdma_webhook_open_connections 1"));
  EXPECT_TRUE(connections.Admit().has_value());
  EXPECT_TRUE(Renders(metrics, "rdma_webhook_connections_refused_total 2"));
}

TEST(Connections, AMovedSlotGivesItsPlaceBackOnce) {
  Metrics metrics;
  Connections connections(1, metrics);
  std::optional<Connections::Slot> first = connections.Admit();
  ASSERT_TRUE(first.has_value());
  {
    Connections::Slot moved(std::move(*first));
    first.reset();  // the moved-from slot must not release
    EXPECT_EQ(connections.open(), 1u);
    EXPECT_FALSE(connections.Admit().has_value());
  }
  EXPECT_EQ(connections.open(), 0u);
}

TEST(Connections, ALimitOfZeroIsOne) {
  Metrics metrics;
  Connections connections(0, metrics);
  EXPECT_EQ(connections.limit(), 1u);
  EXPECT_TRUE(connections.Admit().has_value());
}

TEST(Connections, DrainRunsEachOpenConnectionsActionOnceAndAdmitsNoMore) {
  Metrics metrics;
  Connections connections(10, metrics);
  int closed = 0;
  auto a = connections.Admit();
  auto b = connections.Admit();
  auto c = connections.Admit();
  a->OnDrain([&] { ++closed; });
  b->OnDrain([&] { ++closed; });
  c.reset();  // ended before the drain: its action must not run
  EXPECT_FALSE(connections.draining());
  EXPECT_EQ(connections.StartDrain(), 2u);
  EXPECT_TRUE(connections.draining());
  EXPECT_EQ(closed, 2);
  EXPECT_FALSE(connections.Admit().has_value());
}

TEST(Connections, AnActionHandedInAfterTheDrainBeganRunsAtOnce) {
  Metrics metrics;
  Connections connections(10, metrics);
  auto late = connections.Admit();
  (void)connections.StartDrain();
  int closed = 0;
  late->OnDrain([&] { ++closed; });
  EXPECT_EQ(closed, 1);
}

// FitConnectionLimit(requested) under descriptor limits {soft, hard}: 0 when it returns
// `expected` and leaves the soft limit at `expected_soft`, else the step that differed.
int FitUnder(rlim_t soft, rlim_t hard, std::size_t requested, std::size_t expected,
             rlim_t expected_soft) {
  const rlimit limits{soft, hard};
  if (setrlimit(RLIMIT_NOFILE, &limits) != 0) return 3;
  if (FitConnectionLimit(requested) != expected) return 1;
  rlimit after{};
  getrlimit(RLIMIT_NOFILE, &after);
  return after.rlim_cur == expected_soft ? 0 : 2;
}

// Each in a child process (a death-test fork): the limits set there do not leak into other tests.
TEST(FitConnectionLimit, RaisesTheSoftDescriptorLimitWhenTheHardOneAllows) {
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  if (now.rlim_max != RLIM_INFINITY && now.rlim_max < 2048) GTEST_SKIP() << "hard limit too low";
  EXPECT_EXIT(std::exit(FitUnder(256, now.rlim_max, 1000, 1000, 1000 + kDescriptorHeadroom)),
              ::testing::ExitedWithCode(0), "");
}

TEST(FitConnectionLimit, LowersTheLimitToWhatTheHardLimitHolds) {
  EXPECT_EXIT(std::exit(FitUnder(200, 200, 1000, 200 - kDescriptorHeadroom, 200)),
              ::testing::ExitedWithCode(0), "");
}

TEST(FitConnectionLimit, KeepsALimitThatFits) {
  EXPECT_EXIT(std::exit(FitUnder(200, 200, 100, 100, 200)), ::testing::ExitedWithCode(0), "");
}

TEST(FitConnectionLimit, LeavesAtLeastOneUnderATinyLimit) {
  EXPECT_EXIT(std::exit(FitUnder(16, 16, 1000, 1, 16)), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace rw::server
