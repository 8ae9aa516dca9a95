// Congestion control: the registry, and DCQCN's reaction point (profile custom) against its rules
// worked by hand (models/nic/cc_dcqcn.cpp): the cut on a CNP, alpha's rise and decay, fast
// recovery, additive and hyper increase (its step growing with the lesser stage), a cut during
// recovery restarting the stages, the end of recovery at line rate, the decrease period and the
// rate floor; TIMELY's (cc_timely.cpp) from RTT samples: the cut above t_high, the gradient's cut
// and increase, hyper-active increase, bounds; HPCC's (cc_hpcc.cpp) from INT stacks: U from the
// rate and queue of the most loaded hop, the multiplicative and additive windows, the per-RTT
// reference Wc, the EWMA over T; Swift's (cc_swift.cpp) from RTT samples: the target with hop
// and flow scaling, the increase below it, the decrease above it (once per RTT, at most
// max_mdf), pacing below one packet, timeouts.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/congestion_control.h"

namespace fabricsim::nic {
namespace {

constexpr double kG = 1e9;
const BitRate kLine = BitRate::gbps(400);

std::unique_ptr<CongestionControl> make(const std::string& name, std::vector<std::string> o = {}) {
  const CcEntry& e = CcRegistry::global().at(name);
  auto cfg = e.make_config();
  config::load(*cfg, "", o);
  return e.make(*cfg, kLine);
}
double gbps(const CongestionControl& cc) {
  return static_cast<double>(cc.rate().as_bps()) / kG;
}
double state(const CongestionControl& cc, const std::string& key, Time now) {
  for (const auto& [k, v] : cc.state(now))
    if (k == key) return v;
  ADD_FAILURE() << "no state " << key;
  return 0;
}

TEST(CongestionControl, TheRegistryListsItsAlgorithmsAndRefusesOthers) {
  EXPECT_EQ(CcRegistry::global().names(),
            (std::vector<std::string>{"dcqcn", "hpcc", "none", "nscc", "swift", "timely"}));
  try {
    CcRegistry::global().at("dcqnc");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dcqcn, hpcc, none"), std::string::npos);
  }
  auto none = make("none");
  none->on_cnp(Time::us(1));
  EXPECT_EQ(none->rate(), kLine);
  EXPECT_EQ(none->next_timer(), Time::max());
  EXPECT_THROW(make("dcqcn", {"profile=custom", "g=2"}), std::exception);
}

TEST(Dcqcn, ACnpHalvesTheRateThenFastRecoveryClosesHalfTheGapPerEvent) {
  auto cc = make("dcqcn", {"profile=custom"});
  EXPECT_EQ(gbps(*cc), 400);
  EXPECT_EQ(cc->next_timer(), Time::max());  // no timer before a CNP
  cc->on_cnp(Time::us(10));
  EXPECT_EQ(gbps(*cc), 200);                                 // alpha starts at 1: Rc (1 - 1/2)
  EXPECT_DOUBLE_EQ(state(*cc, "alpha", Time::us(10)), 1.0);  // (1 - g) 1 + g
  EXPECT_EQ(cc->next_timer(), Time::us(60));
  // Timer events at 60, 110, ... us: Rc <- (Rt + Rc) / 2 with Rt = 400 (the 5th is additive
  // increase, but Rt is capped at line rate, so the same step).
  const double want[] = {300, 350, 375, 387.5, 393.75, 396.875};
  for (int k = 0; k < 6; ++k) {
    cc->on_timer(cc->next_timer());
    EXPECT_DOUBLE_EQ(gbps(*cc), want[k]) << k;
  }
  EXPECT_EQ(cc->next_timer(), Time::us(10 + 7 * 50));
}

// Two CNPs 5 us apart bring Rt below line rate, so additive increase shows.
TEST(Dcqcn, AfterFastRecoveryTheTargetRateGrowsByTheAdditiveStep) {
  auto cc = make("dcqcn", {"profile=custom"});
  cc->on_cnp(Time());
  cc->on_cnp(Time::us(5));  // Rt = 200, Rc = 100 (alpha still 1)
  EXPECT_EQ(gbps(*cc), 100);
  double rt = 200, rc = 100;
  for (int t = 1; t <= 7; ++t) {
    cc->on_timer(cc->next_timer());
    if (t >= 5) rt += 0.005;  // ai = 5 Mb/s from stage F = 5 on
    rc = (rt + rc) / 2;
    EXPECT_NEAR(gbps(*cc), rc, 1e-9) << t;
    EXPECT_NEAR(state(*cc, "target_rate_bps", Time()) / kG, rt, 1e-9) << t;
  }
}

TEST(Dcqcn, HyperIncreaseOnceBothTimerAndByteCounterArePastF) {
  auto cc = make("dcqcn", {"profile=custom", "byte_counter=1000B", "rate_period=1000us"});
  cc->on_cnp(Time());
  cc->on_cnp(Time::us(5));  // Rt = 200, Rc = 100
  double rt = 200, rc = 100;
  // Byte counter stages 1-5 (timer stage 0): four fast-recovery steps, then additive.
  for (int bc = 1; bc <= 5; ++bc) {
    cc->on_send(Time::us(6), 1000);
    if (bc >= 5) rt += 0.005;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(gbps(*cc), rc, 1e-9) << bc;
  }
  // Timer stages 1-6 (byte counter at 5): additive until the timer reaches F too, then hyper
  // with i = min(T, BC) - F + 1 = 1 (hai = 50 Mb/s).
  for (int t = 1; t <= 6; ++t) {
    cc->on_timer(cc->next_timer());
    rt += t >= 5 ? 0.05 : 0.005;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(gbps(*cc), rc, 1e-9) << t;
  }
}

// Both stages past F: the hyper step is i x hai with i = min(T, BC) - F + 1, so it grows only
// when the lesser of the two stages does (timer and byte counter interleaved).
TEST(Dcqcn, TheHyperStepGrowsWithTheLesserOfTheTwoStages) {
  auto cc = make("dcqcn", {"profile=custom", "byte_counter=1000B"});
  cc->on_cnp(Time());
  cc->on_cnp(Time::us(5));  // Rt = 200, Rc = 100, T = BC = 0
  double rt = 200, rc = 100;
  // (event, the target rate's step in Gb/s) with F = 5, ai = 5 Mb/s, hai = 50 Mb/s.
  const struct {
    char event;  // 'B': byte counter stage, 'T': timer stage
    double step;
  } want[] = {
      {'B', 0},     {'B', 0},     {'B', 0},     {'B', 0},      // BC 1-4: fast recovery
      {'B', 0.005},                                            // BC 5: additive
      {'T', 0.005}, {'T', 0.005}, {'T', 0.005}, {'T', 0.005},  // T 1-4, BC 5: additive
      {'T', 0.05},                                             // T 5, BC 5: hyper, i = 1
      {'B', 0.05},                                             // T 5, BC 6: i = 1
      {'T', 0.10},                                             // T 6, BC 6: i = 2
      {'B', 0.10},                                             // T 6, BC 7: i = 2
      {'T', 0.15},  {'T', 0.15},                               // T 7, 8, BC 7: i = 3
      {'B', 0.20},                                             // T 8, BC 8: i = 4
  };
  int k = 0;
  for (const auto& w : want) {
    if (w.event == 'B')
      cc->on_send(Time::us(6), 1000);
    else
      cc->on_timer(cc->next_timer());
    rt += w.step;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(state(*cc, "target_rate_bps", Time()) / kG, rt, 1e-9) << k;
    EXPECT_NEAR(gbps(*cc), rc, 1e-9) << k;
    ++k;
  }
}

// A CNP in the middle of a recovery: Rt takes the current rate, the cut uses alpha as decayed
// so far, and both stages start again (fast recovery, not additive increase, comes next).
TEST(Dcqcn, ACnpDuringRecoveryCutsTheCurrentRateAndRestartsTheStages) {
  auto cc = make("dcqcn", {"profile=custom"});
  cc->on_cnp(Time());                                           // Rc 200, Rt 400, alpha 1
  for (int t = 1; t <= 6; ++t) cc->on_timer(cc->next_timer());  // at 50 .. 300 us
  const double rc6 = 396.875;                                   // (fast recovery, capped Rt)
  ASSERT_DOUBLE_EQ(gbps(*cc), rc6);
  const double g = 1.0 / 256, a = std::pow(1 - g, 5);  // decays at 55, 110, ..., 275 us
  cc->on_cnp(Time::us(320));
  double rt = rc6, rc = rc6 * (1 - a / 2);
  EXPECT_NEAR(gbps(*cc), rc, 1e-6);
  EXPECT_NEAR(state(*cc, "target_rate_bps", Time::us(320)) / kG, rt, 1e-9);
  EXPECT_NEAR(state(*cc, "alpha", Time::us(320)), (1 - g) * a + g, 1e-12);
  EXPECT_EQ(cc->next_timer(), Time::us(370));  // the timer restarts from the cut
  for (int t = 1; t <= 5; ++t) {
    cc->on_timer(cc->next_timer());
    if (t == 5) rt += 0.005;  // stage 5 again, not stage 11
    rc = (rt + rc) / 2;
    EXPECT_NEAR(gbps(*cc), rc, 1e-6) << t;
    EXPECT_NEAR(state(*cc, "target_rate_bps", Time()) / kG, rt, 1e-9) << t;
  }
}

// Recovery ends at line rate, never above it; then no timer runs and sending changes nothing.
TEST(Dcqcn, RecoveryStopsAtLineRate) {
  auto cc = make("dcqcn", {"profile=custom"});
  cc->on_cnp(Time());
  int events = 0;
  while (cc->next_timer() != Time::max() && events < 200) {
    cc->on_timer(cc->next_timer());
    ++events;
    ASSERT_LE(cc->rate().as_bps(), kLine.as_bps()) << events;
  }
  EXPECT_LT(events, 200);
  EXPECT_EQ(cc->rate(), kLine);
  cc->on_send(Time::us(20000), 100000000);
  EXPECT_EQ(cc->rate(), kLine);
  EXPECT_EQ(cc->next_timer(), Time::max());
}

TEST(Dcqcn, AlphaDecaysWithoutCnpsAndSetsTheNextCut) {
  auto cc = make("dcqcn", {"profile=custom", "rate_period=100000us"});  // no increase in between
  cc->on_cnp(Time());
  const double g = 1.0 / 256;
  const Time later = Time::us(10 * 55) + Time::ns(1);
  const double a10 = std::pow(1 - g, 10);
  EXPECT_NEAR(state(*cc, "alpha", later), a10, 1e-12);
  cc->on_cnp(later);
  EXPECT_NEAR(gbps(*cc), 200 * (1 - a10 / 2), 1e-6);
  EXPECT_NEAR(state(*cc, "alpha", later), (1 - g) * a10 + g, 1e-12);
}

TEST(Dcqcn, OneDecreasePerPeriodAndNeverBelowTheFloor) {
  auto cc = make("dcqcn", {"profile=custom"});
  cc->on_cnp(Time());
  cc->on_cnp(Time::us(1));  // within decrease_period (4 us): ignored
  EXPECT_EQ(gbps(*cc), 200);
  for (int k = 1; k <= 20; ++k) cc->on_cnp(Time::us(5 * k));
  // Halving (alpha stays ~1) from 200 Gb/s: 200 / 2^20 is below the 100 Mb/s floor.
  EXPECT_EQ(cc->rate(), BitRate::bps(100000000));
}

// TIMELY (cc_timely.cpp), Algorithm 1 of the paper worked by hand. The rate starts at line rate.
// The HPCC profiles against rdma-hw.cc's rules run eagerly, as its event loop runs them: three
// periodic timers from the first CNP (alpha; the decrease check 1 ns after it; the rate timer,
// restarted by a cut), events at one instant in the order they were scheduled. The model brings
// alpha up to date lazily and stops the rate timer at line rate; its rates must be the same.
struct EagerHpccDcqcn {
  Time alpha_p, dec_p, rate_p;
  int64_t f = 1;
  double line, ai, hai, g = 1.0 / 256, min_rate = 1e9;
  double rate = line, target = line, alpha = 1;
  bool first = true, alpha_cnp = false, dec_cnp = false;
  int64_t stage = 0;
  Time alpha_t = Time::max(), dec_t = Time::max(), rate_t = Time::max();
  uint64_t rate_seq = 0, dec_seq = 0, seq = 0;  // scheduling order, for ties

  void cnp(Time t) {
    run(t);
    alpha_cnp = dec_cnp = true;
    if (!first) return;
    first = false;
    alpha = 1;
    alpha_cnp = false;
    alpha_t = t + alpha_p;
    dec_t = t + dec_p + Time::ns(1);
    dec_seq = ++seq;
  }
  // Every timer event at or before t (a CNP at t comes after them).
  void run(Time t) {
    for (;;) {
      const Time next = std::min({alpha_t, dec_t, rate_t});
      if (next == Time::max() || next > t) return;
      if (alpha_t == next) {
        alpha = (1 - g) * alpha + (alpha_cnp ? g : 0);
        alpha_cnp = false;
        alpha_t += alpha_p;
      } else if (rate_t == next && (dec_t != next || rate_seq < dec_seq)) {
        rate_t += rate_p;
        rate_seq = ++seq;
        if (stage >= f) target = std::min(line, target + (stage == f ? ai : hai));
        rate = rate / 2 + target / 2;
        ++stage;
      } else {
        dec_t += dec_p;
        dec_seq = ++seq;
        if (!dec_cnp) continue;
        if (stage != 0) target = rate;
        rate = std::max(min_rate, rate * (1 - alpha / 2));
        stage = 0;
        dec_cnp = false;
        rate_t = next + rate_p;
        rate_seq = ++seq;
      }
    }
  }
};

TEST(Dcqcn, TheHpccProfilesFollowRdmaHwRulesExactly) {
  for (const char* profile : {"hpcc", "hpcc_dcqcn_paper"}) {
    SCOPED_TRACE(profile);
    const bool paper = std::string(profile) == "hpcc_dcqcn_paper";
    auto cc = make("dcqcn", {std::string("profile=") + profile});
    // 400G: AI 5 and HAI 50 Mb/s per 25G.
    EagerHpccDcqcn ref{paper ? Time::us(50) : Time::us(1),
                       paper ? Time::us(50) : Time::us(4),
                       paper ? Time::us(55) : Time::us(300),
                       1,
                       400e9,
                       80e6,
                       800e6};
    // CNPs in bursts (a congested spell: one every 0.5-3 us for 20-200 us), then quiet spells
    // of 50 us to 3 ms, over 40 ms; the rate compared after every event and on a 1 us grid.
    uint64_t x = 12345;
    auto rnd = [&x](int64_t lo, int64_t hi) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return lo + static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(hi - lo + 1));
    };
    Time t = Time::us(10), probe;
    int checked = 0;
    auto settle = [&](Time until) {
      for (; probe <= until; probe += Time::us(1)) {
        while (cc->next_timer() <= probe) cc->on_timer(cc->next_timer());
        ref.run(probe);
        ASSERT_DOUBLE_EQ(static_cast<double>(cc->rate().as_bps()), std::llround(ref.rate))
            << "at " << probe.str();
        ++checked;
      }
    };
    while (t < Time::us(40000)) {
      const Time burst_end = t + Time::us(rnd(20, 200));
      for (; t < burst_end; t += Time::ns(rnd(500, 3000))) {
        settle(t - Time::fs(1));
        while (cc->next_timer() < t) cc->on_timer(cc->next_timer());
        if (cc->next_timer() == t) cc->on_timer(t);
        cc->on_cnp(t);
        ref.cnp(t);
      }
      t += Time::us(rnd(50, 3000));
    }
    settle(t);
    EXPECT_GT(checked, 30000);
    EXPECT_LT(ref.rate, 400e9);  // it did move: cut and recovering at the end or in between
  }
}

TEST(Dcqcn, ANamedProfileRefusesTheKeysItSets) {
  EXPECT_THROW(make("dcqcn", {"ai=1Gbps"}), std::exception);
  EXPECT_THROW(make("dcqcn", {"profile=hpcc_dcqcn_paper", "g=0.5"}), std::exception);
  EXPECT_NO_THROW(make("dcqcn", {"profile=custom", "ai=1Gbps"}));
}

// Profile custom updates at most once every min_rtt: the samples below come that far apart.
TEST(Timely, TheFirstSampleOnlyRecordsAndAnRttAboveTHighCutsInProportion) {
  auto cc = make("timely", {"profile=custom"});
  cc->on_ack(Time(), Time::us(100));
  EXPECT_DOUBLE_EQ(gbps(*cc), 400);
  cc->on_ack(Time::us(20), Time::us(1000));  // > t_high 500 us: R (1 - 0.8 (1 - 500/1000))
  EXPECT_NEAR(gbps(*cc), 240, 1e-9);
  cc->on_ack(Time::us(40), Time::us(30));  // < t_low 50 us: + delta (10 Mb/s)
  EXPECT_NEAR(gbps(*cc), 240.01, 1e-9);
}

TEST(Timely, APositiveGradientCutsByBetaTimesItAndANegativeOneAddsDelta) {
  auto cc = make("timely", {"profile=custom", "min_rtt=1000us"});
  Time now;
  const auto ack = [&](double rtt_us) {
    cc->on_ack(now, Time::us(rtt_us));
    now += Time::us(1000);
  };
  ack(100);
  // rtt_diff = 0.875 x 20 us = 17.5 us; gradient 17.5 / 1000 = 0.0175: R (1 - 0.8 x 0.0175).
  ack(120);
  const double r = 400 * (1 - 0.8 * 0.0175);
  EXPECT_NEAR(gbps(*cc), r, 1e-9);
  // rtt_diff = 0.125 x 17.5 + 0.875 x (-10) = -6.5625 us <= 0: + delta.
  ack(110);
  EXPECT_NEAR(gbps(*cc), r + 0.01, 1e-9);
  EXPECT_NEAR(state(*cc, "gradient", Time()), -6.5625 / 1000, 1e-12);
  // The same RTT again: the gradient stays <= 0; the 5th such event in a row adds 5 delta.
  for (int i = 2; i <= 4; ++i) ack(110);
  EXPECT_NEAR(gbps(*cc), r + 0.04, 1e-9);
  ack(110);
  EXPECT_NEAR(gbps(*cc), r + 0.04 + 0.05, 1e-9);
  // A rise resets the count: the next calm event adds one delta again.
  ack(130);
  const double after_cut = gbps(*cc);
  EXPECT_LT(after_cut, r + 0.09);
  ack(100);
  EXPECT_NEAR(gbps(*cc), after_cut + 0.01, 1e-9);
}

TEST(Timely, TheCustomProfileUpdatesAtMostOnceEveryMinRtt) {
  // At 400G a 64 KB completion comes every 1.3 us: a cut on each, all reading the same queue,
  // compounded (the 2 flows at 27 Gb/s). The samples within min_rtt (20 us) of the last
  // update change nothing, not even the gradient's history.
  auto cc = make("timely", {"profile=custom"});
  cc->on_ack(Time(), Time::us(60));
  cc->on_ack(Time::us(1), Time::us(80));  // 1 us after: ignored
  EXPECT_DOUBLE_EQ(gbps(*cc), 400);
  EXPECT_NEAR(state(*cc, "rtt_ns", Time()), 60e3, 1e-6);
  cc->on_ack(Time::us(19), Time::us(300));  // still within 20 us: ignored
  EXPECT_DOUBLE_EQ(gbps(*cc), 400);
  // 20 us on: one cut against the sample of the last update, 60 us: gradient 0.875 x 10 / 20.
  cc->on_ack(Time::us(20), Time::us(70));
  const double r = 400 * (1 - 0.8 * 0.875 * 10 / 20);
  EXPECT_NEAR(gbps(*cc), r, 1e-9);
  for (int k = 1; k <= 10; ++k) cc->on_ack(Time::us(20) + Time::ns(1300 * k), Time::us(80));
  EXPECT_NEAR(gbps(*cc), r, 1e-9);  // ten more completions within min_rtt: no further cut
}

TEST(Timely, TheProfilesAskForAnAckAsTheirSourcesDo) {
  // Profile hpcc: the HPCC scripts ACK every packet (L2_ACK_INTERVAL 1), so its once-a-round-trip
  // update reads the first packet sent after the last one; custom: rc.ack_every's completions.
  const CcEntry& e = CcRegistry::global().at("timely");
  ASSERT_TRUE(e.ack_each_packet);
  auto hpcc = e.make_config();
  config::load(*hpcc, "", {});
  EXPECT_TRUE(e.ack_each_packet(*hpcc));
  auto custom = e.make_config();
  config::load(*custom, "", {"profile=custom"});
  EXPECT_FALSE(e.ack_each_packet(*custom));
}

TEST(Timely, TheRateStaysBetweenTheFloorAndLineRate) {
  auto cc = make("timely", {"profile=custom"});
  cc->on_ack(Time(), Time::us(10));
  cc->on_ack(Time::us(20), Time::us(10));  // below t_low, at line rate already: stays there
  EXPECT_DOUBLE_EQ(gbps(*cc), 400);
  cc->on_ack(Time::us(40), Time::us(400));  // gradient 0.875 x 390 / 20 = 17: a cut below zero
  EXPECT_EQ(cc->rate(), BitRate::bps(100000000));
  EXPECT_THROW(make("timely", {"profile=custom", "t_low=600us"}),
               std::exception);  // t_low must be < t_high
}

TEST(Timely, TheHpccProfileUpdatesOncePerRoundTripWithItsScaledSteps) {
  auto cc = make("timely");  // profile hpcc at 400G: rai 400 Mb/s, rhai 2 Gb/s, floor 1 Gb/s
  // The first ACK only records; an ACK of a packet sent before the last update changes nothing.
  cc->on_ack(Time::us(30), Time::us(20));
  EXPECT_DOUBLE_EQ(gbps(*cc), 400);
  cc->on_ack(Time::us(35), Time::us(20));  // sent at 15 us, before the update at 30 us
  EXPECT_DOUBLE_EQ(gbps(*cc), 400);
  // An RTT above t_high: cut by beta (1 - t_high / rtt) = 0.8 x 0.5.
  cc->on_ack(Time::us(1040), Time::us(1000));
  EXPECT_NEAR(gbps(*cc), 400 * (1 - 0.8 * 0.5), 1e-9);
  // Then RTTs below t_low: +0.4 Gb/s five times, +2 Gb/s from the sixth.
  double want = 240;
  for (int i = 0; i < 7; ++i) {
    cc->on_ack(Time::us(2000 + 100 * i), Time::us(20));
    want += i < 5 ? 0.4 : 2.0;
    EXPECT_NEAR(gbps(*cc), want, 1e-9) << i;
  }
  // A steep gradient cuts to the 1 Gb/s floor, never below.
  cc->on_ack(Time::us(3500), Time::us(490));
  EXPECT_DOUBLE_EQ(gbps(*cc), 1);
}

TEST(Timely, TheHpccProfileRefusesTheKeysItSets) {
  EXPECT_THROW(make("timely", {"delta=1Gbps"}), std::exception);
  EXPECT_NO_THROW(make("timely", {"profile=custom", "delta=1Gbps"}));
}

// HPCC: T = 2 us at 400G, so B T = 100,000 B. A hop's stack: time (us), bytes sent, queue.
constexpr double kBt = 50e9 * 2e-6;
IntStack hop_at(double us, uint64_t tx, uint32_t qlen, uint32_t rate_mbps = 400000) {
  IntStack s;
  s.hops = 1;
  s.hop[0] = {static_cast<uint64_t>(us * 1e6), tx, qlen, rate_mbps};
  return s;
}
std::unique_ptr<CongestionControl> hpcc(std::vector<std::string> o = {}) {
  auto cc = make("hpcc", std::move(o));
  CcPath p;
  p.max_base_rtt = Time::us(2);
  p.mtu = 4096;
  cc->set_path(p);
  return cc;
}

TEST(Hpcc, StartsAtLineRateWithABandwidthDelayWindowAndTheFirstStackOnlyRecords) {
  auto cc = hpcc();
  EXPECT_EQ(gbps(*cc), 400);
  EXPECT_EQ(cc->window(), static_cast<uint64_t>(kBt));
  cc->on_telemetry(Time::us(10), Time::us(2), hop_at(9, 0, 50000));
  EXPECT_EQ(cc->window(), static_cast<uint64_t>(kBt));
  // Without a path (a NIC alone): no T, line rate and no window, telemetry ignored.
  auto alone = make("hpcc");
  alone->on_telemetry(Time::us(10), Time::us(2), hop_at(9, 0, 50000));
  EXPECT_EQ(gbps(*alone), 400);
  EXPECT_EQ(alone->window(), 0u);
}

TEST(Hpcc, AnOverloadedHopCutsTheWindowByEtaOverU) {
  // Profile custom with the additive step at 0 bytes... the smallest: 1 B.
  auto cc = hpcc({"profile=custom", "ai_bytes=1B"});
  cc->on_telemetry(Time::us(10), Time::us(2), hop_at(8, 0, 40000));
  // 2 us later (tau = T: the EWMA takes u whole): the hop sent 100,000 B in 2 us (B, u = 1) and
  // kept min(40,000, 60,000) queued (0.4): U = 1.4. A new round trip (sent at 10 us, after the
  // reference): W = W_c eta / U + 1 and W_c follows.
  cc->on_telemetry(Time::us(12), Time::us(2), hop_at(10, 100000, 60000));
  const double w = kBt * 0.95 / 1.4 + 1;
  EXPECT_NEAR(static_cast<double>(cc->window()), w, 1.0);
  EXPECT_NEAR(state(*cc, "u", Time::us(12)), 1.4, 1e-9);
  EXPECT_NEAR(gbps(*cc), w / 2e-6 * 8 / kG, 1e-3);  // paced at W / T
  // ACKs within the same round trip (their packets left before the update at 12 us) react
  // from that reference W_c, without moving it: with U still 1.4, W_c eta / U + 1 each time.
  const double w2 = w * 0.95 / 1.4 + 1;
  cc->on_telemetry(Time::us(13), Time::us(2), hop_at(12, 200000, 40000));
  EXPECT_NEAR(static_cast<double>(cc->window()), w2, 1.0);
  cc->on_telemetry(Time::us(13.5), Time::us(2), hop_at(14, 300000, 40000));
  EXPECT_NEAR(static_cast<double>(cc->window()), w2, 1.0);
}

TEST(Hpcc, TheMostLoadedHopSetsUAndItsIntervalWeighsIt) {
  auto cc = hpcc({"profile=custom", "ai_bytes=1B", "eta=0.5"});
  IntStack a, b;
  a.hops = b.hops = 2;
  a.hop[0] = {8000000, 0, 0, 400000};  // hop 0: idle
  a.hop[1] = {8000000, 0, 0, 200000};  // hop 1: a 200G port
  cc->on_telemetry(Time::us(10), Time::us(2), a);
  b.hop[0] = {9000000, 10000, 0, 400000};  // 10 KB in 1 us at 400G: u 0.2
  b.hop[1] = {9500000, 18750, 0, 200000};  // 18,750 B in 1.5 us at 200G: u 0.5, tau 1.5 us
  cc->on_telemetry(Time::us(12), Time::us(1), b);
  // U = (1 - 1.5/2) 0 + (1.5/2) 0.5 = 0.375 < eta 0.5, stage 0 < max_stage 0? No: max_stage 0
  // makes every step multiplicative: W = W_c / (0.375 / 0.5) + 1, above B T: held at B T.
  EXPECT_NEAR(state(*cc, "u", Time::us(12)), 0.375, 1e-9);
  EXPECT_EQ(cc->window(), static_cast<uint64_t>(kBt));
}

TEST(Hpcc, BelowEtaTheWindowGrowsAdditivelyForMaxStageRoundTrips) {
  auto cc = hpcc({"profile=custom", "ai_bytes=1000B", "max_stage=2"});
  // A stack every T (tau = T: U is the newest u), each ACK a new round trip.
  cc->on_telemetry(Time::us(10), Time::us(2), hop_at(8, 0, 0));
  // The hop at its full rate (u = 1): W = B T eta / 1 + 1,000.
  cc->on_telemetry(Time::us(12), Time::us(2), hop_at(10, 100000, 90000));
  EXPECT_NEAR(static_cast<double>(cc->window()), 96000, 1.0);
  // Idle (u = 0; the 90 KB queue of before counts min(90,000, 0)): stages 0 and 1 add W_AI...
  cc->on_telemetry(Time::us(14), Time::us(2), hop_at(12, 100000, 0));
  EXPECT_NEAR(static_cast<double>(cc->window()), 97000, 1.0);
  cc->on_telemetry(Time::us(16), Time::us(2), hop_at(14, 100000, 0));
  EXPECT_NEAR(static_cast<double>(cc->window()), 98000, 1.0);
  // ... and at max_stage the step is multiplicative (W_c / (0 / eta): held at B T).
  cc->on_telemetry(Time::us(18), Time::us(2), hop_at(16, 100000, 0));
  EXPECT_EQ(cc->window(), static_cast<uint64_t>(kBt));
}

TEST(Hpcc, TheNamedProfilesSetTheirParametersAndRefuseOthers) {
  EXPECT_THROW(make("hpcc", {"eta=0.9"}), std::exception);
  EXPECT_THROW(make("hpcc", {"profile=htsim", "max_stage=3"}), std::exception);
  // An overload of U = 1.9 = 2 eta: W = B T / 2 + W_AI, W_AI being 10 Mb/s per 25G x T
  // (160 Mb/s x 2 us = 40 B) for profile hpcc, a packet (4,096 B) for profile htsim.
  auto scripts = hpcc();
  auto htsim = hpcc({"profile=htsim"});
  for (auto* cc : {scripts.get(), htsim.get()}) {
    cc->on_telemetry(Time::us(10), Time::us(2), hop_at(8, 0, 90000));
    cc->on_telemetry(Time::us(12), Time::us(2), hop_at(10, 100000, 90000));
  }
  EXPECT_NEAR(static_cast<double>(scripts->window()), 50040, 1.0);
  EXPECT_NEAR(static_cast<double>(htsim->window()), 54096, 1.0);
  // Profile hpcc's floor: 1 Gb/s, a window of 1 Gb/s x T = 250 B; profile htsim has none but
  // W_AI.
  for (auto* cc : {scripts.get(), htsim.get()})
    for (int k = 0; k < 40; ++k)
      cc->on_telemetry(Time::us(14 + 2 * k), Time::us(2),
                       hop_at(12 + 2 * k, 100000 * (k + 2), 10000000));
  EXPECT_EQ(scripts->window(), 250u);
  EXPECT_NEAR(gbps(*scripts), 1.0, 1e-6);
  EXPECT_GE(htsim->window(), 4096u);  // never below its W_AI
  EXPECT_LT(htsim->window(), 4200u);
}

// Swift: a path of 3 switches, base RTT 2 us, 4 KiB packets.
std::unique_ptr<CongestionControl> swift(std::vector<std::string> o = {}) {
  auto cc = make("swift", std::move(o));
  CcPath p;
  p.base_rtt = Time::us(2);
  p.max_base_rtt = Time::us(3);
  p.hops = 3;
  p.mtu = 4096;
  cc->set_path(p);
  return cc;
}
// The flow-scaling term by hand (htsim's values: 100 us over 0.1-100 packets), microseconds.
double fs_us(double cwnd) {
  const double alpha = 100 / (1 / std::sqrt(0.1) - 1 / std::sqrt(100.0));
  return std::clamp(alpha / std::sqrt(cwnd) - alpha / 10, 0.0, 100.0);
}
// A custom Swift whose target is 20 us flat (no base RTT, hop or flow scaling).
const std::vector<std::string> kFlat = {"profile=custom", "target_from=zero", "hop_scale=0ns",
                                        "fs_range=0ns"};
std::vector<std::string> flat(std::vector<std::string> more) {
  more.insert(more.begin(), kFlat.begin(), kFlat.end());
  return more;
}

TEST(Swift, TheTargetAddsHopAndFlowScalingToItsBase) {
  const double h = 20.0 / 6.55;  // htsim's per-hop scaling, us
  // Profile htsim (the default): 20 us from zero + 3 h + fs(15 packets) = 37.7 us.
  auto htsim = swift();
  EXPECT_NEAR(fs_us(15), 5.16604, 1e-4);
  EXPECT_NEAR(state(*htsim, "target_ns", Time()) / 1e3, 20 + 3 * h + fs_us(15), 1e-6);
  EXPECT_NEAR(state(*htsim, "cwnd_packets", Time()), 15, 1e-12);
  EXPECT_EQ(htsim->window(), 15u * 4096);
  EXPECT_EQ(gbps(*htsim), 400);
  // Custom from base_rtt: 2 us more; the flow term is fs_range at fs_min_cwnd and below, 0 at
  // fs_max_cwnd and above.
  auto custom = swift({"profile=custom"});
  EXPECT_NEAR(state(*custom, "target_ns", Time()) / 1e3, 22 + 3 * h + fs_us(15), 1e-6);
  auto small = swift({"profile=custom", "init_cwnd=0.05"});
  EXPECT_NEAR(state(*small, "target_ns", Time()) / 1e3, 22 + 3 * h + 100, 1e-6);
  auto large = swift({"profile=custom", "init_cwnd=400", "hop_scale=1us"});
  EXPECT_NEAR(state(*large, "target_ns", Time()) / 1e3, 22 + 3, 1e-6);
}

TEST(Swift, BelowTheTargetEachAckAddsAiOverCwnd) {
  auto cc = swift(flat({"ai=2"}));
  double w = 15;
  for (int k = 0; k < 8; ++k) {
    cc->on_ack(Time::us(100 + k), Time::us(19));  // just below the 20 us target
    w += 2 / w;
  }
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), w, 1e-9);  // about +1 packet for 8 ACKs
  EXPECT_EQ(cc->window(), 16u * 4096);                       // whole packets
  EXPECT_EQ(gbps(*cc), 400);                                 // a window, no pacing
}

TEST(Swift, AboveTheTargetTheWindowFallsOncePerRttByAtMostMaxMdf) {
  auto cc = swift(flat({}));
  // 25 us against 20: x (1 - 0.8 x 5 / 25) = 0.84. srtt: 2 us -> 4.875 us.
  cc->on_ack(Time::us(100), Time::us(25));
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), 15 * 0.84, 1e-9);
  EXPECT_EQ(cc->window(), 12u * 4096);
  // 2 us later, within the round trip (srtt 4.875 us): no second cut; srtt -> 7.39 us.
  cc->on_ack(Time::us(102), Time::us(25));
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), 15 * 0.84, 1e-9);
  EXPECT_NEAR(state(*cc, "srtt_ns", Time()), (0.875 * 4.875 + 0.125 * 25) * 1e3, 1e-6);
  // 8 us after the cut (> 7.39): a cut again, 100 us against 20 would be x 0.36: max_mdf
  // bounds it at x 0.5.
  cc->on_ack(Time::us(108), Time::us(100));
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), 15 * 0.84 * 0.5, 1e-9);
  // A delay below the target increases at once, whatever the last cut.
  cc->on_ack(Time::us(109), Time::us(10));
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), 6.3 + 1 / 6.3, 1e-9);
}

TEST(Swift, BelowOnePacketTheQpKeepsOneAndIsPaced) {
  auto cc = swift(flat({"init_cwnd=0.5"}));
  // 0.5 packets per srtt (2 us): 2,048 B per 2 us = 8.192 Gb/s; one packet outstanding.
  EXPECT_NEAR(gbps(*cc), 0.5 * 4096 * 8 / 2e-6 / kG, 1e-6);
  EXPECT_EQ(cc->window(), 4096u);
  // Below one packet the increase is ai per ACK, not ai / cwnd: 0.5 -> 1.5, window mode again.
  cc->on_ack(Time::us(100), Time::us(4));
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), 1.5, 1e-9);
  EXPECT_EQ(gbps(*cc), 400);
  EXPECT_EQ(cc->window(), 4096u);
  // Timeouts: a cut by max_mdf (once per srtt), then min_cwnd (10 B) at the fifth in a row,
  // paced at 10 B per srtt.
  cc->on_timeout(Time::us(200));
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), 0.75, 1e-9);
  for (int k = 1; k < 5; ++k) cc->on_timeout(Time::us(200 + k));
  EXPECT_NEAR(state(*cc, "cwnd_packets", Time()), 10.0 / 4096, 1e-12);
  const double srtt = state(*cc, "srtt_ns", Time()) * 1e-9;
  EXPECT_NEAR(gbps(*cc), 10 * 8 / srtt / kG, 1e-6);
  EXPECT_EQ(cc->window(), 4096u);
}

TEST(Swift, TheHtsimProfileRefusesTheKeysItSets) {
  EXPECT_THROW(make("swift", {"beta=0.5"}), std::exception);
  EXPECT_THROW(make("swift", {"profile=htsim", "ai=2"}), std::exception);
  EXPECT_THROW(make("swift", {"profile=htsim", "target_from=zero"}), std::exception);
  EXPECT_THROW(make("swift", {"profile=custom", "fs_min_cwnd=200"}), std::exception);
  EXPECT_NO_THROW(make("swift", {"profile=custom", "beta=0.5", "max_mdf=0.3"}));
  const CcEntry& e = CcRegistry::global().at("swift");
  EXPECT_TRUE(e.ack_each_packet && e.ack_each_packet(*e.make_config()));
}

}  // namespace
}  // namespace fabricsim::nic
