// The NIC as a device (models/nic/nic.h, nic_array.h), driven without the SystemC kernel: NICs on
// a fake wire (each host's frames serialised at the line rate, delivered a latency later, some
// dropped or altered on purpose), so that what the fabric relies on can be checked directly:
// every message delivered once and intact, losses recovered (go-back-N resends from the lost
// packet on, selective repeat only the lost one), a QP that exhausts its retries fails its
// messages, ECN marks slow the sender down, and the integrity check catches a damaged payload;
// the entropy the NICs write (per QP for RC, per packet for RUD, none unless switches hash it),
// and RUD's NACK and resend of a trimmed packet.
#include <gtest/gtest.h>

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

namespace fabricsim::nic {
namespace {

class ListSource : public MessageSource {
 public:
  explicit ListSource(std::vector<Message> m) : m_(std::move(m)) {}
  bool next(Message& m) override {
    if (i_ >= m_.size()) return false;
    m = m_[i_];
    m.id = i_++;
    return true;
  }
  uint64_t total() const override { return m_.size(); }

 private:
  std::vector<Message> m_;
  size_t i_ = 0;
};

// Hosts joined by ideal wires through a switch that only forwards (after `latency`).
class Wire : public host::HostPorts {
 public:
  Wire(NicArray& nics, BitRate rate, Time latency)
      : nics_(nics), rate_(rate), latency_(latency), free_(static_cast<size_t>(nics.size())) {
    nics.attach(this);
  }
  // Called for every frame sent; returns false to lose it (it may also alter it).
  std::function<bool(Packet&)> on_frame = [](Packet&) { return true; };

  Time tx_free(int h, Time now) const override { return std::max(now, free_[h]); }
  void send(int h, Packet& p, Time now) override {
    const Time ser = rate_.serialization(Bytes(p.size.count() + 20));  // preamble + IFG
    free_[h] = now + ser;
    ++frames;
    if (on_frame(p)) q_.push({now + ser + latency_, seq_++, p});
  }
  // Runs until nothing is left to do (or `limit`); returns the time it stopped.
  Time run(Time limit = Time::us(100000)) {
    Time now;
    Time wake = nics_.run(now);
    for (;;) {
      const Time t = std::min(wake, q_.empty() ? Time::max() : q_.top().t);
      if (t == Time::max() || t > limit) return now;
      now = t;
      while (!q_.empty() && q_.top().t <= now) {
        const Arrival a = q_.top();
        q_.pop();
        nics_.receive(a.p.dst, a.p, now);
      }
      wake = nics_.run(now);
    }
  }
  uint64_t frames = 0;

 private:
  struct Arrival {
    Time t;
    uint64_t seq;
    Packet p;
    bool operator>(const Arrival& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  NicArray& nics_;
  BitRate rate_;
  Time latency_;
  std::vector<Time> free_;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> q_;
  uint64_t seq_ = 0;
};

Message msg(int src, int dst, uint64_t bytes, Time start = Time(), Verb v = Verb::kWrite) {
  Message m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.start = start;
  m.verb = v;
  return m;
}

struct Pair {
  explicit Pair(std::vector<Message> m, std::vector<std::string> o = {}, int hosts = 2,
                bool entropy = false)
      : cfg(test::loaded<NicConfig>(o)),
        nics(cfg, std::vector<BitRate>(static_cast<size_t>(hosts), BitRate::gbps(400)),
             cfg.cc != "none", std::make_unique<ListSource>(std::move(m)), entropy),
        wire(nics, BitRate::gbps(400), Time::ns(500)) {}
  NicConfig cfg;
  NicArray nics;
  Wire wire;
  std::vector<std::string> violations() {
    std::vector<std::string> v;
    nics.check(v);
    return v;
  }
};

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
    ASSERT_NE(row.received, nullptr);
    EXPECT_EQ(row.received->checksum, row.sent->checksum);
    // The sender completes after the receiver has the data, the CQE after the ACK's arrival.
    EXPECT_GT(row.sent->completion, row.sent->first_out);
    EXPECT_GT(row.received->delivered, row.sent->first_out);
  }
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
  s.wire.on_frame = [&psn0](Packet& p) {
    const WireHeader h = WireHeader::read(p);
    return !(is_data(p) && h.psn == 0 && ++psn0 <= 2);
  };
  s.wire.run();
  const Nic::Stats t = s.nics.totals();
  EXPECT_EQ(psn0, 3);
  EXPECT_EQ(t.completed, 1u);
  EXPECT_EQ(t.timeouts, 1u);
  EXPECT_EQ(t.retransmitted, 2u);  // PSN 0 twice: nothing else was lost or dropped
  EXPECT_TRUE(s.violations().empty());
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
  EXPECT_TRUE(s.violations().empty());  // failed is accounted, not a violation
}

TEST(NicDevice, EcnMarksSlowTheSenderUnderDcqcn) {
  Pair s({msg(0, 1, 256 * 4096)}, {"cc=dcqcn", "cnp.interval=4us"});
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
  ASSERT_NE(rows[0].received, nullptr);
  ASSERT_NE(rows[1].received, nullptr);
  EXPECT_EQ(rows[0].received->seq, 0u);
  EXPECT_EQ(rows[1].received->seq, 0u);
  EXPECT_EQ(rows[0].received->qp_index, 0);
  EXPECT_EQ(rows[1].received->qp_index, 1);
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

}  // namespace
}  // namespace fabricsim::nic
