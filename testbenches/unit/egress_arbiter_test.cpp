// Egress class arbitration: strict priority and DWRR byte shares.
#include "models/switch/egress_port.h"

#include <gtest/gtest.h>

namespace fabricsim::sw {
namespace {

TEST(EgressArbiter, StrictPriorityServesHighestClass) {
  EgressArbiter a(EgressPolicy::kStrictPriority, 4, {}, 1000);
  uint64_t heads[4] = {100, 0, 100, 0};
  EXPECT_EQ(a.pick(heads), 2);
  heads[3] = 64;
  EXPECT_EQ(a.pick(heads), 3);
  uint64_t none[4] = {0, 0, 0, 0};
  EXPECT_EQ(a.pick(none), -1);
}

TEST(EgressArbiter, DwrrSharesBytesByWeightWhateverThePacketSizes) {
  // Always-backlogged classes with very different packet sizes: bytes served must follow weights
  // 1:2:4 (Shreedhar & Varghese), within one quantum per round over many rounds.
  EgressArbiter a(EgressPolicy::kDwrr, 3, {1, 2, 4}, 1500);
  const uint64_t heads[3] = {64, 1500, 9000};
  uint64_t bytes[3] = {0, 0, 0};
  for (int i = 0; i < 200000; ++i) {
    const int tc = a.pick(heads);
    ASSERT_GE(tc, 0);
    bytes[tc] += heads[tc];
  }
  const double total = static_cast<double>(bytes[0] + bytes[1] + bytes[2]);
  EXPECT_NEAR(bytes[0] / total, 1.0 / 7, 0.005);
  EXPECT_NEAR(bytes[1] / total, 2.0 / 7, 0.005);
  EXPECT_NEAR(bytes[2] / total, 4.0 / 7, 0.005);
}

TEST(EgressArbiter, DwrrSkipsEmptyClassesAndIsWorkConserving) {
  EgressArbiter a(EgressPolicy::kDwrr, 3, {}, 1000);
  const uint64_t heads[3] = {0, 0, 500};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.pick(heads), 2);
}

}  // namespace
}  // namespace fabricsim::sw
