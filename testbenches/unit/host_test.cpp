// A host device without the SystemC kernel: its MAC's framing and back-to-back timing, its source
// queues and their wait statistics, oldest-first among classes, PFC pauses holding only their own
// class, and a lane failure slowing the frames that start after it.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "models/config/config.h"
#include "models/host/host.h"

namespace fabricsim::host {
namespace {

// What the host's link receives.
struct Wire : FrameSink {
  struct Frame {
    Packet p;
    Time first, last;
  };
  std::vector<Frame> frames;
  std::vector<ControlFrame> control_frames;
  void transfer(const Packet& p, Time first, Time last) override {
    frames.push_back({p, first, last});
  }
  void control(const ControlFrame& f, Time, Time) override { control_frames.push_back(f); }
};

const BitRate kRate = BitRate::gbps(100);
const FrameOverhead kEthernet{64, 8, 12};  // minimum frame, preamble + SFD, inter-frame gap
const Time kLatency = Time::ns(10);

Packet packet(uint64_t id, int tc, uint64_t bytes, Time generated) {
  Packet p;
  p.id = id;
  p.src = 0;
  p.dst = 1;
  p.tc = tc;
  p.size = Bytes(bytes);
  p.inject_time = generated;
  return p;
}

std::unique_ptr<link::FlowControl> flow_control(const std::vector<std::string>& overrides) {
  link::FlowControlConfig cfg;
  config::load(cfg, "", overrides);
  return std::make_unique<link::FlowControl>(cfg, 1, kRate, Bytes(100000), Bytes(1000000), 6);
}

std::unique_ptr<Host> make_host(Wire& wire, std::unique_ptr<link::FlowControl> fc = nullptr,
                                BitRate after = kRate, Time change_at = Time::max(),
                                uint32_t queue_limit = UINT32_MAX) {
  HostConfig hc;
  hc.queue_limit = queue_limit;
  hc.id = 0;
  hc.mac = link::Mac(kRate, after, change_at, kEthernet);
  hc.link_latency = kLatency;
  hc.window_start = Time();
  hc.window_end = Time::max();
  auto h = std::make_unique<Host>(hc, std::move(fc));
  h->set_output(&wire);
  return h;
}

// Drives a host as HostsModule does: offer, then serve it at the times it asks for.
void run_until(Host& h, Time end, Time next) {
  while (next != Time::max() && next <= end) next = h.service(next);
}

TEST(Host, FramesGoBackToBackWithPreambleAndGap) {
  Wire wire;
  auto h = make_host(wire);
  EXPECT_TRUE(h->plain());
  Time next = Time::max();
  for (uint64_t i = 0; i < 3; ++i) {
    Packet p = packet(i, 0, i == 2 ? 40 : 1000, Time());  // the last one is padded to 64 B
    next = std::min(next, h->offer(p, Time()));
  }
  run_until(*h, Time::us(1), next);
  ASSERT_EQ(wire.frames.size(), 3u);
  const Time lead = kRate.serialization(Bytes(8)), gap = kRate.serialization(Bytes(20));
  EXPECT_EQ(wire.frames[0].first, lead);
  EXPECT_EQ(wire.frames[0].last, lead + kRate.serialization(Bytes(1000)));
  EXPECT_EQ(wire.frames[1].first, wire.frames[0].last + gap);
  EXPECT_EQ(wire.frames[2].first, wire.frames[1].last + gap);
  EXPECT_EQ(wire.frames[2].last - wire.frames[2].first, kRate.serialization(Bytes(64)));
  for (const auto& f : wire.frames) EXPECT_EQ(f.p.inject_time, f.first + kLatency);
  // The first frame found the wire idle; the two behind it waited, for their predecessors' wire
  // time (frame + gap, the preamble overlapping the gap's end).
  EXPECT_EQ(h->tx().injected, 3u);
  EXPECT_EQ(h->tx().queued, 2u);
  EXPECT_EQ(h->tx().wait_max, wire.frames[2].first - lead);
  EXPECT_EQ(h->backlog(), 0u);
}

TEST(Host, OldestHeadFrameGoesFirstAcrossClasses) {
  Wire wire;
  auto h = make_host(wire);
  Packet a = packet(0, 0, 1500, Time());
  h->offer(a, Time());  // on the wire at once
  Packet b = packet(1, 3, 100, Time::ns(1));
  Packet c = packet(2, 1, 100, Time::ns(2));
  Packet d = packet(3, 3, 100, Time::ns(3));
  h->offer(b, Time::ns(1));
  h->offer(c, Time::ns(2));
  const Time next = h->offer(d, Time::ns(3));
  run_until(*h, Time::us(1), next);
  ASSERT_EQ(wire.frames.size(), 4u);
  EXPECT_EQ(wire.frames[1].p.id, 1u);  // older than c although of a higher class
  EXPECT_EQ(wire.frames[2].p.id, 2u);
  EXPECT_EQ(wire.frames[3].p.id, 3u);
}

TEST(Host, PauseHoldsOnlyItsOwnClass) {
  Wire wire;
  auto h =
      make_host(wire, flow_control({"mode=pfc", "pfc.lossless_mask=2", "pfc.response_delay=10ns"}));
  EXPECT_FALSE(h->plain());
  ControlFrame pause;
  pause.kind = ControlFrame::Kind::kPause;
  pause.enable = 1u << 1;
  pause.quanta[1] = 1000;  // 1000 x 512 bit times at 100 Gb/s = 5.12 us
  pause.bytes = 64;
  h->rx_control(pause, Time());
  Packet held = packet(0, 1, 500, Time::ns(100));
  Packet free = packet(1, 0, 500, Time::ns(100));
  Time next = h->offer(held, Time::ns(100));
  next = std::min(next, h->offer(free, Time::ns(100)));
  run_until(*h, Time::us(20), next);
  ASSERT_EQ(wire.frames.size(), 2u);
  EXPECT_EQ(wire.frames[0].p.id, 1u);  // class 0 was not paused
  EXPECT_LT(wire.frames[0].first, Time::us(1));
  // Class 1 waits out the pause (and the PFC response delay before it took effect).
  EXPECT_EQ(wire.frames[1].p.id, 0u);
  EXPECT_GE(wire.frames[1].first, Time::ns(5120));
  EXPECT_LT(wire.frames[1].first, Time::ns(5120) + Time::us(1));
}

TEST(Host, LaneFailureSlowsFramesThatStartAfterIt) {
  Wire wire;
  auto h = make_host(wire, nullptr, BitRate::gbps(50), Time::us(1));
  EXPECT_FALSE(h->plain());
  Packet before = packet(0, 0, 1000, Time());
  Packet after = packet(1, 0, 1000, Time::us(2));
  h->offer(before, Time());
  h->offer(after, Time::us(2));
  ASSERT_EQ(wire.frames.size(), 2u);
  EXPECT_EQ(wire.frames[0].last - wire.frames[0].first, kRate.serialization(Bytes(1000)));
  EXPECT_EQ(wire.frames[1].last - wire.frames[1].first,
            BitRate::gbps(50).serialization(Bytes(1000)));
}

// A class queue holds at most queue_limit packets: held() says so before an offer (the module
// then refuses the packet and the host counts it), per class, and frees as the queue drains.
TEST(Host, QueueLimitHoldsPerClassAndFreesAsItDrains) {
  Wire wire;
  auto h = make_host(wire, flow_control({"mode=pfc"}), kRate, Time::max(), 2);
  EXPECT_FALSE(h->held(0));
  Time next = Time::max();
  for (uint64_t i = 0; i < 3; ++i) {  // the first goes on the wire, two wait
    Packet p = packet(i, 0, 1000, Time());
    ASSERT_FALSE(h->held(0));
    next = std::min(next, h->offer(p, Time()));
  }
  EXPECT_EQ(h->backlog(), 2u);
  EXPECT_TRUE(h->held(0));   // class 0 full
  EXPECT_FALSE(h->held(1));  // another class has its own queue
  h->refuse();
  EXPECT_EQ(h->tx().refused, 1u);
  run_until(*h, Time::us(1), next);
  EXPECT_EQ(wire.frames.size(), 3u);
  EXPECT_FALSE(h->held(0));
  stats::Registry r;
  h->register_stats(r, "host0");
  EXPECT_EQ(r.to_json()["host0"]["refused_packets"], 1);
}

// A deferred class is refilled from its feeder each time a packet of it leaves, before the host
// decides what to send next: the host sends what an unbounded queue would have, in order.
TEST(Host, DeferredClassIsRefilledAsItDrains) {
  struct Feeder : ClassFeeder {
    uint64_t next_id = 2, last_id = 6;
    void refill(Host& h, int tc) override {
      while (!h.full(tc)) {
        if (next_id > last_id) {
          h.undefer(tc);
          return;
        }
        h.push(packet(next_id++, tc, 1000, Time()));
      }
    }
  } feeder;
  Wire wire;
  auto h = make_host(wire, flow_control({"mode=pfc"}), kRate, Time::max(), 1);
  Packet p0 = packet(0, 0, 1000, Time()), p1 = packet(1, 0, 1000, Time());
  Time next = h->offer(p0, Time());
  next = std::min(next, h->offer(p1, Time()));
  ASSERT_TRUE(h->held(0));
  h->defer(0, &feeder);
  run_until(*h, Time::us(2), next);
  ASSERT_EQ(wire.frames.size(), 7u);
  for (uint64_t i = 0; i < 7; ++i) EXPECT_EQ(wire.frames[i].p.id, i);
  EXPECT_FALSE(h->deferred(0));
  EXPECT_EQ(h->tx().queued, 6u);  // every fed packet counted its wait from its generation
}

TEST(Host, UnsentWorkloadNamesTheCountAndTheKeys) {
  EXPECT_EQ(unsent_workload(10, 10), "");
  EXPECT_EQ(unsent_workload(0, 0), "");
  const std::string m = unsent_workload(61440, 45432);
  EXPECT_NE(m.find("16008 of the trace's 61440 packets"), std::string::npos) << m;
  EXPECT_NE(m.find("sim.drain_limit"), std::string::npos) << m;
}

}  // namespace
}  // namespace fabricsim::host
