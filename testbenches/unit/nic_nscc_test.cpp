// NSCC's law (models/nic/cc_nscc.cpp) driven without the kernel, against uet-htsim's rules worked
// by hand: on a 100G line with a network RTT of 12 us (uet-htsim's reference, so every scaling
// is 1: fi 5 MSS, eta 0.15 MSS, alpha 4 MSS x 0.75 / 9 us, target 9 us, window 1.5 BDP = 225 KB),
// the start window, fair and proportional increase gathered until the adjustment (8 MTUs or a
// network RTT), eta once per network RTT, fast increase after a window of low-delay ACKs, the
// multiplicative decrease (smoothed delay, once per base RTT, floor 0.5), a mark below the target
// leaving the window alone, quick adapt after a NACK and the marks it then ignores, the base RTT
// and ceiling following a shorter sample, NACK and timeout cuts, the profile's refusals.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/congestion_control.h"

namespace fabricsim::nic {
namespace {

constexpr double kMss = 4096, kBdp = 150000, kTarget = 9e-6, kEta = 0.15 * kMss;
constexpr uint64_t kAck = 16384;  // one coalesced ACK's bytes

std::unique_ptr<CongestionControl> nscc(std::vector<std::string> o = {}) {
  const CcEntry& e = CcRegistry::global().at("nscc");
  auto cfg = e.make_config();
  config::load(*cfg, "", o);
  auto cc = e.make(*cfg, BitRate::gbps(100));
  CcPath p;
  p.base_rtt = Time::us(10);  // not read: uet-htsim takes the network's RTT for every flow
  p.max_base_rtt = Time::us(12);
  p.hops = 1;
  p.mtu = 4096;
  cc->set_path(p);
  return cc;
}
double get(const CongestionControl& cc, const std::string& key) {
  for (const auto& [k, v] : cc.state(Time()))
    if (k == key) return v;
  ADD_FAILURE() << "no state " << key;
  return 0;
}
double cwnd(const CongestionControl& cc) {
  return get(cc, "cwnd_bytes");
}
// An ACK of 16 KB at `t_us` whose packet saw `delay_us` of queueing (RTT 12 us + that).
void ack(CongestionControl& cc, double t_us, double delay_us, bool ece = false,
         uint64_t bytes = kAck) {
  cc.on_echo(Time::ns(static_cast<int64_t>(t_us * 1000)),
             Time::ns(static_cast<int64_t>((12 + delay_us) * 1000)), bytes, ece);
}
std::vector<std::string> custom(std::vector<std::string> more) {
  more.insert(more.begin(), "profile=custom");
  return more;
}

TEST(Nscc, StartsWithAFullWindowOfOneAndAHalfBdpInWholePacketsAtLineRate) {
  auto cc = nscc();
  EXPECT_NEAR(cwnd(*cc), 1.5 * kBdp, 1e-6);
  EXPECT_EQ(cc->window(), 54u * 4096);  // floor(225,000 / 4,096) packets
  EXPECT_EQ(cc->rate(), BitRate::gbps(100));
  EXPECT_NEAR(get(*cc, "target_ns"), 9000, 1e-6);  // 0.75 x 12 us
  EXPECT_NEAR(get(*cc, "base_rtt_ns"), 12000, 1e-6);
  EXPECT_TRUE(CcRegistry::global().at("nscc").ecn_echo);
  EXPECT_EQ(CcRegistry::global().at("nscc").ack_bytes, 16384u);
  EXPECT_FALSE(CcRegistry::global().at("nscc").ack_each_packet);
}

TEST(Nscc, AboveTheTargetUnmarkedAcksGatherAFairIncreaseAppliedEveryEightMtus) {
  auto cc = nscc(custom({"init_window=0.5"}));
  double w = 0.5 * kBdp;
  const double fi = 5 * kMss;  // per byte acknowledged, bytes
  // The first ACK: a network RTT since the start, so it adjusts at once, eta included.
  ack(*cc, 100, 10);
  w += fi * kAck / w + 0.15 * kMss;
  EXPECT_NEAR(cwnd(*cc), w, 1e-6);
  // Three more within a microsecond each: gathered until more than 8 MTUs (32,768 B) came.
  ack(*cc, 101, 10);
  ack(*cc, 102, 10);
  EXPECT_NEAR(cwnd(*cc), w, 1e-6);
  ack(*cc, 103, 10);
  w += 3 * fi * kAck / w;  // no eta: 3 us since the last
  EXPECT_NEAR(cwnd(*cc), w, 1e-6);
  // Unmarked delay above the target pulls the smoothed delay towards base / 4 (3 us).
  EXPECT_NEAR(get(*cc, "avg_delay_ns"), 3000 * (1 - 0.9875 * 0.9875 * 0.9875 * 0.9875), 1e-6);
}

TEST(Nscc, BelowTheTargetTheIncreaseIsProportionalToTheGap) {
  auto cc = nscc(custom({"init_window=0.5"}));
  ack(*cc, 100, 10);  // the first adjustment, eta's clock
  double w = cwnd(*cc);
  const double alpha = 4 * kMss * 1.0 * 0.75 / kTarget;  // bytes per second
  for (int k = 1; k <= 3; ++k) ack(*cc, 100 + k, 4);     // 5 us below the target
  w += 3 * alpha * kAck * (kTarget - 4e-6) / w;
  EXPECT_NEAR(cwnd(*cc), w, 1e-6);
  // The same bytes 1 us below the target add a fifth as much.
  auto near = nscc(custom({"init_window=0.5"}));
  ack(*near, 100, 10);
  const double w0 = cwnd(*near);
  for (int k = 1; k <= 3; ++k) ack(*near, 100 + k, 8);
  EXPECT_NEAR((cwnd(*near) - w0) * w0 / ((w - w0) * w0), 0.2, 1e-9);
}

TEST(Nscc, AWindowOfAcksBelowOneMicrosecondSwitchesToFastIncrease) {
  auto cc = nscc(custom({"init_window=0.1"}));  // 15,000 B
  ack(*cc, 100, 10, false, 0);                  // the first adjustment: eta alone
  const double w = cwnd(*cc);
  EXPECT_NEAR(w, 0.1 * kBdp + kEta, 1e-6);
  // ACKs of one packet 0.5 us above the base: proportional increases gather (no adjustment
  // before 8 MTUs) until more than a window's bytes came in a row below 1 us; the ACK that
  // passes it grows the window by a quarter of its bytes, and so does each one after.
  double t = 101, in_a_row = 0;
  int acks = 0;
  while (in_a_row <= w) {
    ack(*cc, t, 0.5, false, 4096);
    in_a_row += 4096;
    t += 0.001;
    ++acks;
  }
  EXPECT_EQ(acks, 4);
  const double w1 = cwnd(*cc);
  EXPECT_NEAR(w1 - w, 0.25 * 4096, 1e-6);
  ack(*cc, t, 0.5, false, 4096);
  EXPECT_NEAR(cwnd(*cc) - w1, 0.25 * 4096, 1e-6);
  // A delay of 1 us or more ends it: back to gathering proportional increases.
  ack(*cc, t + 0.001, 2, false, 4096);
  EXPECT_NEAR(cwnd(*cc) - w1, 0.25 * 4096, 1e-6);
}

TEST(Nscc, AMarkAboveTheTargetCutsBySmoothedDelayOncePerBaseRttWithAFloorOfHalf) {
  // delay_ewma 1: the smoothed delay is the last sample, to see the cut's size.
  auto cc = nscc(custom({"delay_ewma=1"}));
  const double w0 = cwnd(*cc);
  ack(*cc, 100, 18, true);  // 18 us against 9: x (1 - 0.8 x 9 / 18) = 0.6, then eta
  double w = w0 * 0.6 + kEta;
  EXPECT_NEAR(cwnd(*cc), w, 1e-6);
  ack(*cc, 111, 18, true);  // 11 us later: within the base RTT (12 us), no cut
  EXPECT_NEAR(cwnd(*cc), w, 1e-6);
  // 13 us after the cut, 20 us of delay: x (1 - 0.8 x 11 / 20) = 0.56; eta (13 us since).
  ack(*cc, 113, 20, true);
  w = w * 0.56 + kEta;
  EXPECT_NEAR(cwnd(*cc), w, 1e-6);
  // With gamma 1 the same would be x 0.45: the floor keeps half.
  auto g1 = nscc(custom({"delay_ewma=1", "gamma=1"}));
  ack(*g1, 100, 20, true);
  EXPECT_NEAR(cwnd(*g1), w0 * 0.5 + kEta, 1e-6);
}

TEST(Nscc, AMarkBelowTheTargetLeavesTheWindowAlone) {
  auto marked = nscc(custom({"init_window=0.5"}));
  auto clear = nscc(custom({"init_window=0.5"}));
  ack(*marked, 100, 10);
  ack(*clear, 100, 10);
  const double w = cwnd(*marked);
  for (int k = 1; k <= 4; ++k) {
    ack(*marked, 100 + k, 4, true);  // marked, 5 us below the target
    ack(*clear, 100 + k, 4, false);
  }
  EXPECT_NEAR(cwnd(*marked), w, 1e-6);  // the adjustment came, with nothing gathered
  EXPECT_GT(cwnd(*clear), w + 1000);
  // A mark above the target but with the smoothed delay below it: no cut either.
  ack(*marked, 120, 20, true);
  EXPECT_NEAR(cwnd(*marked), w + kEta, 1e-6);  // eta alone: 20 us since the last
}

TEST(Nscc, ANackAfterAPoorRoundTripQuickAdaptsToWhatWasDeliveredThenIgnoresMarks) {
  auto cc = nscc();
  ack(*cc, 100, 10);  // arms quick adapt: its period ends at 100 + 12 + 9 us
  ack(*cc, 110, 10);  // 16 KB delivered in the period: less than 225,000 / 8
  const double before = cwnd(*cc);
  cc->on_nack(Time::us(122), 4096);
  EXPECT_NEAR(cwnd(*cc), kAck, 1e-6);  // what the period delivered
  // The marks that follow are ignored until the window before the cut has been acknowledged.
  const int n = static_cast<int>(before / kAck);
  for (int k = 0; k < n - 1; ++k) ack(*cc, 123 + 0.1 * k, 20, true);
  EXPECT_NEAR(cwnd(*cc), kAck, 1e-6);
  // Within the next period a NACK only takes its packet off the window.
  auto late = nscc();
  ack(*late, 100, 10);
  const double w = cwnd(*late);
  late->on_nack(Time::us(110), 4096);
  EXPECT_NEAR(cwnd(*late), w - 4096, 1e-6);
  // Without quick adapt the poor period's NACK too.
  auto off = nscc(custom({"quick_adapt=false"}));
  ack(*off, 100, 10);
  ack(*off, 110, 10);
  const double w2 = cwnd(*off);
  off->on_nack(Time::us(122), 4096);
  EXPECT_NEAR(cwnd(*off), w2 - 4096, 1e-6);
}

TEST(Nscc, AShorterRoundTripLowersTheBaseAndTheCeilingTimeoutsTakeAPacket) {
  auto cc = nscc();
  cc->on_echo(Time::us(100), Time::us(8), kAck, false);
  EXPECT_NEAR(get(*cc, "base_rtt_ns"), 8000, 1e-6);
  EXPECT_NEAR(cwnd(*cc), 1.5 * 8e-6 * 12.5e9, 1e-6);  // bounded by the new ceiling, 150 KB
  const double w = cwnd(*cc);
  cc->on_timeout(Time::us(200));
  EXPECT_NEAR(cwnd(*cc), w - kMss, 1e-6);
  for (int k = 0; k < 100; ++k) cc->on_timeout(Time::us(201 + k));
  EXPECT_NEAR(cwnd(*cc), kMss, 1e-6);  // never below one MTU
  EXPECT_EQ(cc->window(), 4096u);
}

TEST(Nscc, WithoutAFabricItKeepsLineRateAndNoWindow) {
  const CcEntry& e = CcRegistry::global().at("nscc");
  auto cfg = e.make_config();
  auto cc = e.make(*cfg, BitRate::gbps(400));
  cc->set_path(CcPath{});
  cc->on_echo(Time::us(1), Time::us(5), kAck, true);
  EXPECT_EQ(cc->window(), 0u);
  EXPECT_EQ(cc->rate(), BitRate::gbps(400));
}

TEST(Nscc, TheUetHtsimProfileRefusesTheKeysItSets) {
  const CcEntry& e = CcRegistry::global().at("nscc");
  for (const std::vector<std::string>& o : {std::vector<std::string>{"gamma=0.5"},
                                            {"profile=uet_htsim", "target=1"},
                                            {"init_window=0.5"}}) {
    auto cfg = e.make_config();
    EXPECT_THROW(config::load(*cfg, "", o), std::exception);
  }
  auto cfg = e.make_config();
  EXPECT_NO_THROW(config::load(*cfg, "", {"profile=custom", "gamma=0.5", "target=1"}));
}

}  // namespace
}  // namespace fabricsim::nic
