// A host device without the SystemC kernel: its MAC's framing and back-to-back timing, its source
// queues and their wait statistics, oldest-first among classes, PFC pauses holding only their own
// class, and a lane failure slowing the frames that start after it.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/config/config.h"
#include "models/host/host.h"
#include "models/host/spill_store.h"

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

// --- SpillStore: a trace's packets that wait while their host class queue is full ---

// The stream number HostsModule gives a host class.
size_t stream_of(int32_t src, int32_t tc) {
  return static_cast<size_t>(src) * Host::kClasses + tc;
}

// A trace's packet as the merged stream carries it: ids in order, times never falling.
Packet traced(uint64_t id, int32_t src, int32_t tc, int32_t dst, uint64_t bytes, Time t) {
  Packet p = packet(id, tc, bytes, t);
  p.src = src;
  p.dst = dst;
  return p;
}

void expect_same(const Packet& got, const Packet& want) {
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.src, want.src);
  EXPECT_EQ(got.dst, want.dst);
  EXPECT_EQ(got.tc, want.tc);
  EXPECT_EQ(got.size, want.size);
  EXPECT_EQ(got.inject_time, want.inject_time);
  EXPECT_EQ(got.ecn, 0);  // a fresh packet, whatever the buffer it came from held
  EXPECT_EQ(got.via, -1);
}

// Interleaved classes, partly drained while others still arrive (as queues drain during a run),
// each get back exactly their own packets, in order, with every field the trace set, across
// chunks on disk, the write buffer and times and sizes of any magnitude.
TEST(SpillStore, EachClassGetsBackItsOwnPacketsInOrder) {
  SpillStore spill;
  std::vector<std::vector<Packet>> want(64 * Host::kClasses);
  std::vector<size_t> next(want.size(), 0);
  Time t;
  for (uint64_t id = 0; id < 300000; ++id) {
    if (id % 97 == 0) t += Time::fs(static_cast<int64_t>(id * id * 1237));  // large jumps too
    const auto src = static_cast<int32_t>(id % 64), tc = static_cast<int32_t>((id / 64) % 3);
    const Packet p =
        traced(id, src, tc, static_cast<int32_t>((id * 7) % 4093), 1 + (id * 131) % 65535, t);
    spill.push(stream_of(src, tc), p);
    want[stream_of(src, tc)].push_back(p);
    if (id % 1000 == 999) {  // some classes drain part of theirs meanwhile
      const size_t s = stream_of(static_cast<int32_t>((id / 1000) % 64), 1);
      for (int k = 0; k < 200 && next[s] < want[s].size(); ++k) {
        Packet got;
        ASSERT_TRUE(spill.pop(s, got));
        expect_same(got, want[s][next[s]++]);
      }
    }
  }
  EXPECT_GT(spill.chunks_written(), 0u);  // the disk was used
  for (size_t s = 0; s < want.size(); ++s) {
    Packet got;
    got.ecn = 3;
    got.via = 5;
    while (next[s] < want[s].size()) {
      ASSERT_TRUE(spill.pop(s, got)) << s;
      expect_same(got, want[s][next[s]++]);
    }
    EXPECT_FALSE(spill.pop(s, got));
    EXPECT_TRUE(spill.empty(s));
  }
  EXPECT_EQ(spill.chunks_read(), spill.chunks_written());
}

// The mechanism that keeps replay linear: a class reads back only its own chunks, however many
// packets other classes have waiting (the cursors this replaced each rescanned the trace file
// from a checkpoint: reading one class cost the whole file). Also: ~5 B of disk per packet of the
// benchmark's trace (200 B packets at time zero, 64 hosts interleaved).
TEST(SpillStore, AClassReadsOnlyItsOwnChunks) {
  SpillStore spill;
  const size_t small = stream_of(5, 0);
  uint64_t small_n = 0, total = 0;
  for (uint64_t id = 0; id < 400000; ++id) {
    const auto src = static_cast<int32_t>(id % 64);
    if (src == 5 && (id / 64) % 2) continue;  // host 5 sends half as much as the others
    spill.push(stream_of(src, 0), traced(id, src, 0, (src + 1) % 64, 200, Time()));
    small_n += src == 5;
    ++total;
  }
  const uint64_t written = spill.chunks_written();
  EXPECT_LE(spill.file_bytes(), total * 52 / 10);  // ~5 B a packet on disk
  Packet p;
  uint64_t got = 0;
  while (spill.pop(small, p)) {
    EXPECT_EQ(p.src, 5);
    ++got;
  }
  EXPECT_EQ(got, small_n);
  // Its own chunks only (6 B a packet: its id steps are 128, two bytes), from disk.
  EXPECT_GE(spill.chunks_read(small), 1u);
  EXPECT_LE(spill.chunks_read(small), small_n * 6 / SpillStore::kChunk + 1);
  EXPECT_EQ(spill.chunks_read(), spill.chunks_read(small));
  EXPECT_EQ(spill.chunks_written(), written);
}

// Chunks read back are reused: the file holds what waits at its fullest moment, not all that ever
// waited; a class whose waiting packets fit in its buffers never makes a file.
TEST(SpillStore, FileHoldsOnlyWhatWaitsAtOnce) {
  SpillStore spill;
  for (uint64_t id = 0; id < 1000; ++id) spill.push(0, traced(id, 0, 0, 1, 200, Time()));
  Packet p;
  while (spill.pop(0, p)) {
  }
  EXPECT_EQ(spill.file_bytes(), 0u);
  EXPECT_EQ(spill.chunks_written(), 0u);
  uint64_t peak = 0, id = 1000;
  for (int round = 0; round < 5; ++round) {
    for (int k = 0; k < 50000; ++k, ++id) spill.push(0, traced(id, 0, 0, 1, 200, Time()));
    if (round == 0) peak = spill.file_bytes();
    EXPECT_EQ(spill.file_bytes(), peak) << round;
    uint64_t n = 0;
    while (spill.pop(0, p)) ++n;
    EXPECT_EQ(n, 50000u);
  }
  EXPECT_GT(peak, 0u);
  EXPECT_LE(peak, 50000u * 6);
}

// A folder the file cannot be made in: the error names it and what to change.
TEST(SpillStore, UnwritableFolderIsAClearError) {
  SpillStore spill("/nonexistent-fabricsim-folder");
  try {
    for (uint64_t id = 0; id < 10000; ++id) spill.push(0, traced(id, 0, 0, 1, 200, Time()));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("/nonexistent-fabricsim-folder"), std::string::npos) << m;
    EXPECT_NE(m.find("TMPDIR"), std::string::npos) << m;
    EXPECT_NE(m.find("host.queue_limit"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace fabricsim::host
