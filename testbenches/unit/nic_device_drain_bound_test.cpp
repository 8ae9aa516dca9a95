// NicArray::done_not_before, the instant before which a message list cannot be done (the
// runner's drain skips its checks up to it): never later than the instant the last message
// completes or fails (with losses, READs, SENDs, a QP that gives up, no retries at all), and
// not just `now` (a bound that said nothing would leave the drain stepping 5 ns at a time).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/nic/nic_array.h"
#include "models/nic/wire_header.h"
#include "testbenches/unit/nic_wire.h"

namespace fabricsim::nic {
namespace {

struct Seen {
  Time done = Time::max();  // the first instant nothing was outstanding or left to post
  Time latest_bound;        // the largest bound given before it
  Time furthest_ahead;      // the largest bound - now
  int looks = 0;
};

// Runs the pair, asking for the bound after every instant the NICs ran.
Seen run(Pair& s) {
  Seen r;
  s.wire.after_step = [&](Time now) {
    if (r.done != Time::max()) return;
    const Time b = s.nics.done_not_before(now);
    EXPECT_GE(b, now);
    ++r.looks;
    r.latest_bound = std::max(r.latest_bound, b);
    r.furthest_ahead = std::max(r.furthest_ahead, b - now);
    if (s.nics.outstanding() == 0 && s.nics.unposted() == 0) r.done = now;
  };
  s.wire.run();
  return r;
}

bool is_data(const Packet& p) {
  return WireHeader::read(p).opcode <= static_cast<uint8_t>(BthOpcode::kWriteOnlyImm);
}

TEST(NicDrainBound, OneMessageIsNotDoneBeforeItsBytesCrossedTheLinkOnce) {
  Pair s({msg(0, 1, 1 << 20)});
  const Seen r = run(s);
  ASSERT_NE(r.done, Time::max());
  EXPECT_LE(r.latest_bound, r.done);
  // At its first look the whole MiB (less one packet) was still to go: 20.9 us at 400G.
  EXPECT_GE(r.furthest_ahead, BitRate::gbps(400).serialization(Bytes((1 << 20) - 8192)));
}

TEST(NicDrainBound, NeverAfterTheEndWithLossesReadsSendsAndLaterPosts) {
  for (const char* transport : {"go_back_n", "selective_repeat", "rud", "rud+pipeline"}) {
    // (rud+pipeline: arrivals counted only as they leave a 300 ns receive pipeline)
    const bool piped = std::string(transport) == "rud+pipeline";
    if (piped) transport = "rud";
    // Pairs (no receiver shared: the test wire does not serialise into a host); a READ carries
    // its data the other way (RUD carries none: a WRITE there); the last message is posted
    // after the others are done.
    const bool rud = std::string(transport) == "rud";
    Pair s({msg(0, 1, 300000), msg(2, 3, 200000, Time::us(1), rud ? Verb::kWrite : Verb::kRead),
            msg(4, 5, 70000, Time::ns(300), Verb::kSend), msg(6, 7, 1),
            msg(1, 0, 4096, Time::us(200))},
           {std::string("transport=") + transport, "rc.timeout=20us",
            piped ? "rx_pipeline=300ns" : "rx_pipeline=0ns"},
           8);
    int n = 0;  // three data frames lost, once each
    s.wire.on_frame = [&n](Packet& p) {
      if (!is_data(p)) return true;
      ++n;
      return n != 10 && n != 40 && n != 90;
    };
    const Seen r = run(s);
    ASSERT_NE(r.done, Time::max()) << transport;
    EXPECT_EQ(s.nics.totals().completed, 5u) << transport;
    EXPECT_GT(s.nics.totals().retransmitted, 0u) << transport;
    // The progress line's count (no pass over the QPs): every message's bytes, as totals() says.
    EXPECT_EQ(s.nics.progress().bytes_completed, 300000u + 200000u + 70000u + 1u + 4096u)
        << transport;
    EXPECT_EQ(s.nics.progress().bytes_completed, s.nics.totals().bytes_completed) << transport;
    // The rest of the line: the same counts as totals(), and the payload that arrived (the
    // three lost frames' retransmissions, and go-back-N's resent followers, counted again).
    const NicArray::Progress pr = s.nics.progress();
    const Nic::Stats t = s.nics.totals();
    EXPECT_EQ(pr.posted, 5u) << transport;
    EXPECT_EQ(pr.completed, t.completed) << transport;
    EXPECT_EQ(pr.failed, 0u) << transport;
    EXPECT_EQ(pr.bytes_posted, t.bytes_posted) << transport;
    EXPECT_EQ(pr.bytes_completed, t.bytes_completed) << transport;
    EXPECT_GE(pr.payload_arrived, pr.bytes_completed) << transport;
    EXPECT_LE(r.latest_bound, r.done) << transport;
    EXPECT_GE(r.latest_bound, Time::us(200)) << transport;  // the last post
  }
}

TEST(NicDrainBound, AQpThatGivesUpEndsTheWorkBeforeItsBytesArrive) {
  // Host 0's frames never arrive: its messages fail after retry_count + 1 timeouts, their
  // bytes never sent through. A bound from the bytes alone would pass the failure.
  for (const char* retries : {"rc.retry_count=2", "rc.retry_count=0"}) {
    Pair s({msg(0, 1, 8192), msg(0, 1, 4096, Time::us(1))}, {"rc.timeout=10us", retries});
    s.wire.on_frame = [](Packet& p) { return p.src != 0; };
    const Seen r = run(s);
    ASSERT_NE(r.done, Time::max()) << retries;
    EXPECT_EQ(s.nics.totals().failed, 2u) << retries;
    EXPECT_EQ(s.nics.progress().bytes_completed, 0u) << retries;
    EXPECT_EQ(s.nics.progress().failed, 2u) << retries;
    EXPECT_EQ(s.nics.progress().payload_arrived, 0u) << retries;
    EXPECT_LE(r.latest_bound, r.done) << retries;
    EXPECT_GT(r.looks, 1) << retries;
  }
}

}  // namespace
}  // namespace fabricsim::nic
