// Selective repeat in a closed loop with chosen losses: only lost packets are sent again, packets
// that arrive out of order are placed once, every message completes once or fails.
#include <deque>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/rc_selective.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {
namespace {

RcConfig rc(const std::vector<std::string>& o = {}) {
  return test::loaded<RcConfig>(o);
}

// One requester, one responder, 1 us one way, a data packet every 10 ns.
struct Loop {
  SrRequester req;
  SrResponder resp;
  std::function<bool(uint32_t psn, int nth)> lose = [](uint32_t, int) { return false; };
  struct Data {
    Time at;
    uint32_t psn;
    bool ack_req;
  };
  struct Reply {
    Time at;
    Sack s;
  };
  std::deque<Data> data;
  std::deque<Reply> replies;
  std::vector<uint32_t> placed;  // PSNs in the order they were placed
  uint64_t delivered = 0;
  std::vector<uint64_t> done, failed;
  std::vector<uint32_t> tx;
  Time now;

  Loop(const RcConfig& c, uint32_t psn) : req(c, psn), resp(c, psn) {}
  uint32_t post(uint64_t id, uint32_t packets, uint32_t psn) {
    std::vector<TxPacket> pk;
    for (uint32_t k = 0; k < packets; ++k)
      pk.push_back(TxPacket{BthOpcode::kWriteMiddle, (psn + k) & Packetizer::kPsnMask, 1024, 62,
                            uint64_t{k} * 1024});
    req.post(id, pk);
    return (psn + packets) & Packetizer::kPsnMask;
  }
  void run(Time until) {
    const Time d = Time::us(1);
    for (; now < until; now += Time::ns(10)) {
      while (!data.empty() && data.front().at <= now) {
        const Data f = data.front();
        data.pop_front();
        const auto o = resp.receive(f.psn, f.ack_req);
        if (o.placed) placed.push_back(f.psn);
        delivered += o.delivered;
        if (o.reply != RcResponder::Reply::kNone) replies.push_back({now + d, o.sack});
      }
      while (!replies.empty() && replies.front().at <= now) {
        req.on_reply(replies.front().s, now, done);
        replies.pop_front();
      }
      req.on_timer(now, failed);
      if (const auto p = req.next(now)) {
        int nth = 0;
        for (uint32_t psn : tx) nth += psn == p->pkt.psn;
        tx.push_back(p->pkt.psn);
        if (!lose(p->pkt.psn, nth)) data.push_back({now + d, p->pkt.psn, p->ack_req});
      }
    }
  }
  // Every PSN of [first, first + n) placed exactly once, and all delivered.
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
  }
};

TEST(SelectiveRepeat, OnlyTheLostPacketIsSentAgain) {
  Loop l(rc(), 0);
  l.post(1, 30, 0);
  l.lose = [](uint32_t psn, int nth) { return psn == 5 && nth == 0; };
  l.run(Time::us(20));
  l.expect_all_once(0, 30);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
  EXPECT_EQ(l.req.retransmitted(), 1u);  // go-back-N sends ~25 again here
  EXPECT_EQ(l.req.timeouts(), 0u);
  EXPECT_GE(l.resp.out_of_order(), 20u);  // placed out of order, not dropped
}

TEST(SelectiveRepeat, SeveralLossesInOneWindowAreEachSentAgainOnce) {
  Loop l(rc(), 0);
  l.post(1, 20, 0);
  l.post(2, 20, 20);
  l.lose = [](uint32_t psn, int nth) { return nth == 0 && (psn == 3 || psn == 4 || psn == 25); };
  l.run(Time::us(30));
  l.expect_all_once(0, 40);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(l.req.retransmitted(), 3u);
}

TEST(SelectiveRepeat, ALostRetransmissionAndALostTailAreRecoveredByTheTimer) {
  Loop l(rc({"timeout=5us"}), 0);
  l.post(1, 10, 0);
  // PSN 2 is lost twice (the second time as a retransmission); PSN 9, the last, once.
  l.lose = [](uint32_t psn, int nth) { return (psn == 2 && nth < 2) || (psn == 9 && nth == 0); };
  l.run(Time::us(30));
  l.expect_all_once(0, 10);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
  EXPECT_EQ(l.req.timeouts(), 1u);
}

TEST(SelectiveRepeat, RetriesExhaustedFailTheOutstandingMessages) {
  Loop l(rc({"timeout=5us", "retry_count=2"}), 0);  // above the 2 us round trip
  l.post(1, 4, 0);
  l.post(2, 4, 4);
  l.lose = [](uint32_t psn, int) { return psn == 6; };
  l.run(Time::us(30));
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
  EXPECT_EQ(l.failed, (std::vector<uint64_t>{2}));
  EXPECT_TRUE(l.req.failed());
  EXPECT_EQ(l.req.timeouts(), 3u);  // retry_count + 1, none of them followed by progress
}

TEST(SelectiveRepeat, PsnsWrapAndTheWindowBoundsWhatIsOutstanding) {
  const uint32_t first = (1u << 24) - 3;
  Loop l(rc({"window=8"}), first);
  l.post(1, 40, first);
  l.lose = [](uint32_t psn, int nth) { return psn == 1 && nth == 0; };
  l.run(Time::ns(1500));
  EXPECT_EQ(l.tx.size(), 8u);
  l.run(Time::us(40));
  l.expect_all_once(first, 40);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
}

// RDMA READ: the responder takes a READ request only in order and moves past its PSNs and over
// what came beyond; the requester places responses in any order and asks again only for the
// missing ones.
TEST(SelectiveRepeat, TheResponderTakesAReadInOrderAndMovesOverWhatCameBeyond) {
  SrResponder resp(rc(), 0);
  // Data 3, 4 and 7 arrive before the READ request at 0 (PSNs 0..2).
  EXPECT_TRUE(resp.receive(3, false).placed);
  EXPECT_TRUE(resp.receive(4, false).placed);
  EXPECT_TRUE(resp.receive(7, false).placed);
  EXPECT_FALSE(resp.receive_read(1, 2).read);  // behind the gap at 0: not run ahead of it
  auto o = resp.receive_read(0, 3);
  EXPECT_TRUE(o.read);
  EXPECT_EQ(o.delivered, 2u);  // 3 and 4
  EXPECT_EQ(resp.expected(), 5u);
  EXPECT_EQ(o.reply, RcResponder::Reply::kAck);
  EXPECT_EQ(o.sack.cum, 4u);
  EXPECT_EQ(o.sack.bitmap, 4u);  // bit 2: PSN 4 + 1 + 2 = 7, still held
  // The bitmap still lines up with the expected PSN: 6 ahead, then 5 moves over 5, 6 and 7.
  o = resp.receive(6, false);
  EXPECT_TRUE(o.placed);
  EXPECT_EQ(o.delivered, 0u);
  EXPECT_EQ(o.sack.cum, 4u);
  EXPECT_EQ(o.sack.bitmap, 6u);  // PSNs 6 and 7
  o = resp.receive(5, false);
  EXPECT_EQ(o.delivered, 3u);
  EXPECT_EQ(resp.expected(), 8u);
  EXPECT_TRUE(resp.receive_read(1, 2).duplicate);  // a request for 1..2 again: run it
}

TEST(SelectiveRepeat, ReadResponsesArePlacedInAnyOrderAndOnlyTheMissingAreAskedAgain) {
  RcConfig c = rc();
  SrRequester req(c, 0);
  req.post_packet(1, TxPacket{BthOpcode::kWriteOnly, 0, 1024, 78, 0}, true);
  req.post_read(2, TxPacket{BthOpcode::kReadRequest, 1, 0, 78, 0}, 6);  // PSNs 1..6
  const Time t = Time::us(1);
  ASSERT_TRUE(req.next(t));
  auto r = req.next(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->read_left, 6u);
  EXPECT_FALSE(req.next(t));  // nothing else posted
  std::vector<uint64_t> done;
  uint64_t m = 0;
  // 1 and 2 lost, 3 comes: taken; the WRITE before the READ is acknowledged by it.
  EXPECT_TRUE(req.on_read_response(3, t, done, m));
  EXPECT_EQ(done, std::vector<uint64_t>{1});
  auto again = req.next(t);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->pkt.opcode, BthOpcode::kReadRequest);
  EXPECT_EQ(again->pkt.psn, 1u);
  EXPECT_EQ(again->span, 2u);  // 1 and 2 only
  EXPECT_FALSE(req.next(t));
  EXPECT_TRUE(req.on_read_response(4, t, done, m));
  EXPECT_FALSE(req.on_read_response(4, t, done, m));  // placed once
  EXPECT_TRUE(req.on_read_response(6, t, done, m));
  EXPECT_TRUE(req.on_read_response(1, t, done, m));
  EXPECT_TRUE(req.on_read_response(2, t, done, m));
  EXPECT_EQ(done, std::vector<uint64_t>{1});  // 5 still missing
  // 5 was found lost when 6 came: asked for alone.
  auto five = req.next(t);
  ASSERT_TRUE(five);
  EXPECT_EQ(five->pkt.psn, 5u);
  EXPECT_EQ(five->span, 1u);
  // An ACK past the READ does not complete it.
  req.on_reply(Sack{6, 0}, t, done);
  EXPECT_EQ(done, std::vector<uint64_t>{1});
  EXPECT_TRUE(req.on_read_response(5, t, done, m));
  EXPECT_EQ(done, (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(req.idle());
  EXPECT_EQ(req.reads_outstanding(), 0u);
}

}  // namespace
}  // namespace fabricsim::nic
