// In-band telemetry in the switch core (switch.int_telemetry, models/common/telemetry.h): a packet
// that comes with an INT stack leaves with it and the egress port's hop on top (the time its
// first bit left, the bytes the port sent before it, the bytes queued behind it, the port's
// rate); a full stack is left as it is; a chip with telemetry off passes stacks unchanged; a
// packet without a stack leaves without one, also from a slot an INT packet used before.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testbenches/unit/switch_test_support.h"

namespace fabricsim::sw {
namespace {

struct IntRecorder : test::Recorder {
  struct Stamped {
    Packet p;
    IntStack tel;
    Time first;
  };
  void on_departure_int(int, const Packet& p, const IntStack& tel, Time first, Time) override {
    stamped.push_back({p, tel, first});
  }
  std::vector<Stamped> stamped;
};

SwitchConfig chip(bool telemetry) {
  return test::small_chip({}, {telemetry ? "int_telemetry=true" : "int_telemetry=false"});
}

TEST(SwitchInt, EachEgressPushesItsHopOntoTheStacksThatCome) {
  SwitchCore core(chip(true), ForwardingTable::identity(4), 1, "sw");
  IntRecorder rec;
  const Time gap = Time::ns(100);  // > a 1,000 B frame at 800G (10 ns): one at a time
  core.receive(0, test::make(1, 0, 1, 1000, Time()), Time());
  IntStack empty;
  core.receive_int(0, test::make(2, 0, 1, 1000, gap), empty, gap);
  IntStack one;
  one.push(Time::ns(5), 123, 456, BitRate::gbps(400));
  core.receive_int(0, test::make(3, 0, 1, 500, gap * 2), one, gap * 2);
  IntStack full;
  for (int k = 0; k < IntStack::kMaxHops; ++k) full.push(Time(), 0, 0, BitRate::gbps(100));
  core.receive_int(0, test::make(4, 0, 1, 500, gap * 3), full, gap * 3);
  test::run_until_idle(core, rec);
  ASSERT_EQ(rec.out.size(), 1u);  // the plain packet, without a stack
  EXPECT_EQ(rec.out[0].p.id, 1u);
  ASSERT_EQ(rec.stamped.size(), 3u);
  const auto& b = rec.stamped[0];
  EXPECT_EQ(b.p.id, 2u);
  ASSERT_EQ(b.tel.hops, 1);
  EXPECT_EQ(b.tel.hop[0].ts_ps, static_cast<uint64_t>(b.first.as_fs() / 1000));
  EXPECT_EQ(b.tel.hop[0].tx_bytes, 1000u);  // packet 1 went before it
  EXPECT_EQ(b.tel.hop[0].qlen, 0u);
  EXPECT_EQ(b.tel.hop[0].rate_mbps, 800000u);
  const auto& c = rec.stamped[1];
  ASSERT_EQ(c.tel.hops, 2);
  EXPECT_EQ(c.tel.hop[0].tx_bytes, 123u);  // the earlier hop kept
  EXPECT_EQ(c.tel.hop[0].qlen, 456u);
  EXPECT_EQ(c.tel.hop[1].tx_bytes, 2000u);
  EXPECT_EQ(rec.stamped[2].tel.hops, IntStack::kMaxHops);  // full: not stamped further
  EXPECT_EQ(rec.stamped[2].tel.hop[IntStack::kMaxHops - 1].rate_mbps, 100000u);
}

TEST(SwitchInt, TheQueueIsWhatWaitsBehindThePacketInItsEgressQueue) {
  // A 4,000 B frame for port 1 (40 ns at 800G), and while it is on the wire two 1,000 B frames
  // with stacks from two other inputs: the first of them leaves with the other behind it in the
  // egress queue, the second with nothing. (The packets still crossing the chip are not the
  // queue: the chip's pipeline holds each for its zero-load latency.)
  SwitchCore core(test::small_chip({}, {"architecture=shared_memory"}),
                  ForwardingTable::identity(4), 1, "sw");
  IntRecorder rec;
  IntStack empty;
  core.receive(0, test::make(1, 0, 1, 4000, Time()), Time());
  for (int in : {2, 3})
    core.receive_int(in, test::make(in, in, 1, 1000, Time::ns(5)), empty, Time::ns(5));
  test::run_until_idle(core, rec);
  ASSERT_EQ(rec.stamped.size(), 2u);
  EXPECT_EQ(rec.stamped[0].tel.hop[0].qlen, 1000u);
  EXPECT_EQ(rec.stamped[1].tel.hop[0].qlen, 0u);
  EXPECT_EQ(rec.stamped[0].tel.hop[0].tx_bytes, 4000u);
  EXPECT_EQ(rec.stamped[1].tel.hop[0].tx_bytes, 5000u);
}

TEST(SwitchInt, WithTelemetryOffStacksPassUnchangedAndPlainPacketsStayPlain) {
  SwitchCore core(chip(false), ForwardingTable::identity(4), 1, "sw");
  IntRecorder rec;
  IntStack empty;
  core.receive_int(0, test::make(1, 0, 1, 1000, Time()), empty, Time());
  test::run_until_idle(core, rec);
  // The slot packet 1 used serves a plain packet next: it leaves without a stack.
  core.receive(0, test::make(2, 0, 1, 1000, Time::us(1)), Time::us(1));
  test::run_until_idle(core, rec);
  ASSERT_EQ(rec.stamped.size(), 1u);
  EXPECT_EQ(rec.stamped[0].tel.hops, 0);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].p.id, 2u);
}

}  // namespace
}  // namespace fabricsim::sw
