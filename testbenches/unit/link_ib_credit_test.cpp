// IB credit flow control: a sender port and a receiver port joined by a Link (IB framing), the
// receiver draining slower than the link (overload). Checks that no packet is ever dropped for
// lack of buffer, that credits are conserved at every event and fully restored at the end, that
// the sender never transmits a packet that would not fit the receiver's free buffer, the credit-
// limited throughput of periodic-only updates against its closed form, and VL arbitration.
#include "models/link/ib_credit.h"

#include <deque>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/common/rng.h"
#include "models/link/link.h"

namespace fabricsim::link {
namespace {

struct Scenario {
  std::vector<std::string> ib;    // IbCreditConfig overrides
  std::vector<std::string> link;  // LinkConfig overrides
  double drain_fraction = 0.5;    // receiver drain rate / link MAC rate
  uint32_t min_bytes = 64, max_bytes = 4160;
  int active_sls = 4;  // traffic on SL 0..n-1
  Time duration = Time::us(200);
  uint64_t seed = 1;
};

// Port A (sender) -> port B (receiver) over link direction 0; B's FC packets return on direction 1.
// A's own FC packets (its FCTBS) travel on direction 0 behind its data.
class Harness {
 public:
  explicit Harness(const Scenario& s)
      : s_(s),
        cfg_(load<IbCreditConfig>(s.ib)),
        lcfg_(load<LinkConfig>(with_ib_framing(s.link))),
        link_(lcfg_, s.seed, "ib"),
        tx_(cfg_, static_cast<uint16_t>(std::min<int64_t>(cfg_.buffer_blocks(), 2048))),
        rx_(cfg_),
        a_timer_(cfg_),
        sl2vl_(cfg_),
        rng_(Rng::derive(s.seed, "traffic")),
        vls_(static_cast<int>(cfg_.data_vls)),
        queue_(vls_),
        heads_(CreditUnitModel::kMaxVls, 0),
        in_flight_(CreditUnitModel::kMaxVls, 0),
        lost_(CreditUnitModel::kMaxVls, 0),
        delivered_(CreditUnitModel::kMaxVls, 0) {
    const double mac = static_cast<double>(lcfg_.phy.wire_format().mac_rate().as_bps());
    drain_ = BitRate::bps(static_cast<uint64_t>(mac * s.drain_fraction));
    for (int sl = 0; sl < s.active_sls; ++sl) new_head(sl2vl_.vl(sl));
  }

  // Runs the event loop until `until` (sources on) and then drains with sources off.
  void run() {
    loop(s_.duration, true);
    loop(s_.duration + Time::us(100) + cfg_.fc_period * 4, false);
  }

  void loop(Time until, bool sources) {
    sources_ = sources;
    while (now_ < until && !::testing::Test::HasFatalFailure()) {
      step();
      Time next = Time::max();
      auto cand = [&](Time t) {
        if (t > now_ && t < next) next = t;
      };
      cand(link_.from(0).next_arrival());
      cand(link_.from(1).next_arrival());
      cand(link_.from(0).free_at());
      cand(link_.from(1).free_at());
      cand(rx_.next_fc_timer());
      cand(a_timer_.next_fc_timer());
      if (serving_ >= 0) cand(server_free_);
      if (next == Time::max()) break;
      now_ = std::min(next, until);
    }
  }

  void step() {
    Delivery d;
    while (link_.from(0).receive(now_, d)) {
      const int vl = d.frame.lane;
      if (d.frame.kind == FrameKind::kData) {
        in_flight_[vl] -= ib_blocks(d.frame.bytes);
        if (d.lost) {
          lost_[vl] += ib_blocks(d.frame.bytes);
          continue;
        }
        ASSERT_TRUE(rx_.on_packet(vl, d.frame.bytes, now_)) << "overflow on VL" << vl;
        queue_[vl].push_back(d.frame.bytes);
      } else if (!d.lost) {
        rx_.on_fc_packet(vl, d.frame.ctrl[0]);
        lost_[vl] = 0;  // every loss before this packet is now counted in ABR
      }
    }
    while (link_.from(1).receive(now_, d)) {
      if (d.lost) continue;
      ASSERT_TRUE(tx_.on_fc_packet(d.frame.lane, d.frame.ctrl[1], now_));
    }
    drain();
    // B returns credits; A sends its FCTBS on its own timer (its receiver side is idle here).
    for (uint32_t due = rx_.fc_due(now_); due; due &= due - 1) {
      const int vl = __builtin_ctz(due);
      if (link_.from(1).send(link_.ib_fc_frame(vl, 0, rx_.fccl(vl)), now_) != Time::max())
        rx_.fc_sent(vl, now_);
    }
    for (uint32_t due = a_timer_.fc_due(now_); due; due &= due - 1) {
      const int vl = __builtin_ctz(due);
      if (link_.from(0).send(link_.ib_fc_frame(vl, tx_.fctbs(vl), 0), now_) != Time::max())
        a_timer_.fc_sent(vl, now_);
    }
    transmit();
    std::vector<std::string> v;
    check_credit_conservation(tx_, rx_, in_flight_.data(), lost_.data(), v);
    ASSERT_TRUE(v.empty()) << "t=" << now_.str() << ": " << v.front();
  }

  void drain() {
    if (serving_ >= 0 && server_free_ <= now_) {
      rx_.release(serving_, queue_[serving_].front(), now_);
      ++delivered_[serving_];
      delivered_bytes_ += queue_[serving_].front();
      queue_[serving_].pop_front();
      serving_ = -1;
    }
    if (serving_ >= 0) return;
    for (int i = 0; i < vls_; ++i) {  // round robin over VLs
      const int vl = (rr_ + i) % vls_;
      if (queue_[vl].empty()) continue;
      serving_ = vl;
      rr_ = vl + 1;
      server_free_ = now_ + drain_.serialization(Bytes(queue_[vl].front()));
      return;
    }
  }

  void transmit() {
    if (link_.from(0).free_at() > now_) return;  // arbitrate at frame boundaries only
    std::vector<uint32_t> heads(CreditUnitModel::kMaxVls, 0);
    if (sources_) heads = heads_;
    const int vl = tx_.select(now_, heads.data());
    if (vl < 0) return;
    const uint32_t bytes = heads[vl];
    const int64_t blocks = ib_blocks(bytes);
    // The property: what this packet needs fits in the receiver's buffer after everything already
    // buffered there and on its way (lost packets never occupy it).
    ASSERT_LE(rx_.used_blocks(vl) + in_flight_[vl] + blocks, rx_.capacity_blocks())
        << "sent without credit on VL" << vl << " at " << now_.str();
    ASSERT_TRUE(tx_.send(vl, bytes, now_));
    LinkFrame f;
    f.bytes = bytes;
    f.lane = static_cast<uint8_t>(vl);
    ASSERT_NE(link_.from(0).send(f, now_), Time::max());
    in_flight_[vl] += blocks;
    ++sent_;
    new_head(vl);
  }

  void new_head(int vl) {
    heads_[vl] = s_.min_bytes + static_cast<uint32_t>(rng_.below(s_.max_bytes - s_.min_bytes + 1));
  }

  template <class C>
  static C load(const std::vector<std::string>& o) {
    C c;
    config::load(c, "", o);
    return c;
  }
  static std::vector<std::string> with_ib_framing(std::vector<std::string> o) {
    o.insert(o.begin(), "phy.framing=infiniband");
    return o;
  }

  Scenario s_;
  IbCreditConfig cfg_;
  LinkConfig lcfg_;
  Link link_;
  IbCreditSender tx_;
  IbCreditReceiver rx_;
  IbCreditReceiver a_timer_;  // port A's receiver: only its FC timer is used
  SlToVl sl2vl_;
  Rng rng_;
  int vls_;
  BitRate drain_;
  std::vector<std::deque<uint32_t>> queue_;
  std::vector<uint32_t> heads_;
  std::vector<int64_t> in_flight_, lost_, delivered_;
  uint64_t delivered_bytes_ = 0, sent_ = 0;
  int serving_ = -1, rr_ = 0;
  Time server_free_, now_;
  bool sources_ = true;
};

void expect_quiescent(const Harness& h) {
  for (int vl = 0; vl < h.vls_; ++vl) {
    EXPECT_EQ(h.rx_.used_blocks(vl), 0) << "VL" << vl;
    EXPECT_EQ(h.in_flight_[vl], 0) << "VL" << vl;
    EXPECT_EQ(h.lost_[vl], 0) << "VL" << vl;
    // Every credit is back at the sender (up to the 2048-block advertisement cap).
    EXPECT_EQ(h.tx_.available(vl), std::min<int64_t>(h.rx_.capacity_blocks(), 2048)) << "VL" << vl;
  }
  EXPECT_EQ(h.rx_.overflow_drops(), 0u);
  EXPECT_EQ(h.tx_.fc_errors(), 0u);
}

TEST(IbCredit, OverloadNeverDropsAndConservesCredits) {
  Scenario s;
  s.ib = {"data_vls=4", "buffer_per_vl=32KB", "sl2vl=[0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3]"};
  s.link = {"length_m=20", "phy.lanes=4"};
  s.active_sls = 8;
  Harness h(s);
  h.run();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  expect_quiescent(h);
  // The receiver was the bottleneck: it stayed busy, and the buffers filled to capacity.
  const double drained_bps = h.delivered_bytes_ * 8.0 / s.duration.as_s();
  EXPECT_GT(drained_bps, 0.9 * static_cast<double>(h.drain_.as_bps()));
  for (int vl = 0; vl < 4; ++vl) {
    EXPECT_GT(h.delivered_[vl], 100) << "VL" << vl;
    EXPECT_GE(h.rx_.peak_blocks(vl), h.rx_.capacity_blocks() - 65) << "VL" << vl;
    EXPECT_GT(h.tx_.stall_time(vl, h.now_), Time::us(10)) << "VL" << vl;
  }
}

TEST(IbCredit, LossyLinkResyncsThroughFctbs) {
  // ~5% of data packets and FC packets are lost to uncorrectable codewords; ABR := FCTBS recovers
  // their credits and nothing overflows.
  Scenario s;
  s.ib = {"data_vls=2", "buffer_per_vl=16KB", "fc_period=1us"};
  s.link = {"phy.pre_fec_ber=1.6e-3", "phy.lanes=4"};
  s.active_sls = 2;
  Harness h(s);
  h.run();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_GT(h.link_.from(0).frames_lost(FrameKind::kData), 20u);
  EXPECT_GT(h.link_.from(1).frames_lost(FrameKind::kIbFlowControl) +
                h.link_.from(0).frames_lost(FrameKind::kIbFlowControl),
            0u);
  expect_quiescent(h);
}

TEST(IbCredit, PropertyNeverSendsWithoutCredit) {
  // Random buffers (including > 2048 blocks, where the advertisement cap applies), FC periods,
  // release thresholds, drain rates, cable lengths, error rates and packet sizes.
  Rng r(12345);
  for (int trial = 0; trial < 25; ++trial) {
    Scenario s;
    s.seed = 100 + trial;
    const int vls = 1 + static_cast<int>(r.below(6));
    const int64_t buf_blocks = 65 + static_cast<int64_t>(r.below(trial % 3 == 0 ? 6000 : 600));
    s.ib = {"data_vls=" + std::to_string(vls),
            "buffer_per_vl=" + std::to_string(buf_blocks * 64) + "B",
            "fc_period=" + std::to_string(200 + r.below(5000)) + "ns",
            "fc_release_blocks=" + std::to_string(r.below(200))};
    s.link = {"length_m=" + std::to_string(r.below(200)),
              "phy.lanes=" + std::to_string(1 << r.below(4)),
              "phy.pre_fec_ber=" + std::string(r.bernoulli(0.3) ? "1.5e-3" : "0")};
    s.drain_fraction = 0.1 + 0.8 * r.uniform();
    s.min_bytes = 1 + static_cast<uint32_t>(r.below(200));
    s.max_bytes = s.min_bytes + static_cast<uint32_t>(r.below(4096));
    s.active_sls = 1 + static_cast<int>(r.below(16));
    s.duration = Time::us(40);
    Harness h(s);
    h.run();
    ASSERT_FALSE(::testing::Test::HasFatalFailure()) << "trial " << trial;
    expect_quiescent(h);
    EXPECT_GT(h.sent_, 10u) << "trial " << trial;
  }
}

TEST(IbCredit, PeriodicUpdatesLimitThroughputToBufferPerPeriod) {
  // Updates only every P, instant drain: each period the sender gets C blocks back, so a VL moves
  // C x 64 B per P (4 packets of 4096 B with C = 256) and stalls for the rest of the period.
  Scenario s;
  s.ib = {"data_vls=1", "buffer_per_vl=16384B", "fc_period=4096ns", "fc_release_blocks=0"};
  s.link = {"phy.lanes=4"};
  s.drain_fraction = 100;  // effectively instant
  s.min_bytes = s.max_bytes = 4096;
  s.active_sls = 1;
  s.duration = Time::us(400);
  Harness h(s);
  h.loop(s.duration, true);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const double expected_bps = 16384.0 * 8 / 4096e-9;  // 32 Gb/s
  EXPECT_NEAR(h.delivered_bytes_ * 8.0 / s.duration.as_s(), expected_bps, 0.02 * expected_bps);
  // Stall fraction: 1 - (burst time / P), burst = 4 packets of 4098 wire bytes at 400G.
  const double burst = 4 * 4098 * 8 / 400e9;
  EXPECT_NEAR(h.tx_.stall_time(0, h.now_).as_s() / s.duration.as_s(), 1 - burst / 4096e-9, 0.03);
}

TEST(VlArbiter, LowTableWeightsShareBandwidth) {
  // VL0 weight 10, VL1 weight 30 (64 B units), 640 B packets: 1 then 3 packets per round.
  VlArbiter a({}, {{0, 10}, {1, 30}}, 255);
  const uint32_t heads[2] = {640, 640};
  int n[2] = {0, 0};
  for (int i = 0; i < 4000; ++i) ++n[a.pick(0x3, heads)];
  EXPECT_EQ(n[0], 1000);
  EXPECT_EQ(n[1], 3000);
  // The last packet may overdraw an entry's weight: 2 blocks left still sends a 10-block packet.
  VlArbiter b({}, {{0, 12}, {1, 12}}, 255);
  std::vector<int> seq;
  for (int i = 0; i < 4; ++i) seq.push_back(b.pick(0x3, heads));
  EXPECT_EQ(seq, (std::vector<int>{0, 0, 1, 1}));
  // A VL with nothing ready is skipped.
  EXPECT_EQ(b.pick(0x2, heads), 1);
  EXPECT_EQ(b.pick(0x0, heads), -1);
}

TEST(VlArbiter, HighPriorityLimit) {
  const uint32_t heads[3] = {1024, 1024, 1024};
  // Limit 1 = 4096 B: four 1 KB high packets, then one low packet while low is waiting.
  VlArbiter a({{2, 255}}, {{0, 255}}, 1);
  std::vector<int> seq;
  for (int i = 0; i < 10; ++i) seq.push_back(a.pick(0x5, heads));
  EXPECT_EQ(seq, (std::vector<int>{2, 2, 2, 2, 0, 2, 2, 2, 2, 0}));
  // Limit 0: one high packet between low ones.
  VlArbiter b({{2, 255}}, {{0, 255}}, 0);
  seq.clear();
  for (int i = 0; i < 4; ++i) seq.push_back(b.pick(0x5, heads));
  EXPECT_EQ(seq, (std::vector<int>{2, 0, 2, 0}));
  // Unlimited: low starves while high is ready.
  VlArbiter c({{2, 255}}, {{0, 255}}, 255);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(c.pick(0x5, heads), 2);
  EXPECT_EQ(c.pick(0x1, heads), 0);
}

TEST(IbCreditConfig, MappingAndValidation) {
  IbCreditConfig c;
  config::load(c, "", {"data_vls=4"});
  SlToVl m(c);
  EXPECT_EQ(m.vl(5), 1);
  EXPECT_EQ(c.buffer_blocks(), 1024);
  auto err = [](std::vector<std::string> o) {
    IbCreditConfig x;
    try {
      config::load(x, "", o);
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(err({"sl2vl=[0,1]"}), HasSubstr("sl2vl"));
  EXPECT_THAT(err({"data_vls=2", "sl2vl=[0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0]"}), HasSubstr("sl2vl"));
  EXPECT_THAT(err({"vl_arbitration.low_vls=[0,1]", "vl_arbitration.low_weights=[4]"}),
              HasSubstr("low_weights"));
  // Credit sizes: IB's are 64 B blocks; UEC CBFC's a power of two of at most a buffer.
  EXPECT_THAT(err({"unit=128B"}), HasSubstr("64 B blocks"));
  EXPECT_THAT(err({"protocol=uec_cbfc", "unit=96B"}), HasSubstr("power of two"));
  EXPECT_THAT(err({"protocol=uec_cbfc", "unit=4096B", "buffer_per_vl=2KiB"}),
              HasSubstr("less than one credit"));
  EXPECT_EQ(err({"protocol=uec_cbfc", "unit=256B"}), "");
}

// UEC CBFC's credits of `unit` bytes: a frame takes ceil(bytes / unit) of them at the sender and
// the receiver, and the receive buffer holds buffer_per_vl / unit.
TEST(IbCreditConfig, CbfcCreditsOfTheConfiguredSize) {
  IbCreditConfig c;
  config::load(c, "",
               {"protocol=uec_cbfc", "unit=256B", "data_vls=1", "buffer_per_vl=4KiB",
                "fc_release_blocks=0"});
  EXPECT_EQ(c.buffer_blocks(), 16);
  EXPECT_EQ(credit_blocks(4160, c.unit_shift()), 17u);
  EXPECT_EQ(credit_blocks(256, c.unit_shift()), 1u);
  IbCreditReceiver rx(c);
  IbCreditSender tx(c, static_cast<uint16_t>(c.buffer_blocks()));
  const uint32_t heads[1] = {1000};  // 4 credits
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(tx.select(Time(), heads), 0) << i;
    ASSERT_TRUE(tx.send(0, 1000, Time()));
    ASSERT_TRUE(rx.on_packet(0, 1000, Time()));
  }
  EXPECT_EQ(tx.available(0), 0);  // 16 credits spent on 4 frames of 1000 B
  EXPECT_EQ(tx.select(Time(), heads), -1);
  EXPECT_EQ(rx.used_blocks(0), 16);
  rx.release(0, 1000, Time());
  ASSERT_TRUE(tx.on_fc_packet(0, rx.fccl(0), Time()));
  EXPECT_EQ(tx.available(0), 4);
  EXPECT_EQ(tx.select(Time(), heads), 0);
}

}  // namespace
}  // namespace fabricsim::link
