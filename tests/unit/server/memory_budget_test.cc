// The global bound on what requests in flight hold (--max-buffered-bytes), without sockets.
#include "rdma_webhook/server/memory_budget.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace rw::server {
namespace {

TEST(MemoryBudget, RefusesWhatWouldPassTheCapacityAndTakesItBackOnRelease) {
  MemoryBudget budget(100);
  auto a = budget.Reserve(60);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(budget.Reserve(41).has_value());
  auto b = budget.Reserve(40);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(budget.reserved(), 100u);
  EXPECT_FALSE(budget.Reserve(1).has_value());
  a.reset();
  EXPECT_EQ(budget.reserved(), 40u);
  EXPECT_TRUE(budget.Reserve(60).has_value());
  EXPECT_EQ(budget.reserved(), 40u);  // the lease of the line above ended with it
}

TEST(MemoryBudget, ARequestAloneIsAdmittedHoweverLarge) {
  // The body limit decides what one review may be; the budget only decides how many at once.
  MemoryBudget budget(100);
  auto big = budget.Reserve(1000);
  ASSERT_TRUE(big.has_value());
  EXPECT_FALSE(budget.Reserve(1).has_value());
  big.reset();
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(MemoryBudget, ALeaseMovedIsReleasedOnce) {
  MemoryBudget budget(100);
  std::vector<MemoryBudget::Lease> held;
  {
    auto lease = budget.Reserve(30);
    ASSERT_TRUE(lease.has_value());
    held.push_back(std::move(*lease));
  }
  EXPECT_EQ(budget.reserved(), 30u);
  held.clear();
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(RequestCost, GrowsWithTheBodyAndSaturates) {
  EXPECT_EQ(RequestCost(0), kCostPerRequest);
  EXPECT_EQ(RequestCost(1000), 1000 * kCostPerBodyByte + kCostPerRequest);
  EXPECT_EQ(RequestCost(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::size_t>::max());
}

// While its body is read a request holds the body as text, not the decision's cost of it: a
// client that declares the 7 MiB limit and stalls holds a fourteenth of the default budget.
TEST(ReadingCost, IsTheBodyAsTextAndSaturates) {
  EXPECT_EQ(ReadingCost(0), kCostPerRequest);
  EXPECT_EQ(ReadingCost(7 << 20), (7u << 20) + kCostPerRequest);
  EXPECT_LT(ReadingCost(7 << 20) * 13, std::size_t{96} << 20);
  EXPECT_EQ(ReadingCost(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::size_t>::max());
}

TEST(RequestCost, TheDefaultBudgetHoldsManyOrdinaryReviews) {
  // The default of serve.h, 96 MiB: dozens of the 30 KB reviews API servers send for large
  // pods, hundreds of the usual 3 KB ones. A maximal 7 MiB review costs more than the budget
  // and is served when it is alone.
  const std::size_t budget = std::size_t{96} << 20;
  EXPECT_GE(budget / RequestCost(30 * 1024), 40u);
  EXPECT_GE(budget / RequestCost(3 * 1024), 300u);
  EXPECT_GT(RequestCost(7340032), budget);
}

}  // namespace
}  // namespace rw::server
