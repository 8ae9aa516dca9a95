// The calendars of models/common/event_wheel.h: DelayLine keeps only the low 32 bits of each due
// cycle and grows from a small ring; neither may change what comes out when.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/event_wheel.h"

namespace fabricsim {
namespace {

TEST(DelayLine, ItemsLeaveInOrderAtTheirDueCyclesBeyond32BitsAndAcrossGrowth) {
  DelayLine<uint32_t> line;
  EXPECT_EQ(line.next_cycle(), DelayLine<uint32_t>::kNone);
  // Start past 2^32 and cross the next multiple of 2^32 with 100 items (the ring grows from 16).
  const int64_t base = (int64_t{1} << 33) - 37;
  for (uint32_t k = 0; k < 100; ++k) line.push(base + 3 * k, k);
  for (uint32_t k = 0; k < 100; ++k) {
    ASSERT_EQ(line.next_cycle(), base + 3 * k) << k;
    EXPECT_FALSE(line.due(base + 3 * k - 1));
    EXPECT_TRUE(line.due(base + 3 * k));
    EXPECT_EQ(line.pop(), k);
  }
  EXPECT_EQ(line.next_cycle(), DelayLine<uint32_t>::kNone);
  // Empty again: the next push may be due anywhere.
  line.push(7, 1);
  EXPECT_EQ(line.next_cycle(), 7);
}

TEST(DelayLine, AnItemDueBeforeTheOneAheadWaitsForItAndKeepsItsOwnDueCycle) {
  DelayLine<uint32_t> line;
  line.push(1000, 1);
  line.push(990, 2);                       // due earlier, behind: a FIFO
  line.push(990 + int64_t{INT32_MAX}, 3);  // the most a next item may be due after
  EXPECT_EQ(line.next_cycle(), 1000);
  EXPECT_EQ(line.pop(), 1u);
  EXPECT_EQ(line.next_cycle(), 990);
  EXPECT_EQ(line.pop(), 2u);
  EXPECT_EQ(line.next_cycle(), 990 + int64_t{INT32_MAX});
  EXPECT_EQ(line.pop(), 3u);
}

TEST(DelayLine, AnItemDue2To31CyclesFromTheOneBeforeIsRefused) {
  DelayLine<uint32_t> line;
  line.push(5, 1);
  EXPECT_THROW(line.push(5 + int64_t{INT32_MAX} + 1, 2), std::logic_error);
  line.push(5 + int64_t{INT32_MAX}, 2);
  EXPECT_THROW(line.push(4, 3), std::logic_error);  // 2^31 before the tail
}

}  // namespace
}  // namespace fabricsim
