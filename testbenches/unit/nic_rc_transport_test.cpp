// The RC transport's go-back-N recovery in a closed loop: a requester and a responder joined by a
// channel that loses chosen packets. Whatever is lost, every posted message completes exactly
// once or fails (after its retries), and the responder delivers each PSN once, in order.
#include <deque>
#include <functional>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/rc_transport.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {
namespace {

RcConfig rc(const std::vector<std::string>& o = {}) {
  return test::loaded<RcConfig>(o);
}

// One requester, one responder, a one-way delay of 1 us, one data packet every 10 ns.
struct Loop {
  RcRequester req;
  RcResponder resp;
  Packetizer pz;
  // Which data transmissions (psn, nth transmission of it) and which replies (nth reply) to lose.
  std::function<bool(uint32_t psn, int nth)> lose_data = [](uint32_t, int) { return false; };
  std::function<bool(int nth_reply)> lose_reply = [](int) { return false; };
  struct InFlight {
    Time at;
    uint32_t psn;
    bool ack_req, nak;
  };
  std::deque<InFlight> data, replies;
  std::vector<uint32_t> delivered;  // PSNs the responder accepted, in order
  std::vector<uint64_t> done, failed;
  std::vector<std::pair<uint32_t, int>> tx;  // every data transmission
  int replies_sent = 0;
  Time now;

  Loop(const RcConfig& c, uint32_t psn)
      : req(c, psn), resp(c, psn), pz(test::loaded<PacketizerConfig>({"mtu=1024B"})) {}
  uint32_t post(uint64_t id, uint32_t bytes, uint32_t psn) {
    Wqe w;
    w.opcode = Opcode::kRdmaWrite;
    w.length = bytes;
    std::vector<TxPacket> pk;
    const uint32_t next = pz.segment(w, psn, pk);
    req.post(id, pk);
    return next;
  }
  void run(Time until) {
    const Time d = Time::us(1);
    for (; now < until; now += Time::ns(10)) {
      while (!data.empty() && data.front().at <= now) {
        const InFlight f = data.front();
        data.pop_front();
        const auto o = resp.receive(f.psn, f.ack_req);
        if (o.accepted) delivered.push_back(f.psn);
        if (o.reply != RcResponder::Reply::kNone && !lose_reply(replies_sent++))
          replies.push_back({now + d, o.psn, false, o.reply == RcResponder::Reply::kNak});
      }
      while (!replies.empty() && replies.front().at <= now) {
        const InFlight r = replies.front();
        replies.pop_front();
        if (r.nak)
          req.on_nak(r.psn, now, done);
        else
          req.on_ack(r.psn, now, done);
      }
      req.on_timer(now, failed);
      if (const auto p = req.next(now)) {
        int nth = 0;
        for (const auto& [psn, k] : tx) nth += psn == p->pkt.psn;
        tx.emplace_back(p->pkt.psn, nth);
        if (!lose_data(p->pkt.psn, nth)) data.push_back({now + d, p->pkt.psn, p->ack_req, false});
      }
    }
  }
  // Each PSN from `first`, `n` of them, delivered once and in order.
  void expect_delivered_in_order(uint32_t first, uint32_t n) const {
    ASSERT_EQ(delivered.size(), n);
    for (uint32_t k = 0; k < n; ++k)
      ASSERT_EQ(delivered[k], (first + k) & Packetizer::kPsnMask) << k;
  }
};

TEST(RcTransport, WithoutLossEveryMessageCompletesOnceAndNothingIsResent) {
  Loop l(rc(), 0);
  uint32_t psn = 0;
  for (uint64_t m = 0; m < 3; ++m) psn = l.post(m, 10 * 1024, psn);
  l.run(Time::us(20));
  l.expect_delivered_in_order(0, 30);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(l.req.retransmitted(), 0u);
  EXPECT_TRUE(l.req.idle());
  EXPECT_EQ(l.req.deadline(), Time::max());
}

TEST(RcTransport, ALostPacketIsNakedAndEverythingFromItIsResent) {
  Loop l(rc(), 0);
  l.post(7, 30 * 1024, 0);
  l.lose_data = [](uint32_t psn, int nth) { return psn == 5 && nth == 0; };
  l.run(Time::us(20));
  l.expect_delivered_in_order(0, 30);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{7}));
  EXPECT_EQ(l.req.naks(), 1u);
  EXPECT_EQ(l.req.timeouts(), 0u);
  // Go-back-N: PSN 5 and all sent after it before the NAK came back are sent again.
  EXPECT_GE(l.req.retransmitted(), 25u);
  EXPECT_GE(l.resp.out_of_order(), 1u);
}

TEST(RcTransport, ALostLastPacketIsRecoveredByTheTimer) {
  Loop l(rc({"timeout=5us"}), 0);
  l.post(1, 8 * 1024, 0);
  l.lose_data = [](uint32_t psn, int nth) { return psn == 7 && nth == 0; };
  l.run(Time::us(20));
  l.expect_delivered_in_order(0, 8);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
  EXPECT_EQ(l.req.timeouts(), 1u);
  EXPECT_EQ(l.req.naks(), 0u);  // nothing followed it to reveal the gap
}

TEST(RcTransport, ALostAckIsCoveredByTheNextOrByADuplicatesReply) {
  Loop l(rc({"timeout=5us", "ack_every=4"}), 0);
  l.post(1, 8 * 1024, 0);
  l.post(2, 1024, 8);
  // Lose the ACK of message 2 (the third reply): the timer resends PSN 8, the responder
  // answers the duplicate with an ACK, and message 2 completes once.
  l.lose_reply = [](int nth) { return nth == 2; };
  l.run(Time::us(20));
  l.expect_delivered_in_order(0, 9);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(l.req.timeouts(), 1u);
  EXPECT_EQ(l.resp.duplicates(), 1u);
}

TEST(RcTransport, RetriesExhaustedFailTheOutstandingMessagesOnce) {
  Loop l(rc({"timeout=5us", "retry_count=3"}), 0);  // above the 2 us round trip
  l.post(1, 4 * 1024, 0);
  l.post(2, 4 * 1024, 4);
  l.post(3, 4 * 1024, 8);
  l.lose_data = [](uint32_t psn, int) { return psn >= 6; };  // the path dies mid-message 2
  l.run(Time::us(40));
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
  EXPECT_EQ(l.failed, (std::vector<uint64_t>{2, 3}));
  EXPECT_TRUE(l.req.failed());
  // The first timeout resends PSNs 4-5, whose duplicates are ACKed (progress, the retries start
  // again); then retry_count + 1 = 4 timeouts in a row without progress.
  EXPECT_EQ(l.req.timeouts(), 5u);
  l.expect_delivered_in_order(0, 6);
}

TEST(RcTransport, PsnsWrapAt24BitsThroughALoss) {
  const uint32_t first = (1u << 24) - 5;
  Loop l(rc(), first);
  const uint32_t next = l.post(1, 20 * 1024, first);
  EXPECT_EQ(next, 15u);
  l.lose_data = [](uint32_t psn, int nth) { return psn == 1 && nth == 0; };
  l.run(Time::us(20));
  l.expect_delivered_in_order(first, 20);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
  EXPECT_EQ(l.req.naks(), 1u);
}

// The window's last packet asks for an ACK (AckReq), so a window smaller than the ACK coalescing
// still moves.
TEST(RcTransport, TheWindowBoundsWhatIsInFlight) {
  Loop l(rc({"window=4"}), 0);
  l.post(1, 40 * 1024, 0);
  l.run(Time::ns(1500));  // before any ACK is back (2 us round trip)
  EXPECT_EQ(l.tx.size(), 4u);
  l.run(Time::us(40));
  l.expect_delivered_in_order(0, 40);
  EXPECT_EQ(l.done, (std::vector<uint64_t>{1}));
}

// RDMA READ, step by step: the request takes a PSN per response; responses acknowledge; a gap or
// an ACK past an unanswered READ sends a request for the rest; an ACK never completes a READ.
TxPacket read_request(uint32_t psn) {
  return TxPacket{BthOpcode::kReadRequest, psn, 0, 78, 0};
}
TxPacket write_packet(uint32_t psn) {
  return TxPacket{BthOpcode::kWriteOnly, psn, 1024, 78, 0};
}

TEST(RcTransport, AReadTakesAPsnPerResponseAndAGapRequestsTheRest) {
  RcRequester req(rc(), 100);
  req.post_packet(1, write_packet(100), true);
  req.post_read(2, read_request(101), 5);  // PSNs 101..105
  req.post_packet(3, write_packet(106), true);
  const Time t = Time::us(1);
  auto a = req.next(t);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->pkt.psn, 100u);
  auto r = req.next(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pkt.opcode, BthOpcode::kReadRequest);
  EXPECT_EQ(r->pkt.psn, 101u);
  EXPECT_EQ(r->read_left, 5u);
  EXPECT_EQ(r->span, 0u);
  auto w = req.next(t);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->pkt.psn, 106u);  // the PSN after the READ's
  EXPECT_EQ(req.reads_outstanding(), 1u);
  std::vector<uint64_t> done;
  uint64_t m = 0;
  // Response 101: acknowledges the WRITE before the READ, is taken.
  EXPECT_TRUE(req.on_read_response(101, t, done, m));
  EXPECT_EQ(m, 2u);
  EXPECT_EQ(done, std::vector<uint64_t>{1});
  // 102 lost: 103 is a gap, dropped; the requester goes back and asks for 102 on (once).
  EXPECT_FALSE(req.on_read_response(103, t, done, m));
  EXPECT_FALSE(req.on_read_response(104, t, done, m));
  EXPECT_EQ(req.read_rewinds(), 1u);
  auto rr = req.next(t);
  ASSERT_TRUE(rr);
  EXPECT_EQ(rr->pkt.opcode, BthOpcode::kReadRequest);
  EXPECT_EQ(rr->pkt.psn, 102u);
  EXPECT_EQ(rr->read_left, 4u);
  EXPECT_EQ(req.retransmitted(), 1u);
  auto w2 = req.next(t);  // go-back-N: the WRITE after it goes again too
  ASSERT_TRUE(w2);
  EXPECT_EQ(w2->pkt.psn, 106u);
  // An ACK for 106 (the responder's, behind the responses) does not complete the READ: it
  // acknowledges nothing past 101, and asks again (the READ's responses were lost).
  done.clear();
  req.on_ack(106, t, done);
  EXPECT_TRUE(done.empty());
  for (uint32_t p = 102; p <= 105; ++p) EXPECT_TRUE(req.on_read_response(p, t, done, m));
  EXPECT_EQ(done, std::vector<uint64_t>{2});
  EXPECT_EQ(req.reads_outstanding(), 0u);
  EXPECT_FALSE(req.on_read_response(103, t, done, m));  // a duplicate
  req.on_ack(106, t, done);
  EXPECT_EQ(done, (std::vector<uint64_t>{2, 3}));
  EXPECT_TRUE(req.idle());
}

TEST(RcTransport, ReadsBeyondTheInitiatorDepthWait) {
  RcRequester req(rc({"max_reads_outstanding=2"}), 0);
  req.post_read(1, read_request(0), 1);
  req.post_read(2, read_request(1), 3);
  req.post_read(3, read_request(4), 1);
  const Time t = Time::us(1);
  ASSERT_TRUE(req.next(t));
  ASSERT_TRUE(req.next(t));
  EXPECT_FALSE(req.peek());
  EXPECT_FALSE(req.next(t));  // two READs unanswered
  std::vector<uint64_t> done;
  uint64_t m = 0;
  EXPECT_TRUE(req.on_read_response(0, t, done, m));
  EXPECT_TRUE(req.peek());
  auto r = req.next(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pkt.psn, 4u);
}

TEST(RcTransport, TheResponderTakesAReadInOrderRunsADuplicateAndNaksAGap) {
  RcResponder resp(rc(), 10);
  EXPECT_EQ(resp.receive(10, false).accepted, true);
  auto o = resp.receive_read(11, 4);  // PSNs 11..14
  EXPECT_TRUE(o.accepted);
  EXPECT_EQ(o.reply, RcResponder::Reply::kNone);  // its responses are its acknowledgement
  EXPECT_EQ(resp.expected(), 15u);
  o = resp.receive_read(13, 2);  // a request for the rest from 13: run it again
  EXPECT_TRUE(o.duplicate);
  EXPECT_FALSE(o.accepted);
  EXPECT_EQ(resp.expected(), 15u);
  o = resp.receive_read(17, 1);  // 15, 16 missing
  EXPECT_FALSE(o.accepted);
  EXPECT_FALSE(o.duplicate);
  EXPECT_EQ(o.reply, RcResponder::Reply::kNak);
  EXPECT_EQ(o.psn, 15u);
}

}  // namespace
}  // namespace fabricsim::nic
