// Link-level retry (models/link/llr.h) against hand calculation: a replay's delay, the frames
// held up behind it, a replay lost again, and the replay buffer's fullest.
#include "models/link/llr.h"

#include <gtest/gtest.h>

#include "testbenches/unit/loaded_config.h"

namespace fabricsim::link {
namespace {

struct Fixture {
  LlrConfig cfg = test::loaded<LlrConfig>({"enabled=true", "response=100ns"});
  // Latency 115 ns, an ACK of 1 ns on the wire: a replay costs 100 + 1 + 2 x 115 + the frame.
  LinkRetry llr{cfg, Time::ns(115), Time::ns(1)};
};

TEST(LinkRetry, AFrameNotLostIsNotDelayed) {
  Fixture f;
  EXPECT_EQ(f.llr.deliver(Time::ns(50), Time::ns(40), 4000, false, [] { return false; }), Time());
  EXPECT_EQ(f.llr.replays(), 0u);
}

TEST(LinkRetry, AReplayCostsTheNackTripAndTheFrameAgainAndHoldsUpTheFramesBehind) {
  Fixture f;
  const Time wire = Time::ns(40);
  EXPECT_EQ(f.llr.deliver(Time::ns(40), wire, 4000, true, [] { return false; }), Time::ns(371));
  // The next frame, sent right behind it, arrives right behind the replay.
  const Time behind = f.llr.deliver(Time::ns(80), wire, 4000, false, [] { return false; });
  EXPECT_EQ(behind, Time::ns(371));  // (40 + 115 + 371) + 40 = 80 + 115 + 371
  EXPECT_EQ(f.llr.frames_behind(), 1u);
  // Long after the replay: on time again.
  EXPECT_EQ(f.llr.deliver(Time::us(10), wire, 4000, false, [] { return false; }), Time());
  EXPECT_EQ(f.llr.delay_min(), Time::ns(371));
  EXPECT_EQ(f.llr.delay_max(), Time::ns(371));
}

TEST(LinkRetry, AReplayLostAgainIsReplayedAgain) {
  Fixture f;
  int again = 1;
  const Time d = f.llr.deliver(Time::ns(40), Time::ns(40), 4000, true, [&] { return again-- > 0; });
  EXPECT_EQ(d, Time::ns(2 * 371));
  EXPECT_EQ(f.llr.replays(), 2u);
  EXPECT_EQ(f.llr.replayed_frames(), 1u);
}

TEST(LinkRetry, TheBufferHoldsEachFrameUntilItsAckIsBack) {
  Fixture f;
  // Back to back at 40 ns a frame: each held 40 + 115 + 100 + 1 + 115 = 371 ns from its first
  // bit, so 10 frames (371 / 40, rounded up) are held at once.
  for (int i = 1; i <= 50; ++i)
    f.llr.deliver(Time::ns(40 * i), Time::ns(40), 1000, false, [] { return false; });
  EXPECT_EQ(f.llr.hold_time(Time::ns(40)), Time::ns(371));
  EXPECT_EQ(f.llr.buffer_peak_bytes(), 10u * 1000u);
}

}  // namespace
}  // namespace fabricsim::link
