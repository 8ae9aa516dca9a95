// DivideBy must agree with hardware division everywhere, including the edges.
#include "models/common/fast_div.h"

#include <random>

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

TEST(DivideBy, MatchesDivisionOnEdgesAndRandomValues) {
  std::mt19937_64 gen(42);
  const uint64_t divisors[] = {
      2, 3, 7, 740741, 1000000, 666667, 1ull << 32, (1ull << 63) + 5, UINT64_MAX};
  for (uint64_t d : divisors) {
    DivideBy div(d);
    auto check = [&](uint64_t x) {
      ASSERT_EQ(div.floor(x), x / d) << x << " / " << d;
      ASSERT_EQ(div.ceil(x), x / d + (x % d != 0)) << x << " / " << d;
    };
    for (uint64_t x : {uint64_t{0}, uint64_t{1}, d - 1, d, d + 1, 2 * d - 1, UINT64_MAX,
                       UINT64_MAX - 1, UINT64_MAX / d * d, UINT64_MAX / d * d - 1})
      check(x);
    for (int k = 0; k < 200000; ++k) check(gen() >> (gen() % 64));
  }
}

TEST(DivideBy, RejectsDivisorsBelowTwo) {
  EXPECT_THROW(DivideBy(0), std::invalid_argument);
  EXPECT_THROW(DivideBy(1), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim
