// DCQCN's notification point: a CNP for a CE-marked packet, at most one per QP per interval.
#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/cnp_generator.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {
namespace {

TEST(CnpGenerator, OneCnpPerQpPerIntervalAndOnlyForMarkedPackets) {
  CnpGenerator g(test::loaded<CnpConfig>({"interval=50us"}));
  EXPECT_FALSE(g.on_packet(0, false, Time::us(1)));  // not marked
  EXPECT_TRUE(g.on_packet(0, true, Time::us(2)));
  EXPECT_FALSE(g.on_packet(0, true, Time::us(51)));  // 49 us later
  EXPECT_TRUE(g.on_packet(3, true, Time::us(51)));   // another QP: its own interval
  EXPECT_TRUE(g.on_packet(0, true, Time::us(52)));   // 50 us after the first
  EXPECT_FALSE(g.on_packet(0, true, Time::us(60)));
  EXPECT_EQ(g.marked(), 5u);
  EXPECT_EQ(g.cnps(), 3u);
}

TEST(CnpGenerator, AZeroIntervalAnswersEveryMark) {
  CnpGenerator g(test::loaded<CnpConfig>({"interval=0ns"}));
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(g.on_packet(1, true, Time::us(1)));
  EXPECT_EQ(g.cnps(), 4u);
}

}  // namespace
}  // namespace fabricsim::nic
