// Values beyond the integer types (found by tests/fuzz/fuzz_nccl: std::stoi threw
// std::out_of_range out of HcaList::Parse, which the webhook answered 500).
#include <gtest/gtest.h>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {
namespace {

TEST(OutOfRange, HcaPortBeyondIntIsAnError) {
  const auto l = HcaList::Parse("mlx5_0:1,mlx5_1:99999999999999999");
  EXPECT_NE(l.error.find("out of range"), std::string::npos) << l.error;
  ASSERT_EQ(l.items.size(), 1u);
  EXPECT_EQ(l.items[0].port, 1);
}

TEST(OutOfRange, LongDecimalValuesAreInvalidNotThrown) {
  const std::string digits(40, '9');
  EXPECT_FALSE(CheckIbDisable(digits).valid);
  EXPECT_FALSE(CheckGidIndex(digits).valid);
  EXPECT_FALSE(CheckGdrLevel(digits).valid);
}

}  // namespace
}  // namespace rw::nccl
