// ZeroLoadLatency (models/switch/zero_load.h): the cut-through core's zero-load egress start,
// worked by hand for a 1.35 GHz core (P = 740,741 fs), 800G ports (10,000 fs a byte), 254 B
// cells, 300 ingress and 20 + 300 crossbar/egress cycles, a frame's first bit in at t = 0.
// (The core itself is checked against the same closed form by testbenches/cli/
// chip_latency_test.py, and the whole replay against the fabric by validation nic_slowdown.)
#include "models/switch/zero_load.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testbenches/unit/loaded_config.h"

namespace fabricsim::sw {
namespace {

constexpr int64_t P = 740741;

ZeroLoadLatency chip(std::vector<std::string> extra) {
  std::vector<std::string> o = {"core_clock=1.35GHz",          "cell_size=254B",
                                "pipeline.ingress_cycles=300", "pipeline.crossbar_cycles=20",
                                "pipeline.egress_cycles=300",  "egress.start=no_underrun",
                                "forwarding=cut_through",      "crossbar.speedup=1.0"};
  o.insert(o.end(), extra.begin(), extra.end());
  return ZeroLoadLatency(test::loaded<SwitchConfig>(o), BitRate::gbps(800));
}

// Cell k (bytes up to b_k) is eligible at ceil(b_k x 10,000 / P) + 300: 64 B: cycle 301;
// 1,000 B (cells end at 254, 508, 762, 1,000 B): cycles 304, 307, 311, 314.
TEST(ZeroLoadLatency, SharedMemoryStartsWhenNoCellCanBeLate) {
  const ZeroLoadLatency z = chip({"architecture=shared_memory"});
  EXPECT_TRUE(z.exact());
  // One cell: at the egress 320 cycles after it is eligible: 621 P.
  EXPECT_EQ(z.first_bit(Time(), 64).as_fs(), 621 * P);
  // Cell k may be needed k x 254 B of wire after the first bit: the start is the latest of
  // (x_k + 320) P - k 2,540,000 fs = 624 P, 627 P - 2.54e6, 631 P - 5.08e6, 634 P - 7.62e6:
  // cell 2's, 462,327,571 fs (not before cycle 624 either).
  EXPECT_EQ(z.first_bit(Time(), 1000).as_fs(), 631 * P - 5080000);
  // The phase of t0 moves the start by whole cycles only: a first bit 1 fs later is eligible on
  // the same edges.
  EXPECT_EQ(z.first_bit(Time::fs(1), 1000).as_fs(), 631 * P - 5080000);
}

// A crossbar: each cell crosses 2 cycles after its matching (iterations 2 x 1 cycle), and at
// most one matching a slot of 254 B x 10,000 fs / speedup 1 = 2,540,000 fs (3.43 cycles):
// matchings at 304 P, then 304 P + 2.54e6 (cycle 308 > 307), 311 P (eligible later than the
// slot), 311 P + 2.54e6 (cycle 315 > 314): crossings 306, 310, 313, 317.
TEST(ZeroLoadLatency, CrossbarMatchesOncePerSlot) {
  const ZeroLoadLatency z = chip({"architecture=voq", "scheduler.iterations=2",
                                  "scheduler.cycles_per_iteration=1", "scheduler.pipelined=false"});
  EXPECT_EQ(z.first_bit(Time(), 64).as_fs(), 623 * P);
  // Starts: 626 P, 630 P - 2.54e6, 633 P - 5.08e6, 637 P - 7.62e6: the last cell's.
  EXPECT_EQ(z.first_bit(Time(), 1000).as_fs(), 637 * P - 7620000);
}

// Store-and-forward waits for the last cell: 314 + 320 = cycle 634 (an estimate: not the
// shipped mode).
TEST(ZeroLoadLatency, StoreAndForwardStartsWithTheLastCell) {
  const ZeroLoadLatency z = chip({"architecture=shared_memory", "forwarding=store_and_forward"});
  EXPECT_FALSE(z.exact());
  EXPECT_EQ(z.first_bit(Time(), 1000).as_fs(), 634 * P);
}

}  // namespace
}  // namespace fabricsim::sw
