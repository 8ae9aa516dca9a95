// The RUD transport in a closed loop with chosen delays (spraying reorders), losses and trims:
// packets are placed once in any order, only what is missing goes again, reordering within the
// allowance costs nothing, a trimmed packet is resent at once on its NACK, messages complete when
// all their packets are acknowledged, whatever older messages do.
#include <deque>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/rud_transport.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {
namespace {

RcConfig rc(const std::vector<std::string>& o = {}) {
  return test::loaded<RcConfig>(o);
}
RudConfig rud(const std::vector<std::string>& o = {}) {
  return test::loaded<RudConfig>(o);
}

// One requester, one responder, 1 us one way plus a per-packet extra delay (another path), a
// data packet every 10 ns.
struct Loop {
  RudRequester req;
  RudResponder resp;
  enum class Fate { kArrive, kLose, kTrim };
  std::function<Fate(uint32_t psn, int nth)> fate = [](uint32_t, int) { return Fate::kArrive; };
  std::function<Time(uint32_t psn)> extra = [](uint32_t) { return Time(); };
  struct Data {
    Time at;
    uint32_t psn;
    bool trimmed;
  };
  struct Reply {
    Time at;
    bool nack;
    uint32_t psn;
    RudSack s;
  };
  std::vector<Data> data;  // not in arrival order: scanned
  std::deque<Reply> replies;
  std::vector<uint32_t> placed;
  uint64_t delivered = 0, nacks = 0;
  std::vector<uint64_t> done, failed;
  std::vector<uint32_t> tx;
  Time now;

  Loop(const RcConfig& c, const RudConfig& r, uint32_t psn) : req(c, r, psn), resp(c, psn) {}
  uint32_t post(uint64_t id, uint32_t packets, uint32_t psn) {
    for (uint32_t k = 0; k < packets; ++k)
      req.post_packet(id,
                      TxPacket{BthOpcode::kWriteMiddle, (psn + k) & Packetizer::kPsnMask, 1024, 62,
                               uint64_t{k} * 1024},
                      k + 1 == packets);
    return (psn + packets) & Packetizer::kPsnMask;
  }
  void run(Time until) {
    const Time d = Time::us(1);
    for (; now < until; now += Time::ns(10)) {
      for (size_t i = 0; i < data.size();) {
        if (data[i].at > now) {
          ++i;
          continue;
        }
        const Data f = data[i];
        data.erase(data.begin() + static_cast<std::ptrdiff_t>(i));
        const auto o = resp.receive(f.psn, f.trimmed);
        if (o.placed) placed.push_back(f.psn);
        delivered += o.delivered;
        if (o.reply) replies.push_back({now + d, o.nack, f.psn, o.sack});
      }
      while (!replies.empty() && replies.front().at <= now) {
        const Reply r = replies.front();
        replies.pop_front();
        if (r.nack) {
          ++nacks;
          req.on_nack(r.psn, r.s.cum, now, done);
        } else {
          req.on_sack(r.s, now, done);
        }
      }
      req.on_timer(now, failed);
      if (const auto p = req.next(now)) {
        int nth = 0;
        for (uint32_t psn : tx) nth += psn == p->pkt.psn;
        tx.push_back(p->pkt.psn);
        const Fate f = fate(p->pkt.psn, nth);
        if (f != Fate::kLose)
          data.push_back({now + d + extra(p->pkt.psn), p->pkt.psn, f == Fate::kTrim});
      }
    }
  }
  void expect_all_once(uint32_t first, uint32_t n) const {
    std::vector<int> count(n, 0);
    for (uint32_t psn : placed) {
      const uint32_t k = (psn - first) & Packetizer::kPsnMask;
      ASSERT_LT(k, n);
      ++count[k];
    }
    for (uint32_t k = 0; k < n; ++k) ASSERT_EQ(count[k], 1) << k;
    EXPECT_EQ(delivered, n);
    EXPECT_EQ(resp.expected(), (first + n) & Packetizer::kPsnMask);
    EXPECT_EQ(req.in_flight(), 0u);
  }
};

TEST(Rud, ReorderingWithinTheAllowanceCostsNoRetransmission) {
  Loop l(rc(), rud({"reorder_threshold=16"}), 0);
  l.post(1, 200, 0);
  // Four paths 0, 30, 60, 90 ns longer: a packet is overtaken by up to 9 later ones.
  l.extra = [](uint32_t psn) { return Time::ns(30) * ((psn * 7) % 4); };
  l.run(Time::us(20));
  l.expect_all_once(0, 200);
  EXPECT_GT(l.resp.out_of_order(), 50u);  // reordered, placed as it came
  EXPECT_EQ(l.req.retransmitted(), 0u);
  EXPECT_EQ(l.req.presumed_lost(), 0u);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
}

TEST(Rud, AHoleBeyondTheAllowanceIsSentAgainOnceWithoutTimeout) {
  Loop l(rc(), rud({"reorder_threshold=8"}), 0);
  l.post(1, 100, 0);
  l.fate = [](uint32_t psn, int nth) {
    return psn == 40 && nth == 0 ? Loop::Fate::kLose : Loop::Fate::kArrive;
  };
  l.run(Time::us(20));
  l.expect_all_once(0, 100);
  EXPECT_EQ(l.req.retransmitted(), 1u);
  EXPECT_EQ(l.req.presumed_lost(), 1u);
  EXPECT_EQ(l.req.timeouts(), 0u);
  // Resent when the 8th later packet's ACK came: PSN 48 sent at 480 ns, its ACK at 2.48 us.
  size_t resend = 0;
  for (size_t i = 0; i < l.tx.size(); ++i)
    if (l.tx[i] == 40 && i != 40) resend = i;
  EXPECT_GT(resend, 0u);
}

TEST(Rud, ATrimmedPacketIsNackedAndSentAgainAtOnce) {
  Loop l(rc({"timeout=50us"}), rud({"reorder_threshold=1000"}), 0);
  l.post(1, 20, 0);
  // The tail packet trimmed: with no later packets, only the NACK can recover it before the RTO.
  l.fate = [](uint32_t psn, int nth) {
    return psn == 19 && nth == 0 ? Loop::Fate::kTrim : Loop::Fate::kArrive;
  };
  l.run(Time::us(10));
  l.expect_all_once(0, 20);
  EXPECT_EQ(l.nacks, 1u);
  EXPECT_EQ(l.resp.trimmed(), 1u);
  EXPECT_EQ(l.req.nacked(), 1u);
  EXPECT_EQ(l.req.retransmitted(), 1u);
  EXPECT_EQ(l.req.timeouts(), 0u);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
}

TEST(Rud, MessagesCompleteInPostingOrder) {
  Loop l(rc({"timeout=5us"}), rud({"reorder_threshold=1000"}), 0);
  l.post(1, 10, 0);
  l.post(2, 10, 10);
  // Message 1's packet 3 is lost; message 2 is acknowledged whole before it is recovered, but
  // completes after message 1: the responder hands messages to its host in PSN order, so until
  // message 1 arrives, message 2 is not delivered (and would never be if message 1 failed).
  l.fate = [](uint32_t psn, int nth) {
    return psn == 3 && nth == 0 ? Loop::Fate::kLose : Loop::Fate::kArrive;
  };
  l.run(Time::us(20));
  l.expect_all_once(0, 20);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(l.req.timeouts(), 1u);  // a hole with too few behind it: the timer
}

TEST(Rud, TheSackBlockHoldingThePacketIsReported) {
  RudResponder r(rc({"window=256"}), 100);
  // PSN 100 missing; 101..140 and 170 placed.
  for (uint32_t p = 101; p <= 140; ++p) r.receive(p, false);
  const auto o = r.receive(170, false);
  EXPECT_TRUE(o.placed);
  EXPECT_EQ(o.sack.cum, 99u);
  // 170 is 70 past the expected 100: block 2 (PSNs 164..195), bit 6.
  EXPECT_EQ(o.sack.block, 2u);
  EXPECT_EQ(o.sack.base(), 164u);
  EXPECT_EQ(o.sack.bitmap, 1u << 6);
  const auto lo = r.receive(105, false);  // a duplicate: block 0 (100..131), all but 100
  EXPECT_FALSE(lo.placed);
  EXPECT_EQ(lo.sack.block, 0u);
  EXPECT_EQ(lo.sack.bitmap, ~1u);
  // The hole filled: everything in order up to 140 delivered, cum 140.
  const auto in = r.receive(100, false);
  EXPECT_EQ(in.delivered, 41u);
  EXPECT_EQ(in.sack.cum, 140u);
  EXPECT_EQ(in.sack.block, 0u);
  EXPECT_EQ(in.sack.bitmap, 1u << (170 - 141));
}

TEST(Rud, RetriesExhaustedFailTheOutstandingMessages) {
  Loop l(rc({"timeout=5us", "retry_count=2"}), rud(), 0);
  l.post(1, 4, 0);
  l.post(2, 4, 4);
  l.fate = [](uint32_t psn, int) { return psn == 6 ? Loop::Fate::kLose : Loop::Fate::kArrive; };
  l.run(Time::us(30));
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
  EXPECT_EQ(l.failed, (std::vector<uint64_t>{2}));
  EXPECT_TRUE(l.req.failed());
  EXPECT_EQ(l.req.timeouts(), 3u);
}

TEST(Rud, PsnsWrapAndTheWindowBoundsWhatIsOutstanding) {
  const uint32_t first = (1u << 24) - 3;
  Loop l(rc({"window=8", "timeout=5us"}), rud({"reorder_threshold=2"}), first);
  l.post(1, 40, first);
  l.fate = [](uint32_t psn, int nth) {
    return psn == 1 && nth == 0 ? Loop::Fate::kLose : Loop::Fate::kArrive;
  };
  l.extra = [](uint32_t psn) { return Time::ns(25) * (psn % 3); };
  l.run(Time::ns(1500));
  EXPECT_EQ(l.tx.size(), 8u);
  l.run(Time::us(40));
  l.expect_all_once(first, 40);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
}

TEST(Rud, RandomLossTrimAndReorderEveryPacketPlacedOnce) {
  Loop l(rc({"window=64", "timeout=10us"}), rud({"reorder_threshold=4"}), 77);
  uint32_t psn = 77;
  for (uint64_t m = 1; m <= 20; ++m) psn = l.post(m, 1 + static_cast<uint32_t>(m * 7 % 23), psn);
  const uint32_t n = (psn - 77) & Packetizer::kPsnMask;
  uint64_t x = 12345;
  auto rnd = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  l.fate = [&rnd](uint32_t, int) {
    const uint64_t r = rnd() % 100;
    return r < 5 ? Loop::Fate::kLose : r < 10 ? Loop::Fate::kTrim : Loop::Fate::kArrive;
  };
  l.extra = [&rnd](uint32_t) { return Time::ns(10) * static_cast<int64_t>(rnd() % 20); };
  l.run(Time::us(400));
  l.expect_all_once(77, n);
  EXPECT_EQ(l.done.size(), 20u);
  EXPECT_TRUE(l.failed.empty());
  EXPECT_GT(l.req.nacked(), 0u);
}

}  // namespace
}  // namespace fabricsim::nic
