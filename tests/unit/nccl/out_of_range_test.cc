// Values beyond the integer types are invalid values, never exceptions (found by
// tests/fuzz/fuzz_nccl: std::stoi threw std::out_of_range in a grammar since removed, which the
// webhook answered 500).
#include <gtest/gtest.h>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {
namespace {

TEST(OutOfRange, LongDecimalValuesAreInvalidNotThrown) {
  const std::string digits(40, '9');
  EXPECT_FALSE(CheckIbDisable(digits).valid);
  EXPECT_FALSE(CheckGidIndex(digits).valid);
  // NCCL clamps an old-style level (strtol saturates, then the table's last entry): valid
  EXPECT_TRUE(CheckGdrLevel(digits).valid);
  EXPECT_FALSE(CheckGdrLevel(digits).number.has_value());
}

}  // namespace
}  // namespace rw::nccl
