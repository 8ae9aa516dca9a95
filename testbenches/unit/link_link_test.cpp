// Link: serialisation, latency, saturated goodput against the closed-form wire efficiency, control
// frames costing wire time, FEC losses and lane failure, driven event by event through LinkChannel.
#include "models/link/link.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim::link {
namespace {

LinkConfig make_config(const std::vector<std::string>& overrides = {}) {
  LinkConfig c;
  config::load(c, "", overrides);
  return c;
}

LinkFrame data(uint32_t bytes, uint64_t tag = 0) {
  LinkFrame f;
  f.bytes = bytes;
  f.tag = tag;
  return f;
}

TEST(Link, SingleFrameTiming) {
  const LinkConfig cfg = make_config({"length_m=10"});
  Link link(cfg, 1, "l");
  LinkChannel& ch = link.from(0);
  const Time t0 = Time::ns(3);
  const Time arr = ch.send(data(1500), t0);
  // 10 m x 5 ns/m + 100 ns FEC = 150 ns; the last bit (1508 B incl. preamble) at 10 ps/B.
  EXPECT_EQ(ch.latency(), Time::ns(150));
  EXPECT_EQ(arr, t0 + Time::ps(15080) + Time::ns(150));
  EXPECT_EQ(ch.free_at(), t0 + Time::ps(15200));
  Delivery d;
  EXPECT_FALSE(ch.receive(arr - Time::fs(1), d));
  ASSERT_TRUE(ch.receive(arr, d));
  EXPECT_EQ(d.first_bit, t0 + Time::ns(150));
  EXPECT_FALSE(d.lost);
  EXPECT_EQ(link.from(1).in_flight(), 0u);  // the other direction is independent
}

TEST(Link, BackToBackQueueing) {
  Link link(make_config(), 1, "l");
  LinkChannel& ch = link.from(0);
  // Three frames handed over at once wait for the wire in order.
  const Time a1 = ch.send(data(100, 1), Time());
  const Time a2 = ch.send(data(200, 2), Time());
  const Time a3 = ch.send(data(64, 3), Time::ns(1));
  // Frame 1: 108 B exposed of a 120 B slot; frame 2 starts at 1200 ps, its 208 B exposed end at
  // 3280 ps; frame 3 follows 2's IFG (120 ps) and exposes 72 B.
  EXPECT_EQ(a2 - a1, Time::ps(3280 - 1080));
  EXPECT_EQ(a3 - a2, Time::ps(120 + 720));
  Delivery d;
  std::vector<uint64_t> order;
  while (ch.receive(Time::us(1), d)) order.push_back(d.frame.tag);
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 2, 3}));
}

// Keeps the transmitter saturated and measures delivered goodput in steady state.
double saturated_goodput(const LinkConfig& cfg, uint32_t frame, uint32_t payload, int frames) {
  Link link(cfg, 7, "sat");
  LinkChannel& ch = link.from(0);
  Time now;
  int delivered = 0;
  Time first, last;
  Delivery d;
  while (delivered < frames) {
    while (ch.send(data(frame), now) != Time::max()) {
    }
    now = ch.next_arrival();
    while (ch.receive(now, d)) {
      if (delivered == 0) first = d.arrival;
      last = d.arrival;
      ++delivered;
    }
  }
  return static_cast<double>(payload) * (delivered - 1) * 8 / (last - first).as_s();
}

TEST(Link, SaturatedGoodputMatchesWireEfficiency) {
  // Ethernet frames carrying IPv4/UDP-free L2 payload: payload = frame - 18 (14 B header + FCS).
  for (const auto& overrides : std::vector<std::vector<std::string>>{
           {},
           {"phy.breakout=2"},
           {"phy.fec=rs528", "phy.lanes=4", "phy.lane_rate=25.78125Gbps"}}) {
    const LinkConfig cfg = make_config(overrides);
    const WireFormat w = cfg.phy.wire_format();
    for (uint32_t size : {64u, 256u, 1500u, 4096u, 9216u}) {
      const double measured = saturated_goodput(cfg, size, size - 18, 2000);
      const double predicted = w.goodput_bps(size, size - 18);
      EXPECT_NEAR(measured / predicted, 1.0, 0.005) << size << " B";
      // And a sanity anchor independent of WireFormat: 800G line (850G signalling) x FEC/PCS
      // overhead 800/850 x payload/(size + 20).
      if (overrides.empty()) {
        EXPECT_NEAR(measured, 800e9 * (size - 18) / (std::max(size, 64u) + 20.0), 800e9 * 0.005);
      }
    }
  }
}

TEST(Link, ControlFramesCostWireTime) {
  Link link(make_config(), 1, "l");
  LinkChannel& ch = link.from(0);
  const uint16_t q[8] = {0, 0, 0, 0xffff, 0, 0, 0, 0};
  ch.send(Link::pause_frame(0x08, q), Time());
  EXPECT_EQ(ch.free_at(), Time::ps(840));  // 64 B + 20 B at 800G
  // IB framing: an 8-byte FC packet.
  Link ib(make_config({"phy.framing=infiniband"}), 1, "ib");
  const LinkFrame fc = ib.ib_fc_frame(2, 100, 300);
  ib.from(1).send(fc, Time());
  EXPECT_EQ(ib.from(1).free_at(), Time::ps(80));
  Delivery d;
  ASSERT_TRUE(ib.from(1).receive(Time::us(1), d));
  EXPECT_EQ(d.frame.kind, FrameKind::kIbFlowControl);
  EXPECT_EQ(d.frame.ctrl[0], 100);
  EXPECT_EQ(d.frame.ctrl[1], 300);
  EXPECT_EQ(ib.from(1).frames_received(FrameKind::kIbFlowControl), 1u);
}

TEST(Link, FecLossesFollowTheErrorModel) {
  const LinkConfig cfg = make_config({"phy.pre_fec_ber=2.2e-3"});
  Link link(cfg, 3, "ber");
  LinkChannel& ch = link.from(0);
  const FecErrorModel& m = ch.fec();
  // Expected losses: a 1500 B frame (1508 exposed bytes) back to back every 1520 B of stream,
  // i.e. at offsets 0, 1520, 3040, ... mod 640.
  constexpr int kFrames = 100000;
  double expected = 0;
  for (int i = 0; i < kFrames; ++i) expected += m.frame_loss_at(uint64_t{1520} * i, 1508);
  Time now;
  Delivery d;
  int lost = 0, got = 0;
  for (int i = 0; i < kFrames; ++i) {
    ch.send(data(1500), now);
    now = ch.free_at();
    while (ch.receive(now, d)) lost += d.lost, ++got;
  }
  while (ch.receive(Time::max(), d)) lost += d.lost, ++got;
  ASSERT_EQ(got, kFrames);
  EXPECT_EQ(static_cast<uint64_t>(lost), ch.frames_lost(FrameKind::kData));
  const double p = expected / kFrames;
  ASSERT_GT(p, 0.05);
  EXPECT_NEAR(static_cast<double>(lost) / kFrames, p, 4 * std::sqrt(p * (1 - p) / kFrames));
}

TEST(Link, IdleGapsAdvanceTheCodewordStream) {
  // Idle time is encoded too: the codeword alignment of the next frame moves by the idle bytes.
  Link link(make_config(), 3, "gap");
  LinkChannel& ch = link.from(0);
  ch.send(data(100), Time());  // 120 B slot
  EXPECT_EQ(ch.stream_position(), 120u);
  ch.send(data(100), Time::ps(1200 + 640));  // 64 B of idle at 10 ps/B first
  EXPECT_EQ(ch.stream_position(), 120u + 64 + 120);
  ch.send(data(1500), Time());  // queued: starts back to back, no idle
  EXPECT_EQ(ch.stream_position(), 120u + 64 + 120 + 1520);
}

TEST(Link, LaneFailureHalvesThroughput) {
  const LinkConfig cfg =
      make_config({"phy.lane_failure.lanes_left=4", "phy.lane_failure.time=5us"});
  Link link(cfg, 1, "lf");
  LinkChannel& ch = link.from(0);
  Time now;
  int before = 0, after = 0;
  Delivery d;
  while (now < Time::us(10)) {
    ch.send(data(1500), now);
    now = ch.free_at();
    while (ch.receive(now, d)) (d.first_bit - ch.latency() < Time::us(5) ? before : after)++;
  }
  // 5 us at 800G: 5e-6 * 800e9 / 8 / 1520 = 328.9 frames; 5 us at 400G: 164.5.
  EXPECT_NEAR(before, 329, 1);
  EXPECT_NEAR(after + static_cast<int>(ch.in_flight()), 164.5, 2);
  EXPECT_EQ(ch.format_at(Time::us(6)).mac_rate(), BitRate::gbps(400));
}

TEST(Link, QueueFullRefuses) {
  const LinkConfig cfg = make_config({"length_m=0", "phy.fec_latency=0ns"});
  Link link(cfg, 1, "q", 4);
  LinkChannel& ch = link.from(0);
  int taken = 0;
  while (ch.send(data(1500), Time()) != Time::max()) ++taken;
  EXPECT_EQ(static_cast<size_t>(taken), ch.capacity());
  EXPECT_GE(taken, 4);
  EXPECT_EQ(ch.queue_full(), 1u);
}

}  // namespace
}  // namespace fabricsim::link
