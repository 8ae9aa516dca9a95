// The NIC as a device (models/nic/nic.h, nic_array.h), driven without the SystemC kernel: NICs on
// a fake wire (each host's frames serialised at the line rate, delivered a latency later, some
// dropped or altered on purpose), so that what the fabric relies on can be checked directly:
// every message delivered once and intact, losses recovered (go-back-N resends from the lost
// packet on, selective repeat only the lost one), a QP that exhausts its retries fails its
// messages, ECN marks slow the sender down, and the integrity check catches a damaged payload;
// the entropy the NICs write (per QP for RC, per packet for RUD, none unless switches hash it),
// and RUD's NACK and resend of a trimmed packet.
#include <gtest/gtest.h>

#include <stdexcept>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "models/nic/nic_array.h"
#include "models/nic/wire_header.h"
#include "testbenches/unit/loaded_config.h"
#include "testbenches/unit/nic_wire.h"

namespace fabricsim::nic {
namespace {

bool is_data(const Packet& p) {
  return WireHeader::read(p).opcode <= static_cast<uint8_t>(BthOpcode::kWriteOnlyImm);
}

TEST(NicDevice, MessagesArriveOnceIntactAndComplete) {
  Pair s({msg(0, 1, 65536), msg(0, 1, 100), msg(1, 0, 300000, Time::us(1), Verb::kSend),
          msg(0, 1, 5000, Time::us(2), Verb::kWriteImm)});
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.posted, 4u);
  EXPECT_EQ(t.completed, 4u);
  EXPECT_EQ(t.messages_delivered, 4u);
  EXPECT_EQ(t.bytes_delivered, 65536u + 100 + 300000 + 5000);
  EXPECT_EQ(t.retransmitted, 0u);
  // 4096 B MTU: 16 + 1 + 74 + 2 data packets.
  EXPECT_EQ(t.data_packets, 16u + 1 + 74 + 2);
  EXPECT_TRUE(s.violations().empty());
  for (const auto& row : s.nics.fct()) {
    ASSERT_TRUE(row.received.has_value());
    EXPECT_EQ(row.received->checksum, s.nics.checksum(*row.sent));
    // The sender completes after the receiver has the data, the CQE after the ACK's arrival.
    EXPECT_GT(row.sent->completion, row.sent->first_out);
    EXPECT_GT(row.received->delivered, row.sent->first_out);
  }
  // Each receiver's record was matched with its sender's as it came, then dropped: a run keeps
  // one record per message, not two.
  EXPECT_TRUE(s.nics.nic(0).received().empty());
  EXPECT_TRUE(s.nics.nic(1).received().empty());
}

// Drops the n-th data frame sent (1-based), once.
std::function<bool(Packet&)> drop_data(int n) {
  auto seen = std::make_shared<int>(0);
  return [seen, n](Packet& p) { return !(is_data(p) && ++*seen == n); };
}

TEST(NicDevice, GoBackNResendsFromTheLostPacketOnAndSelectiveRepeatOnlyIt) {
  // 64 packets in one message; the 10th is lost. Go-back-N: the NAK comes back a round trip
  // later, when the sender has sent more; everything from the 10th on goes again.
  Pair g({msg(0, 1, 64 * 4096)});
  g.wire.on_frame = drop_data(10);
  g.wire.run();
  Pair r({msg(0, 1, 64 * 4096)}, {"transport=selective_repeat"});
  r.wire.on_frame = drop_data(10);
  r.wire.run();
  for (Pair* s : {&g, &r}) {
    EXPECT_EQ(s->nics.totals().completed, 1u);
    EXPECT_TRUE(s->violations().empty());
  }
  EXPECT_EQ(r.nics.totals().retransmitted, 1u);
  EXPECT_GT(g.nics.totals().retransmitted, 1u);
  EXPECT_EQ(g.nics.totals().naks_sent, 1u);
  EXPECT_GT(r.nics.totals().out_of_order, 0u);
}

TEST(NicDevice, SelectiveRepeatPlacesAWholeWindowAheadIntact) {
  // PSN 0 lost twice (its second resend comes only with the timer, after the whole window has
  // been sent and SACKed), the 255 behind it in flight (window 256): the responder holds them all
  // until PSN 0 fills the gap, every one in its own slot and none beyond its range (a ring of 64
  // slots once overwrote PSN 0 with PSN 64 here, and the checksum caught it; PSNs past 64 were
  // dropped and sent again).
  Pair s({msg(0, 1, 300 * 4096)},
         {"transport=selective_repeat", "rc.window=256", "rc.timeout=50us"});
  int psn0 = 0;
  // The responder's ring is made for the gap and given back once it filled (a ring a QP for
  // good was 12 KB each of a 1,024-rank all-to-all's million QPs).
  size_t held = 0;
  s.wire.on_frame = [&psn0, &held, &s](Packet& p) {
    const WireHeader h = WireHeader::read(p);
    held = std::max(held, s.nics.nic(1).rings_held());
    return !(is_data(p) && h.psn == 0 && ++psn0 <= 2);
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(psn0, 3);
  EXPECT_EQ(t.completed, 1u);
  EXPECT_EQ(t.timeouts, 1u);
  EXPECT_EQ(t.retransmitted, 2u);  // PSN 0 twice: nothing else was lost or dropped
  EXPECT_TRUE(s.violations().empty());
  EXPECT_EQ(held, 1u);
  EXPECT_EQ(s.nics.nic(1).rings_held(), 0u);
}

TEST(NicDevice, InOrderTrafficHoldsNoRingOfPlacedPackets) {
  for (const char* transport : {"selective_repeat", "rud"}) {
    Pair s({msg(0, 1, 64 * 4096), msg(1, 0, 64 * 4096)}, {std::string("transport=") + transport});
    size_t held = 0;
    s.wire.on_frame = [&held, &s](Packet&) {
      held = std::max({held, s.nics.nic(0).rings_held(), s.nics.nic(1).rings_held()});
      return true;
    };
    s.wire.run();
    EXPECT_EQ(s.nics.totals().completed, 2u) << transport;
    EXPECT_EQ(held, 0u) << transport;
    EXPECT_TRUE(s.violations().empty()) << transport;
  }
}

TEST(NicDevice, ALostLastAckIsRecoveredByTheTimer) {
  // Every ACK lost once: the requester's timer resends, the responder re-ACKs the duplicate.
  Pair s({msg(0, 1, 4096)}, {"rc.timeout=10us"});
  bool lost = false;
  s.wire.on_frame = [&lost](Packet& p) {
    if (WireHeader::read(p).opcode != kOpAck || lost) return true;
    lost = true;
    return false;
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.completed, 1u);
  EXPECT_EQ(t.timeouts, 1u);
  EXPECT_EQ(t.retransmitted, 1u);
  EXPECT_EQ(t.duplicates, 1u);
  EXPECT_EQ(t.messages_delivered, 1u);  // the resent packet is not delivered twice
  EXPECT_TRUE(s.violations().empty());
  const auto rows = s.nics.fct();
  EXPECT_GT(rows[0].sent->completion, Time::us(10));  // after the timeout
}

TEST(NicDevice, AReadOnRudIsRefusedNotLeftUnfinished) {
  // RUD carries no READ (a run's configuration refuses it); posted anyway, the NIC says so.
  Pair s({msg(0, 1, 8192, Time(), Verb::kRead)}, {"transport=rud"});
  EXPECT_THROW(s.wire.run(), std::invalid_argument);
}

TEST(NicDevice, AQpThatExhaustsItsRetriesFailsItsMessages) {
  Pair s({msg(0, 1, 8192), msg(0, 1, 4096, Time::us(1)), msg(0, 1, 4096, Time::us(200))},
         {"rc.timeout=10us", "rc.retry_count=2"});
  s.wire.on_frame = [](Packet& p) { return p.src != 0; };  // host 0's frames never arrive
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.failed, 3u);  // the QP's messages, and the one posted after it failed
  EXPECT_EQ(t.completed, 0u);
  EXPECT_EQ(t.timeouts, 3u);  // retry_count retries, then the give-up
  EXPECT_EQ(s.nics.outstanding(), 0u);
  EXPECT_TRUE(s.violations().empty());  // failed is accounted, not an integrity violation
  // but the work was not done: the liveness check says so, with the ids.
  std::vector<std::string> v;
  s.nics.check_done(v, "at the end");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("3 of 3 messages failed"), std::string::npos) << v[0];
  EXPECT_NE(v[0].find("ids 0, 1, 2;"), std::string::npos) << v[0];
}

TEST(NicDevice, RudNeverCompletesAMessageBehindOneThatFails) {
  // Message 0's packets never arrive; message 1's does, and is SACKed. The responder hands
  // messages over in PSN order, so message 1 is never delivered: the sender must not complete
  // it, and when the QP gives up both fail (before, message 1 completed: a violation).
  Pair s({msg(0, 1, 4 * 4096), msg(0, 1, 4096)},
         {"transport=rud", "rc.timeout=10us", "rc.retry_count=1"});
  auto lost = std::make_shared<std::set<uint32_t>>();
  s.wire.on_frame = [lost](Packet& p) {
    if (p.src != 0 || !is_data(p)) return true;
    const uint32_t psn = WireHeader::read(p).psn;
    if (lost->size() < 4) lost->insert(psn);
    return lost->count(psn) == 0;
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.messages_delivered, 0u);
  EXPECT_EQ(t.completed, 0u);
  EXPECT_EQ(t.failed, 2u);
  EXPECT_EQ(s.nics.outstanding(), 0u);
  EXPECT_TRUE(s.violations().empty()) << s.violations().front();
}

TEST(NicDevice, AnInlineWriteSkipsTheWqeFetchAndThePayloadRead) {
  Pair plain({msg(0, 1, 8)});
  plain.wire.run();
  Pair inl({msg(0, 1, 8)}, {"max_inline=220"});
  inl.wire.run();
  EXPECT_EQ(plain.nics.totals().wqe_fetches, 1u);
  EXPECT_EQ(inl.nics.totals().wqe_fetches, 0u);
  EXPECT_EQ(inl.nics.nic(0).inline_posts(), 1u);
  EXPECT_TRUE(inl.violations().empty());
  // Without the fetch (a 64 B read) and the payload read (8 B), two read round trips over PCIe
  // and host memory (each > 2 x 100 ns of link latency + 200 ns of completer) are gone; the
  // WQE goes down as one 64 B block instead of an 8 B doorbell.
  const Time a = plain.nics.fct()[0].received->delivered, b = inl.nics.fct()[0].received->delivered;
  EXPECT_GT(a - b, Time::ns(2 * 400));
  // With max_inline 0 (the default) even a 0-byte message fetches its WQE.
  Pair zero({msg(0, 1, 0)});
  zero.wire.run();
  EXPECT_EQ(zero.nics.totals().wqe_fetches, 1u);
  EXPECT_EQ(zero.nics.nic(0).inline_posts(), 0u);
  // Beyond max_inline, or a READ, the WQE is fetched as before.
  Pair big({msg(0, 1, 221)}, {"max_inline=220"});
  big.wire.run();
  EXPECT_EQ(big.nics.totals().wqe_fetches, 1u);
  EXPECT_EQ(big.nics.nic(0).inline_posts(), 0u);
}

TEST(NicDevice, ThePipelinesDelayTheDataAndTheAcksByTheirLatencies) {
  // One packet: the send pipeline holds it tx after its payload lands, the receive pipeline
  // rx after its last bit: delivered tx + rx later; its ACK goes through the requester's
  // receive pipeline too: completed tx + 2 rx later.
  Pair base({msg(0, 1, 4096)});
  base.wire.run();
  Pair piped({msg(0, 1, 4096)}, {"tx_pipeline=100ns", "rx_pipeline=150ns"});
  piped.wire.run();
  const auto rows0 = base.nics.fct(), rows1 = piped.nics.fct();  // (by value)
  const auto& r0 = rows0[0];
  const auto& r1 = rows1[0];
  ASSERT_TRUE(r1.received.has_value());
  EXPECT_EQ(r1.received->delivered - r0.received->delivered, Time::ns(250));
  EXPECT_EQ(r1.sent->completion - r0.sent->completion, Time::ns(400));
  EXPECT_TRUE(piped.violations().empty());
}

TEST(NicDevice, EcnMarksSlowTheSenderUnderDcqcn) {
  Pair s({msg(0, 1, 256 * 4096)}, {"cc=dcqcn", "dcqcn.profile=custom", "cnp.interval=4us"});
  s.wire.on_frame = [](Packet& p) {
    if (is_data(p)) {
      EXPECT_EQ(p.ecn, kEcnEct0);  // data is ECN-capable under DCQCN
      p.ecn = kEcnCe;              // a congested switch marks it
    }
    return true;
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.completed, 1u);
  EXPECT_GT(t.cnps_sent, 1u);
  EXPECT_EQ(t.cnps_received, t.cnps_sent);
  std::vector<Nic::QpRate> rates;
  s.nics.nic(0).qp_rates(Time::us(1000), rates);
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_LT(rates[0].rate.as_bps(), BitRate::gbps(400).as_bps());
  // Unmarked, the same message takes less time.
  Pair u({msg(0, 1, 256 * 4096)}, {"cc=dcqcn"});
  u.wire.run();
  EXPECT_LT(u.nics.fct()[0].sent->completion, s.nics.fct()[0].sent->completion);
}

TEST(NicDevice, TheIntegrityCheckCatchesADamagedPayload) {
  Pair s({msg(0, 1, 16 * 4096), msg(0, 1, 4096)});
  int n = 0;
  s.wire.on_frame = [&n](Packet& p) {
    if (is_data(p) && ++n == 3) p.aux ^= 1;  // the wire damages one payload undetected
    return true;
  };
  s.wire.run();
  const std::vector<std::string> v = s.violations();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("message 0"), std::string::npos) << v[0];
  EXPECT_NE(v[0].find("checksum"), std::string::npos) << v[0];
}

TEST(NicDevice, SeveralQpsBetweenAPairAreSeparateConnections) {
  Message a = msg(0, 1, 40000), b = msg(0, 1, 40000);
  b.qp = 1;
  Pair s({a, b}, {"qps_per_pair=2"});
  s.wire.run();
  EXPECT_EQ(s.nics.totals().completed, 2u);
  EXPECT_TRUE(s.violations().empty());
  // Each is the first message of its own connection (its own PSNs and message numbers).
  const auto rows = s.nics.fct();
  ASSERT_TRUE(rows[0].received.has_value());
  ASSERT_TRUE(rows[1].received.has_value());
  EXPECT_EQ(rows[0].received->seq, 0u);
  EXPECT_EQ(rows[1].received->seq, 0u);
  EXPECT_EQ(rows[0].received->qp_index, 0);
  EXPECT_EQ(rows[1].received->qp_index, 1);
}

// The cache hints host windows give (prefetch_arrival, prefetch_host) are hints only: asked for
// every frame, and for frames from a host or QP the NIC does not know, they leave every result
// as it is and make no QP.
TEST(NicDevice, CacheHintsChangeNothingAndMakeNoQp) {
  const std::vector<Message> m = {msg(0, 1, 200000), msg(1, 0, 50000, Time::us(1)),
                                  msg(2, 1, 80000, Time::us(2))};
  const std::vector<std::string> o = {"cc=dcqcn", "qps_per_pair=2"};
  Pair plain(m, o, 3), hinted(m, o, 3);
  hinted.wire.on_frame = [&](Packet& p) {
    NicArray& n = hinted.nics;
    n.prefetch_arrival(p.dst, p);
    Packet q = p;
    for (const int src : {-1, 2, 3, 1 << 20}) {  // (host 2 sends to host 1 only; 3 is none)
      q.src = src;
      n.prefetch_arrival(p.dst, q);
    }
    q = p;
    WireHeader h = WireHeader::read(q);
    h.qp = 1;  // a QP index the pair never uses
    h.write(q);
    n.prefetch_arrival(p.dst, q);
    for (int host = 0; host < 3; ++host) n.prefetch_host(host);
    return true;
  };
  plain.wire.run();
  hinted.wire.run();
  const auto a = plain.nics.fct(), b = hinted.nics.fct();
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].sent->first_out, a[i].sent->first_out);
    EXPECT_EQ(b[i].sent->completion, a[i].sent->completion);
    ASSERT_TRUE(b[i].received.has_value());
    EXPECT_EQ(b[i].received->delivered, a[i].received->delivered);
  }
  EXPECT_EQ(hinted.nics.totals().acks_sent, plain.nics.totals().acks_sent);
  EXPECT_EQ(hinted.wire.frames, plain.wire.frames);
  for (int host = 0; host < 3; ++host) {  // one QP per peer it talked to, no more
    std::vector<Nic::QpRate> ra, rb;
    plain.nics.nic(host).qp_rates(Time::us(1000), ra);
    hinted.nics.nic(host).qp_rates(Time::us(1000), rb);
    EXPECT_EQ(rb.size(), ra.size()) << "host " << host;
  }
  EXPECT_TRUE(hinted.violations().empty());
}

// --- RDMA READ -------------------------------------------------------------------------------

uint8_t opcode(const Packet& p) {
  return WireHeader::read(p).opcode;
}
bool is_read_request(const Packet& p) {
  return opcode(p) == static_cast<uint8_t>(BthOpcode::kReadRequest);
}
bool is_read_response(const Packet& p) {
  return Packetizer::is_read_response(opcode(p));
}

// Drops the n-th frame (1-based) that `match` picks, once; records the READ requests sent.
struct ReadTap {
  std::vector<WireHeader> requests;  // as sent
  std::function<bool(Packet&)> hook(std::function<bool(const Packet&)> match, int n) {
    auto seen = std::make_shared<int>(0);
    return [this, match, n, seen](Packet& p) {
      if (is_read_request(p)) requests.push_back(WireHeader::read(p));
      return !(match(p) && ++*seen == n);
    };
  }
};

TEST(NicDevice, AReadCompletesWithItsBytesAndChecksumAlongsideWrites) {
  // Host 0 reads 64 KiB + 100 B of host 1's memory (17 responses), then writes 5000 B to host 1
  // on the same QP; host 1 writes 40000 B to host 0 on its side of that QP, so its responses
  // share the QP's turns with its own data.
  const uint64_t S = 65536 + 100;
  Pair s({msg(0, 1, S, Time(), Verb::kRead), msg(0, 1, 5000, Time::ns(10)),
          msg(1, 0, 40000, Time::ns(10))});
  std::vector<Packet> from0, from1;
  s.wire.on_frame = [&](Packet& p) {
    (p.src == 0 ? from0 : from1).push_back(p);
    return true;
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.completed, 3u);
  EXPECT_EQ(t.messages_delivered, 3u);
  EXPECT_EQ(t.bytes_delivered, S + 5000 + 40000);
  EXPECT_EQ(t.read_requests, 1u);
  EXPECT_EQ(t.read_responses, 17u);
  EXPECT_EQ(t.read_responses_dropped, 0u);
  EXPECT_EQ(t.retransmitted, 0u);  // no ACK overtook the responses (it would re-request)
  EXPECT_EQ(t.data_packets, 17u + 2 + 10);
  EXPECT_TRUE(s.violations().empty());
  // The request: header only, BTH + RETH (62 + 16 B RoCEv2/IPv4); the responses: FIRST and LAST
  // with an AETH (+4 B), MIDDLE without, carrying PSNs 0..16 (the request took them all).
  ASSERT_FALSE(from0.empty());
  EXPECT_TRUE(is_read_request(from0[0]));
  EXPECT_EQ(from0[0].size.count(), 78u);
  std::vector<Packet> resp;
  for (const Packet& p : from1)
    if (is_read_response(p)) resp.push_back(p);
  ASSERT_EQ(resp.size(), 17u);
  for (size_t i = 0; i < resp.size(); ++i) {
    const WireHeader h = WireHeader::read(resp[i]);
    EXPECT_EQ(h.psn, i);
    const auto op = static_cast<BthOpcode>(h.opcode);
    EXPECT_EQ(op, i == 0    ? BthOpcode::kReadResponseFirst
                  : i == 16 ? BthOpcode::kReadResponseLast
                            : BthOpcode::kReadResponseMiddle);
    EXPECT_EQ(resp[i].size.count(), (i == 16 ? 100u : 4096u) + 62 + (i == 0 || i == 16 ? 4 : 0));
  }
  // The WRITE after the READ on the QP took the PSNs after the READ's.
  bool write_seen = false;
  for (const Packet& p : from0)
    if (is_data(p)) {
      EXPECT_EQ(WireHeader::read(p).psn, 17u + (write_seen ? 1 : 0));
      write_seen = true;
    }
  // Host 1 interleaved its responses with its own data packets on the QP.
  size_t first_data = 0, last_resp = 0;
  for (size_t i = 0; i < from1.size(); ++i) {
    if (is_data(from1[i]) && !first_data) first_data = i;
    if (is_read_response(from1[i])) last_resp = i;
  }
  EXPECT_LT(first_data, last_resp);
  const auto rows = s.nics.fct();
  ASSERT_EQ(rows.size(), 3u);
  const auto& r = rows[0];
  ASSERT_TRUE(r.received.has_value());
  EXPECT_EQ(r.received->bytes, S);
  EXPECT_EQ(r.received->checksum, s.nics.checksum(*r.sent));
  // Request out, then the last byte in host 0's memory, then the CQE.
  EXPECT_LT(r.sent->first_out, r.received->delivered);
  EXPECT_LT(r.received->delivered, r.sent->completion);
  // The WRITE posted after it still pairs with its own record at host 1.
  ASSERT_TRUE(rows[1].received.has_value());
  EXPECT_EQ(rows[1].received->seq, 1u);  // the READ took seq 0 on the QP at host 1 too
  EXPECT_EQ(rows[1].received->checksum, s.nics.checksum(*rows[1].sent));
}

TEST(NicDevice, GoBackNRequestsTheRestOfAReadAfterALostResponseAndPlacesItOnce) {
  // 64 responses; the 10th (PSN 9) is lost. The requester drops the 54 behind the gap and asks
  // again from PSN 9 for the rest (IBA); the responder runs the duplicate request again.
  Pair s({msg(0, 1, 64 * 4096, Time(), Verb::kRead)});
  ReadTap tap;
  s.wire.on_frame = tap.hook(is_read_response, 10);
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.completed, 1u);
  ASSERT_EQ(tap.requests.size(), 2u);
  EXPECT_EQ(tap.requests[1].psn, 9u);
  EXPECT_EQ(tap.requests[1].span, 0);                   // to the READ's end
  EXPECT_EQ(tap.requests[1].aux, tap.requests[0].aux);  // the same RETH
  EXPECT_EQ(t.read_responses, 64u + 55);
  EXPECT_EQ(t.read_responses_dropped, 54u);
  EXPECT_EQ(t.timeouts, 0u);
  EXPECT_TRUE(s.violations().empty());  // each byte placed once: the checksum says so
  const auto rows = s.nics.fct();
  ASSERT_TRUE(rows[0].received.has_value());
  EXPECT_EQ(rows[0].received->bytes, 64u * 4096);
}

TEST(NicDevice, ALostReadRequestAndALostLastResponseRecoverByTheTimer) {
  for (const char* transport : {"go_back_n", "selective_repeat"}) {
    SCOPED_TRACE(transport);
    // The request lost: nothing comes back; the timer sends it again.
    Pair a({msg(0, 1, 8 * 4096, Time(), Verb::kRead)},
           {std::string("transport=") + transport, "rc.timeout=10us"});
    ReadTap ta;
    a.wire.on_frame = ta.hook(is_read_request, 1);
    a.wire.run();
    EXPECT_EQ(a.nics.totals().completed, 1u);
    EXPECT_EQ(a.nics.totals().timeouts, 1u);
    EXPECT_EQ(a.nics.totals().read_responses, 8u);
    ASSERT_EQ(ta.requests.size(), 2u);
    EXPECT_EQ(ta.requests[1].psn, 0u);
    EXPECT_TRUE(a.violations().empty());
    EXPECT_GT(a.nics.fct()[0].sent->completion, Time::us(10));
    // The last response lost: no gap shows; the timer asks for PSN 7 alone.
    Pair b({msg(0, 1, 8 * 4096, Time(), Verb::kRead)},
           {std::string("transport=") + transport, "rc.timeout=10us"});
    ReadTap tb;
    b.wire.on_frame = tb.hook(is_read_response, 8);
    b.wire.run();
    EXPECT_EQ(b.nics.totals().completed, 1u);
    EXPECT_EQ(b.nics.totals().timeouts, 1u);
    EXPECT_EQ(b.nics.totals().read_responses, 9u);
    ASSERT_EQ(tb.requests.size(), 2u);
    EXPECT_EQ(tb.requests[1].psn, 7u);
    EXPECT_TRUE(b.violations().empty());
  }
}

TEST(NicDevice, SelectiveRepeatRequestsOnlyTheLostResponses) {
  // Responses PSN 9 and 10 lost out of 64: one request for the two (span 2), 66 responses in
  // all, the others placed out of order, none dropped, no timeout.
  Pair s({msg(0, 1, 64 * 4096, Time(), Verb::kRead)}, {"transport=selective_repeat"});
  ReadTap tap;
  auto seen = std::make_shared<int>(0);
  s.wire.on_frame = [&tap, seen](Packet& p) {
    if (is_read_request(p)) tap.requests.push_back(WireHeader::read(p));
    if (!is_read_response(p)) return true;
    ++*seen;
    return *seen != 10 && *seen != 11;
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.completed, 1u);
  EXPECT_EQ(t.timeouts, 0u);
  // PSN 11's arrival shows 9 and 10 lost: one request for both.
  ASSERT_EQ(tap.requests.size(), 2u);
  EXPECT_EQ(tap.requests[1].psn, 9u);
  EXPECT_EQ(tap.requests[1].span, 2);
  EXPECT_EQ(t.read_responses, 66u);
  EXPECT_EQ(t.read_responses_dropped, 0u);
  EXPECT_TRUE(s.violations().empty());
  const auto rows = s.nics.fct();
  ASSERT_TRUE(rows[0].received.has_value());
  EXPECT_EQ(rows[0].received->bytes, 64u * 4096);
}

TEST(NicDevice, OutstandingReadsStayWithinTheInitiatorDepth) {
  // Six one-packet READs posted at once on one QP. With max_reads_outstanding 2 a request goes
  // only when fewer than 2 READs are unanswered (a READ is answered when its response is in);
  // with the default 16 all six go back to back.
  auto run = [](const std::vector<std::string>& o) {
    std::vector<Message> m;
    for (int i = 0; i < 6; ++i) m.push_back(msg(0, 1, 4096, Time(), Verb::kRead));
    Pair s(m, o);
    std::vector<Time> req, resp_in;  // requests leaving host 0, responses' last bits at host 0
    s.wire.on_frame = [&](Packet& p) {
      if (is_read_request(p)) req.push_back(p.inject_time);
      if (is_read_response(p))
        resp_in.push_back(p.inject_time +
                          BitRate::gbps(400).serialization(Bytes(p.size.count() + 20)) +
                          Time::ns(500));
      return true;
    };
    s.wire.run();
    EXPECT_EQ(s.nics.totals().completed, 6u);
    EXPECT_TRUE(s.violations().empty());
    size_t most = 0;
    for (const Time t : req) {
      size_t answered = 0, sent = 0;
      for (const Time r : resp_in) answered += r <= t;
      for (const Time r : req) sent += r < t;
      most = std::max(most, sent - answered + 1);  // with this one
    }
    return most;
  };
  EXPECT_EQ(run({"rc.max_reads_outstanding=2"}), 2u);
  EXPECT_EQ(run({}), 6u);
}

TEST(NicDevice, TheIntegrityCheckCoversReads) {
  // A response's payload damaged on the wire: the requester's sum differs.
  Pair s({msg(0, 1, 16 * 4096, Time(), Verb::kRead)});
  int n = 0;
  s.wire.on_frame = [&n](Packet& p) {
    if (is_read_response(p) && ++n == 3) p.aux ^= 1;
    return true;
  };
  s.wire.run();
  std::vector<std::string> v = s.violations();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("message 0"), std::string::npos) << v[0];
  // A requester that miscounts what it places (FABRICSIM_FAULT=nic_payload) is caught too.
  Pair f({msg(0, 1, 16 * 4096, Time(), Verb::kRead)});
  f.nics.inject_payload_fault();
  f.wire.run();
  v = f.violations();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("checksum"), std::string::npos) << v[0];
}

TEST(NicDevice, ReadsAndWritesUnderRandomLossArriveOnceIntact) {
  // Both directions, two QPs, READs between SENDs and WRITEs of every size class, and 3% or 8%
  // of all frames lost (requests, responses, data, ACKs, NAKs): every message completes, every
  // byte is placed exactly once (the checksums), under both recoveries, for 24 loss patterns
  // (they found a READ completed by a later READ's response, a selective-repeat responder off by
  // one PSN after a READ, and a READ request behind a gap at a QP that had never answered one).
  for (uint64_t seed = 1; seed <= 24; ++seed)
    for (const char* transport : {"go_back_n", "selective_repeat"}) {
      SCOPED_TRACE(std::string(transport) + " seed " + std::to_string(seed));
      std::vector<Message> m;
      const Verb verbs[] = {Verb::kRead, Verb::kWrite, Verb::kRead, Verb::kSend, Verb::kWriteImm};
      const uint64_t sizes[] = {1, 4096, 4097, 30000, 200000, 0};
      for (int i = 0; i < 60; ++i) {
        Message x = msg(i % 3 == 2 ? 1 : 0, i % 3 == 2 ? 0 : 1, sizes[i % 6], Time::ns(300 * i),
                        verbs[i % 5]);
        x.qp = (i / 2) % 2;
        m.push_back(x);
      }
      Pair s(m, {std::string("transport=") + transport, "qps_per_pair=2", "rc.timeout=20us",
                 "rc.max_reads_outstanding=3"});
      uint64_t x = seed;
      int lost = 0;
      s.wire.on_frame = [&](Packet&) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const bool drop = (x >> 33) % 100 < (seed % 2 ? 3u : 8u);
        lost += drop;
        return !drop;
      };
      s.wire.run();
      const Nic::Stats t = s.nics.totals();
      EXPECT_GT(lost, 10);
      EXPECT_EQ(t.completed, 60u);
      EXPECT_EQ(t.failed, 0u);
      EXPECT_EQ(t.messages_delivered, 60u);
      EXPECT_TRUE(s.violations().empty()) << s.violations()[0];
      for (const auto& row : s.nics.fct()) {
        ASSERT_TRUE(row.received.has_value()) << row.sent->m.id;
        EXPECT_EQ(row.received->bytes, row.sent->m.bytes);
      }
    }
}

TEST(NicDevice, EntropyIsPerQpForRcPerPacketForRudAndZeroUnlessHashed) {
  std::vector<Message> m;
  for (int q = 0; q < 4; ++q) {
    m.push_back(msg(0, 1, 40000));
    m.back().qp = q;
  }
  for (const char* tr : {"go_back_n", "rud"})
    for (const bool entropy : {false, true}) {
      SCOPED_TRACE(std::string(tr) + (entropy ? " entropy" : ""));
      Pair s(m, {"qps_per_pair=4", std::string("transport=") + tr}, 2, entropy);
      std::map<uint16_t, std::vector<uint8_t>> per_qp;  // data packets' entropy, in order
      s.wire.on_frame = [&per_qp](Packet& p) {
        if (is_data(p)) per_qp[WireHeader::read(p).qp].push_back(packet_entropy(p));
        if (!is_data(p) && p.src == 0) ADD_FAILURE() << "a data sender's control packet";
        return true;
      };
      s.wire.run();
      EXPECT_EQ(s.nics.totals().completed, 4u);
      EXPECT_TRUE(s.violations().empty());
      ASSERT_EQ(per_qp.size(), 4u);
      std::set<uint8_t> firsts;
      for (const auto& [qp, e] : per_qp) {
        ASSERT_EQ(e.size(), 10u);
        firsts.insert(e[0]);
        for (size_t i = 1; i < e.size(); ++i) {
          if (!entropy)
            EXPECT_EQ(e[i], 0);
          else if (std::string(tr) == "rud")
            EXPECT_EQ(e[i], static_cast<uint8_t>(e[i - 1] + 1));  // a new one per packet
          else
            EXPECT_EQ(e[i], e[0]);  // the QP's own
        }
      }
      // The pair's QPs start apart (their RoCE source ports differ).
      EXPECT_EQ(firsts.size(), entropy ? 4u : 1u);
    }
}

TEST(NicDevice, RudResendsATrimmedPacketOnItsNackWithoutTimeout) {
  Pair s({msg(0, 1, 100 * 4096), msg(0, 1, 8192)}, {"transport=rud"});
  // PSN 4 (a middle packet) and PSN 101 (the last of all: nothing behind it to reveal the
  // hole) trimmed on their first transmission.
  std::map<uint32_t, int> sent;
  s.wire.on_frame = [&sent](Packet& p) {
    if (!is_data(p)) return true;
    const uint32_t psn = WireHeader::read(p).psn;
    if ((psn == 4 || psn == 101) && sent[psn]++ == 0) {
      p.size = Bytes(64);
      p.ecn = kTrimmed;
      p.tc = 7;
    }
    return true;
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(t.completed, 2u);
  EXPECT_TRUE(s.violations().empty());
  EXPECT_EQ(t.trimmed_received, 2u);
  EXPECT_EQ(t.naks_sent, 2u);
  EXPECT_EQ(t.nacks_received, 2u);
  EXPECT_EQ(t.retransmitted, 2u);
  EXPECT_EQ(t.timeouts, 0u);
  // The hole at PSN 4 lasts one round trip (1 us + the NACK's and resend's wire times: about
  // 13 packet times at 400G), not a timeout (100 us: the whole message would be out of order).
  EXPECT_GT(t.out_of_order, 8u);
  EXPECT_LT(t.out_of_order, 20u);
  EXPECT_EQ(sent[4], 2);
  EXPECT_EQ(sent[101], 2);
}

// A message's packets are cut as the QP's read-ahead and window allow, not as it is posted:
// a 1 TiB WRITE (2^28 packets) costs its QP no more packets held than max_reads + the window,
// and 50 us of it take what 50 us of any message take. (Posting once summed every packet's
// CRC for the integrity check, 2^28 of them: seconds before the first packet left.)
TEST(NicDevice, AHugeMessageIsCutAsItGoesNotAsItIsPosted) {
  constexpr uint64_t kTiB = uint64_t{1} << 40;
  for (const char* transport : {"go_back_n", "selective_repeat", "rud"}) {
    SCOPED_TRACE(transport);
    Pair s({msg(0, 1, kTiB), msg(1, 0, 8192)},
           {std::string("transport=") + transport, "rc.window=64", "max_reads=16"});
    const auto t0 = std::chrono::steady_clock::now();
    size_t most = 0;
    for (int us = 5; us <= 50; us += 5) {
      s.wire.run(Time::us(us));
      most = std::max(most, s.nics.nic(0).packets_held());
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Nic::Stats t = s.nics.totals();
    EXPECT_EQ(t.bytes_posted, kTiB + 8192);
    EXPECT_EQ(t.completed, 1u);  // the small one, beside it
    EXPECT_EQ(s.nics.nic(0).outstanding(), 1u);
    // 50 us at 400G: ~600 packets of 4 KiB went, far from all.
    EXPECT_GT(t.data_packets, 300u);
    EXPECT_LT(t.data_packets, 1000u);
    EXPECT_GT(most, 16u);
    EXPECT_LE(most, 16u + 64u);
    EXPECT_LT(wall, 1.0);  // (eager, 2^28 CRCs: ~3 s in a release build)
    EXPECT_TRUE(s.violations().empty());
  }
}

}  // namespace
}  // namespace fabricsim::nic
