// Traffic subsystem: synthetic generators, make_traffic checks, `traffic:` keys (trace replay:
// traffic_trace_replay_test.cpp).
//
// Statistical tests use tolerances of 5 standard deviations of the estimator (derived per test),
// so with fixed seeds they are deterministic and still fail on a biased implementation.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "models/common/error.h"
#include "models/common/rng.h"
#include "models/config/config.h"
#include "models/traffic/start_calendar.h"
#include "models/traffic/synthetic.h"
#include "models/traffic/trace_replay.h"
#include "models/traffic/traffic_source.h"
#include "testbenches/unit/traffic_test_support.h"

namespace fabricsim::traffic {
namespace {

using namespace test;  // NOLINT: the shared helpers

// All packets whose inject_time < horizon (the stream is time ordered).
std::vector<Packet> until(TrafficSource& s, Time horizon) {
  std::vector<Packet> v;
  Packet p;
  while (s.next(p) && p.inject_time < horizon) v.push_back(p);
  return v;
}

// Per source: wire time of its packets within [0, horizon) / horizon.
std::vector<double> offered_load(const std::vector<Packet>& pk, int endpoints, Time horizon) {
  std::vector<double> busy(endpoints, 0);
  for (const Packet& p : pk) {
    const Time end = std::min(p.inject_time + kRate.serialization(p.size), horizon);
    busy[p.src] += static_cast<double>((end - p.inject_time).as_fs());
  }
  for (double& b : busy) b /= static_cast<double>(horizon.as_fs());
  return busy;
}

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Pearson chi-square of `counts` against equal expected counts.
double chi_square_uniform(const std::vector<double>& counts) {
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  const double expect = total / static_cast<double>(counts.size());
  double chi = 0;
  for (double c : counts) chi += (c - expect) * (c - expect) / expect;
  return chi;
}

// ---------------------------------------------------------------------------------------------
// Arrival processes

TEST(Bernoulli, OfferedLoadMatchesAcrossLoads) {
  const int n = 8;
  const int64_t slots = 50000;
  const Time slot = kRate.serialization(Bytes(64));
  for (double p : {0.1, 0.5, 0.9}) {
    TrafficConfig c = base_config();
    c.load = p;
    auto src = make(c, n, 7);
    const auto load = offered_load(until(*src, slot * slots), n, slot * slots);
    // Busy slots per source ~ Binomial(slots, p).
    const double sd_one = std::sqrt(p * (1 - p) / slots);
    for (int e = 0; e < n; ++e) EXPECT_NEAR(load[e], p, 5 * sd_one) << "p=" << p << " src " << e;
    EXPECT_NEAR(mean(load), p, 5 * sd_one / std::sqrt(n)) << "p=" << p;
  }
}

TEST(Bernoulli, FixedSizeArrivalsAreSlotAlignedAndIndependentPerSlot) {
  const int n = 16;
  const int64_t slots = 40000;
  const double p = 0.3;
  const Time slot = kRate.serialization(Bytes(64));
  TrafficConfig c = base_config();
  c.load = p;
  auto src = make(c, n, 11);
  const auto pk = until(*src, slot * slots);

  std::vector<std::vector<char>> busy(n, std::vector<char>(slots, 0));
  for (const Packet& q : pk) {
    ASSERT_EQ(q.inject_time.as_fs() % slot.as_fs(), 0) << "packet " << q.id << " off the slot grid";
    busy[q.src][q.inject_time / slot] = 1;
  }
  // Per-slot arrival fraction over all inputs ~ p.
  const double cells = static_cast<double>(n) * slots;
  EXPECT_NEAR(static_cast<double>(pk.size()) / cells, p, 5 * std::sqrt(p * (1 - p) / cells));
  // Slot 0 is a slot like any other (the stream starts at t = 0, not at the first packet).
  int slot0 = 0;
  for (int e = 0; e < n; ++e) slot0 += busy[e][0];
  EXPECT_LT(slot0, n);
  // Independence: P(busy in slot t+1 | busy in slot t) = p (onoff would give ~1 - 1/B).
  double pairs = 0, both = 0;
  for (int e = 0; e < n; ++e)
    for (int64_t t = 0; t + 1 < slots; ++t)
      if (busy[e][t]) {
        pairs += 1;
        both += busy[e][t + 1];
      }
  EXPECT_NEAR(both / pairs, p, 5 * std::sqrt(p * (1 - p) / pairs));
}

TEST(Bernoulli, VariableSizesKeepExactLoad) {
  const int n = 8;
  const double p = 0.4;
  TrafficConfig c = base_config();
  c.load = p;
  c.sizes = {64, 1500};
  c.size_weights = {3, 1};
  auto src = make(c, n, 3);
  const Time horizon = Time::us(2000);
  const auto pk = until(*src, horizon);
  // Renewal-reward estimator: per packet, wire time s(1 + k) with E[k] = (1-p)/p; the variance of
  // s - p s (1 + k) is E[s^2] (1 - p), so sd(load) = sqrt(E[s^2] (1-p) / C) * p / E[s].
  double s1 = 0, s2 = 0;
  for (const Packet& q : pk) {
    const double s = static_cast<double>(kRate.serialization(q.size).as_fs());
    s1 += s;
    s2 += s * s;
  }
  const double count = static_cast<double>(pk.size());
  const double sd = std::sqrt(s2 / count * (1 - p) / count) * p / (s1 / count);
  EXPECT_NEAR(mean(offered_load(pk, n, horizon)), p, 5 * sd);
}

TEST(Bernoulli, LoadZeroNeverSendsAndLoadOneIsBackToBack) {
  TrafficConfig c = base_config();
  c.load = 0;
  Packet p;
  EXPECT_FALSE(make(c, 4)->next(p));
  c.arrival = "onoff";
  EXPECT_FALSE(make(c, 4)->next(p));

  for (const char* arrival : {"bernoulli", "onoff"}) {
    c = base_config();
    c.load = 1;
    c.arrival = arrival;
    c.sizes = {64, 200, 1500};
    c.size_weights = {1, 1, 1};
    auto src = make(c, 4);
    std::vector<Time> next_free(4, Time());
    for (const Packet& q : take(*src, 4000)) {
      EXPECT_EQ(q.inject_time, next_free[q.src]) << arrival << " packet " << q.id;
      next_free[q.src] = q.inject_time + kRate.serialization(q.size);
    }
  }
}

TEST(OnOff, OfferedLoadMatches) {
  const int n = 8;
  const int64_t slots = 200000;
  const double p = 0.5, b = 8;
  const Time slot = kRate.serialization(Bytes(64));
  TrafficConfig c = base_config();
  c.arrival = "onoff";
  c.load = p;
  c.burst_packets = b;
  auto src = make(c, n, 5);
  const auto pk = until(*src, slot * slots);
  for (const Packet& q : pk) ASSERT_EQ(q.inject_time.as_fs() % slot.as_fs(), 0);
  // Cycles of L on + K off slots: Var L = B^2 - B, Var K = m (1 + m) with m = B (1-p)/p; the
  // ratio estimator's variance is ((1-p)^2 Var L + p^2 Var K) / (C E[L+K]^2), C = cycles.
  const double m = b * (1 - p) / p;
  const double cycles = n * slots / (b / p);
  const double var =
      ((1 - p) * (1 - p) * (b * b - b) + p * p * m * (1 + m)) / (cycles * (b / p) * (b / p));
  EXPECT_NEAR(mean(offered_load(pk, n, slot * slots)), p, 5 * std::sqrt(var));
}

TEST(OnOff, BurstsGoToOneDestinationWithMeanLength) {
  // A burst continues with probability 1 - 1/B after each packet, and a new burst picks a uniform
  // destination, so consecutive packets of a source share the destination with probability
  // 1 - 1/B + 1/(B N).
  const int n = 32;
  const double b = 8;
  TrafficConfig c = base_config();
  c.arrival = "onoff";
  c.load = 0.6;
  c.burst_packets = b;
  auto src = make(c, n, 9);
  std::vector<int> last_dst(n, -1);
  double pairs = 0, same = 0;
  for (const Packet& q : take(*src, 200000)) {
    if (last_dst[q.src] >= 0) {
      pairs += 1;
      same += q.dst == last_dst[q.src];
    }
    last_dst[q.src] = q.dst;
  }
  const double expect = 1 - 1 / b + 1 / (b * n);
  EXPECT_NEAR(same / pairs, expect, 5 * std::sqrt(expect * (1 - expect) / pairs));
}

TEST(OnOff, BurstOfOneIsExactlyBernoulli) {
  // Also with one size, where bernoulli takes the generator's fast path and onoff does not.
  for (bool mixed : {true, false}) {
    for (const char* pattern : {"uniform", "permutation", "incast"}) {
      for (double p : {0.25, 0.5}) {  // loads where q = p / (p + (1 - p)) == p exactly
        TrafficConfig c = base_config();
        c.load = p;
        c.pattern = pattern;
        c.self = false;
        c.incast_target = 2;
        if (mixed) {
          c.sizes = {64, 512};
          c.size_weights = {1, 1};
        }
        TrafficConfig o = c;
        o.arrival = "onoff";
        o.burst_packets = 1;
        const auto a = take(*make(c, 8, 21), 5000);
        const auto b = take(*make(o, 8, 21), 5000);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          ASSERT_EQ(a[i].inject_time, b[i].inject_time) << pattern << " " << i;
          ASSERT_EQ(a[i].src, b[i].src) << pattern << " " << i;
          ASSERT_EQ(a[i].dst, b[i].dst) << pattern << " " << i;
          ASSERT_EQ(a[i].size, b[i].size) << pattern << " " << i;
        }
      }
    }
  }
}

TEST(Synthetic, NoEndpointExceedsLineRate) {
  for (const char* arrival : {"bernoulli", "onoff"}) {
    for (double load : {0.3, 0.95}) {
      TrafficConfig c = base_config();
      c.arrival = arrival;
      c.load = load;
      c.sizes = {64, 9000, 1500, 333};
      c.size_weights = {4, 1, 2, 1};
      auto src = make(c, 12, 4);
      std::vector<Time> next_free(12, Time());
      for (const Packet& q : take(*src, 30000)) {
        ASSERT_GE(q.inject_time, next_free[q.src]) << arrival << " load " << load;
        next_free[q.src] = q.inject_time + kRate.serialization(q.size);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Destinations, sizes, traffic classes

TEST(Destinations, UniformIncludesSelfAndIsFlat) {
  const int n = 16;
  TrafficConfig c = base_config();
  auto src = make(c, n, 2);
  std::vector<std::vector<double>> counts(n, std::vector<double>(n, 0));
  for (const Packet& q : take(*src, 320000)) counts[q.src][q.dst] += 1;
  std::vector<double> total(n, 0);
  for (int s = 0; s < n; ++s) {
    EXPECT_GT(counts[s][s], 0) << "self allowed";
    for (int d = 0; d < n; ++d) total[d] += counts[s][d];
  }
  // 15 degrees of freedom: P(chi2 > 50) ~ 1e-5.
  EXPECT_LT(chi_square_uniform(total), 50);
  EXPECT_LT(chi_square_uniform(counts[3]), 50);
}

TEST(Destinations, UniformForAwkwardAndLargeEndpointCounts) {
  // 48 destinations: the generator's shortcut for uniform destinations rejects 1.6% of its draws;
  // 3000: too many for the shortcut.
  for (int n : {48, 3000}) {
    TrafficConfig c = base_config();
    c.load = 0.7;
    auto src = make(c, n, 14);
    std::vector<double> counts(n, 0);
    for (const Packet& q : take(*src, static_cast<size_t>(n) * 60)) counts[q.dst] += 1;
    // n - 1 degrees of freedom: the mean plus 5 standard deviations (sqrt(2 (n - 1))).
    EXPECT_LT(chi_square_uniform(counts), (n - 1) + 5 * std::sqrt(2.0 * (n - 1))) << n;
  }
}

TEST(Destinations, IndependentOfTheIdleGap) {
  // The destination drawn with a gap must not depend on it: destination counts after a zero gap
  // and after a longer one, as a 2 x n contingency table (n - 1 dof; P(chi2 > 45) ~ 1e-5 for 11).
  const int n = 12;
  const Time slot = kRate.serialization(Bytes(64));
  TrafficConfig c = base_config();
  auto src = make(c, n, 15);
  std::vector<Time> next_free(n, Time::max());
  std::vector<std::vector<double>> counts(2, std::vector<double>(n, 0));
  for (const Packet& q : take(*src, 240000)) {
    if (next_free[q.src] != Time::max()) counts[q.inject_time > next_free[q.src]][q.dst] += 1;
    next_free[q.src] = q.inject_time + slot;
  }
  double total = 0, row[2] = {0, 0};
  std::vector<double> col(n, 0);
  for (int r = 0; r < 2; ++r)
    for (int d = 0; d < n; ++d) {
      row[r] += counts[r][d];
      col[d] += counts[r][d];
      total += counts[r][d];
    }
  double chi = 0;
  for (int r = 0; r < 2; ++r)
    for (int d = 0; d < n; ++d) {
      const double expect = row[r] * col[d] / total;
      chi += (counts[r][d] - expect) * (counts[r][d] - expect) / expect;
    }
  EXPECT_LT(chi, 45);
}

TEST(Destinations, SelfFalseNeverSendsToItself) {
  const int n = 8;
  for (const char* pattern : {"uniform", "hotspot"}) {
    TrafficConfig c = base_config();
    c.pattern = pattern;
    c.self = false;
    c.hotspot_port = 2;
    c.hotspot_fraction = 0.3;
    auto src = make(c, n, 6);
    std::vector<double> from0(n, 0);
    for (const Packet& q : take(*src, 100000)) {
      ASSERT_NE(q.src, q.dst) << pattern;
      if (q.src == 0) from0[q.dst] += 1;
    }
    if (std::string(pattern) == "uniform") {
      from0.erase(from0.begin());  // the 7 others equally likely: 6 dof, P(chi2 > 30) ~ 4e-5
      EXPECT_LT(chi_square_uniform(from0), 30);
    }
  }
}

TEST(Destinations, PermutationIsAFixedDerangement) {
  const int n = 16;
  TrafficConfig c = base_config();
  c.pattern = "permutation";
  auto src = make(c, n, 8);
  std::vector<int> dst_of(n, -1);
  for (const Packet& q : take(*src, 20000)) {
    if (dst_of[q.src] < 0) dst_of[q.src] = q.dst;
    ASSERT_EQ(q.dst, dst_of[q.src]) << "the permutation changed";
  }
  std::set<int> dsts;
  for (int s = 0; s < n; ++s) {
    EXPECT_NE(dst_of[s], s) << "fixed point";
    dsts.insert(dst_of[s]);
  }
  EXPECT_EQ(dsts.size(), static_cast<size_t>(n)) << "not a bijection";

  // Drawn from the seed: reproducible, and another seed gives another permutation.
  SyntheticSource a(c, n, kRate, 8), b(c, n, kRate, 8), d(c, n, kRate, 9);
  EXPECT_EQ(a.permutation(), b.permutation());
  EXPECT_NE(a.permutation(), d.permutation());
  std::vector<int32_t> from_stream(dst_of.begin(), dst_of.end());
  EXPECT_EQ(a.permutation(), from_stream);

  // Independent of the arrival process (its own stream).
  c.arrival = "onoff";
  EXPECT_EQ(SyntheticSource(c, n, kRate, 8).permutation(), a.permutation());

  // Small cases: N = 2 must swap; N = 1 can only send to itself.
  EXPECT_EQ(SyntheticSource(c, 2, kRate, 8).permutation(), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(SyntheticSource(c, 1, kRate, 8).permutation(), (std::vector<int32_t>{0}));
  // Many seeds: always a derangement.
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const auto perm = SyntheticSource(c, 5, kRate, seed).permutation();
    for (int i = 0; i < 5; ++i) ASSERT_NE(perm[i], i) << "seed " << seed;
  }
}

TEST(Destinations, HotspotFraction) {
  const int n = 8;
  const double f = 0.3;
  TrafficConfig c = base_config();
  c.pattern = "hotspot";
  c.hotspot_port = 5;
  c.hotspot_fraction = f;
  auto src = make(c, n, 12);
  const auto pk = take(*src, 200000);
  std::vector<double> counts(n, 0);
  for (const Packet& q : pk) counts[q.dst] += 1;
  const double total = static_cast<double>(pk.size());
  const double expect = f + (1 - f) / n;  // hot share plus its uniform share
  EXPECT_NEAR(counts[5] / total, expect, 5 * std::sqrt(expect * (1 - expect) / total));
  counts.erase(counts.begin() + 5);
  EXPECT_LT(chi_square_uniform(counts), 35);  // the rest uniform; 6 dof

  // self = false: sources other than the hot port send f + (1-f)/(N-1) to it.
  c.self = false;
  auto src2 = make(c, n, 12);
  double from_others = 0, to_hot = 0;
  for (const Packet& q : take(*src2, 200000)) {
    if (q.src == 5) continue;
    from_others += 1;
    to_hot += q.dst == 5;
  }
  const double expect2 = f + (1 - f) / (n - 1);
  EXPECT_NEAR(to_hot / from_others, expect2, 5 * std::sqrt(expect2 * (1 - expect2) / from_others));
}

TEST(Destinations, IncastOnlyChosenSourcesSendOnlyToTarget) {
  const int n = 8;
  TrafficConfig c = base_config();
  c.pattern = "incast";
  c.incast_target = 3;
  c.incast_sources = 4;  // the 4 lowest other than 3: 0, 1, 2, 4
  std::set<int> senders;
  for (const Packet& q : take(*make(c, n, 1), 20000)) {
    ASSERT_EQ(q.dst, 3);
    senders.insert(q.src);
  }
  EXPECT_EQ(senders, (std::set<int>{0, 1, 2, 4}));

  c.incast_sources = 0;  // all others
  senders.clear();
  for (const Packet& q : take(*make(c, n, 1), 20000)) {
    ASSERT_EQ(q.dst, 3);
    senders.insert(q.src);
  }
  EXPECT_EQ(senders, (std::set<int>{0, 1, 2, 4, 5, 6, 7}));
}

TEST(Destinations, AllToAllCyclesThroughOthersFromSrcPlusOne) {
  const int n = 5;
  for (const char* arrival : {"bernoulli", "onoff"}) {
    TrafficConfig c = base_config();
    c.pattern = "all_to_all";
    c.arrival = arrival;
    c.self = true;  // all_to_all never sends to itself regardless
    std::vector<std::vector<int>> seq(n);
    for (const Packet& q : take(*make(c, n, 3), 5000)) seq[q.src].push_back(q.dst);
    for (int s = 0; s < n; ++s) {
      ASSERT_GT(seq[s].size(), 20u);
      for (size_t i = 0; i < seq[s].size(); ++i) {
        const int expect = (s + 1 + static_cast<int>(i % (n - 1))) % n;
        ASSERT_EQ(seq[s][i], expect) << arrival << " src " << s << " packet " << i;
      }
    }
  }
  // One endpoint has no other to send to: refused, not a run of zero packets that looks fine.
  TrafficConfig c = base_config();
  c.pattern = "all_to_all";
  EXPECT_THROW(make(c, 1), InputError);
  c.pattern = "incast";
  EXPECT_THROW(make(c, 1), InputError);
}

TEST(Sizes, WeightedDistribution) {
  TrafficConfig c = base_config();
  c.sizes = {64, 512, 1500};
  c.size_weights = {1, 2, 1};
  std::map<uint64_t, double> counts;
  const auto pk = take(*make(c, 8, 4), 100000);
  for (const Packet& q : pk) counts[q.size.count()] += 1;
  ASSERT_EQ(counts.size(), 3u);
  const double total = static_cast<double>(pk.size());
  for (auto [size, share] : {std::pair<uint64_t, double>{64, 0.25}, {512, 0.5}, {1500, 0.25}})
    EXPECT_NEAR(counts[size] / total, share, 5 * std::sqrt(share * (1 - share) / total)) << size;

  c = base_config();
  c.size = Bytes(1500);
  for (const Packet& q : take(*make(c, 4), 1000)) ASSERT_EQ(q.size, Bytes(1500));
}

TEST(TrafficClasses, WeightsAndDefault) {
  TrafficConfig c = base_config();
  for (const Packet& q : take(*make(c, 4), 1000)) ASSERT_EQ(q.tc, 0);

  c.tc_weights = {1, 0, 3};  // a zero weight leaves a class unused
  std::vector<double> counts(8, 0);
  const auto pk = take(*make(c, 8, 5, 4), 100000);
  for (const Packet& q : pk) counts.at(q.tc) += 1;
  const double total = static_cast<double>(pk.size());
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[3], 0);
  EXPECT_NEAR(counts[2] / total, 0.75, 5 * std::sqrt(0.75 * 0.25 / total));
}

// ---------------------------------------------------------------------------------------------
// Merging and determinism

TEST(Merge, TimeOrderTiesByLowerSrcAndSequentialIds) {
  // Load 1, fixed size: every source sends in every slot, so each slot is a tie of all sources.
  TrafficConfig c = base_config();
  c.load = 1;
  const int n = 6;
  const Time slot = kRate.serialization(Bytes(64));
  const auto pk = take(*make(c, n), 60);
  for (size_t i = 0; i < pk.size(); ++i) {
    EXPECT_EQ(pk[i].id, i);
    EXPECT_EQ(pk[i].src, static_cast<int>(i % n));
    EXPECT_EQ(pk[i].inject_time, slot * static_cast<int64_t>(i / n));
  }

  // A random mix: non-decreasing times, equal times in increasing src.
  c = base_config();
  c.load = 0.7;
  c.arrival = "onoff";
  c.sizes = {64, 128};
  c.size_weights = {1, 1};
  const auto mix = take(*make(c, 16, 13), 50000);
  int ties = 0;
  for (size_t i = 1; i < mix.size(); ++i) {
    ASSERT_EQ(mix[i].id, i);
    ASSERT_LE(mix[i - 1].inject_time, mix[i].inject_time) << i;
    if (mix[i - 1].inject_time == mix[i].inject_time) {
      ++ties;
      ASSERT_LT(mix[i - 1].src, mix[i].src) << i;
    }
  }
  EXPECT_GT(ties, 100) << "the tie rule was not exercised";
}

TEST(Determinism, SameSeedSameStreamOtherSeedOtherStream) {
  TrafficConfig c = base_config();
  c.pattern = "hotspot";
  c.hotspot_port = 1;
  c.arrival = "onoff";
  c.sizes = {64, 1500};
  c.size_weights = {1, 1};
  c.tc_weights = {1, 1};
  const auto a = take(*make(c, 8, 42), 10000);
  const auto b = take(*make(c, 8, 42), 10000);
  const auto d = take(*make(c, 8, 43), 10000);
  ASSERT_EQ(a.size(), b.size());
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].id, b[i].id);
    ASSERT_EQ(a[i].src, b[i].src);
    ASSERT_EQ(a[i].dst, b[i].dst);
    ASSERT_EQ(a[i].tc, b[i].tc);
    ASSERT_EQ(a[i].size, b[i].size);
    ASSERT_EQ(a[i].inject_time, b[i].inject_time);
    differs = differs || a[i].inject_time != d[i].inject_time || a[i].dst != d[i].dst;
  }
  EXPECT_TRUE(differs);
}

TEST(Determinism, EndpointStreamsAreIndependentOfEndpointCount) {
  // Each endpoint has its own derived stream: endpoint 0's timing does not depend on N.
  TrafficConfig c = base_config();
  c.pattern = "incast";  // fixed destination, so only the timing stream matters
  c.incast_target = 1;
  std::vector<Time> t4, t9;
  for (const Packet& q : take(*make(c, 4, 77), 4000))
    if (q.src == 0) t4.push_back(q.inject_time);
  for (const Packet& q : take(*make(c, 9, 77), 9000))
    if (q.src == 0) t9.push_back(q.inject_time);
  const size_t k = std::min(t4.size(), t9.size());
  ASSERT_GT(k, 500u);
  for (size_t i = 0; i < k; ++i) ASSERT_EQ(t4[i], t9[i]) << i;
}

TEST(StartCalendar, PopsInStartThenIdOrder) {
  // Against an ordered set: endpoint counts of one to three words, a single start grid or mixed
  // gaps, and jumps beyond the ring (the far heap, and stretches where the ring is empty).
  struct Case {
    int endpoints;
    bool grid;
  };
  for (const Case k : {Case{5, true}, Case{70, false}, Case{130, true}, Case{130, false}}) {
    const int64_t unit = 1000;  // fs: the smallest gap; buckets are 512 fs wide
    StartCalendar cal(k.endpoints, Time::fs(unit), k.grid ? Time::fs(unit) : Time());
    Rng rng(static_cast<uint64_t>(k.endpoints) * 2 + k.grid);
    std::set<std::pair<int64_t, int32_t>> ref;
    std::vector<int64_t> start(k.endpoints);
    const auto schedule = [&](int32_t e, int64_t from) {
      int64_t gap = 0;
      const uint64_t r = rng.below(100);
      if (r < 2 && e % 3 == 0) return;  // the endpoint stops
      if (r < 6)
        gap = unit * (1 + rng.below(3000));  // beyond the ring
      else if (k.grid)
        gap = unit * (1 + rng.below(4));  // slot aligned
      else
        gap = unit + static_cast<int64_t>(rng.below(2500));
      start[e] = from + gap;
      ref.insert({start[e], e});
      cal.push(e, Time::fs(start[e]));
    };
    for (int32_t e = 0; e < k.endpoints; ++e) schedule(e, -unit);
    int64_t popped = 0;
    while (cal.pop_bucket([&](int32_t e) {
      ASSERT_FALSE(ref.empty());
      ASSERT_EQ(ref.begin()->second, e) << "after " << popped << " pops";
      ref.erase(ref.begin());
      ++popped;
      if (popped < 60000) schedule(e, start[e]);
    })) {
    }
    EXPECT_TRUE(ref.empty());
    EXPECT_GE(popped, 60000);
  }
}

TEST(GeometricSampler, MatchesTheDistributionAndLeavesSpareBitsUniform) {
  for (double p : {0.05, 0.3, 0.6, 0.97, 1.0}) {
    const GeometricSampler g(p);
    Rng rng(99);
    const int draws = 200000;
    std::vector<double> k_counts(12, 0), spare_counts(1 << GeometricSampler::kSpareBits, 0);
    for (int i = 0; i < draws; ++i) {
      uint32_t spare = 0;
      const uint64_t k = g(rng, spare);
      k_counts[std::min<uint64_t>(k, 11)] += 1;
      spare_counts[spare] += 1;
    }
    for (int k = 0; k < 11; ++k) {
      const double expect = p * std::pow(1 - p, k);
      EXPECT_NEAR(k_counts[k] / draws, expect, 5 * std::sqrt(expect * (1 - expect) / draws) + 1e-9)
          << "p=" << p << " k=" << k;
    }
    const double dof = static_cast<double>(spare_counts.size() - 1);
    EXPECT_LT(chi_square_uniform(spare_counts), dof + 5 * std::sqrt(2 * dof)) << "p=" << p;
  }
}

// ---------------------------------------------------------------------------------------------
// Parameter checks

std::string make_error(const TrafficConfig& c, int endpoints, int tc_count = 8) {
  try {
    make_traffic(c, endpoints, kRate, tc_count, 1, "");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MakeTraffic, RejectsInconsistentParametersNamingTheKey) {
  TrafficConfig c = base_config();
  c.pattern = "hotspot";
  c.hotspot_port = 8;
  EXPECT_NE(make_error(c, 8).find("traffic.hotspot.port"), std::string::npos);
  EXPECT_EQ(make_error(c, 9), "");

  c = base_config();
  c.pattern = "incast";
  c.incast_target = 8;
  EXPECT_NE(make_error(c, 8).find("traffic.incast.target"), std::string::npos);
  c.incast_target = 7;
  c.incast_sources = 8;
  EXPECT_NE(make_error(c, 8).find("traffic.incast.sources"), std::string::npos);
  c.incast_sources = 7;
  EXPECT_EQ(make_error(c, 8), "");

  c = base_config();
  c.tc_weights = {1, 1, 1};
  EXPECT_NE(make_error(c, 8, 2).find("traffic.tc_weights"), std::string::npos);
  EXPECT_EQ(make_error(c, 8, 3), "");

  c = base_config();
  c.self = false;
  EXPECT_NE(make_error(c, 1).find("traffic.self"), std::string::npos);

  // The device-independent checks also apply to configs built in code.
  c = base_config();
  c.sizes = {64, 128};
  c.size_weights = {1};
  EXPECT_NE(make_error(c, 4).find("traffic.size_weights"), std::string::npos);
  c.size_weights = {1, 0};
  EXPECT_NE(make_error(c, 4).find("traffic.size_weights"), std::string::npos);
  c.sizes = {64, 128.5};
  c.size_weights = {1, 1};
  EXPECT_NE(make_error(c, 4).find("traffic.sizes"), std::string::npos);
  c = base_config();
  c.size_weights = {1};
  EXPECT_NE(make_error(c, 4).find("traffic.size_weights"), std::string::npos);
  c = base_config();
  c.tc_weights = {0, 0};
  EXPECT_NE(make_error(c, 4).find("traffic.tc_weights"), std::string::npos);
  c.tc_weights = {1, -1};
  EXPECT_NE(make_error(c, 4).find("traffic.tc_weights"), std::string::npos);
  c = base_config();
  c.pattern = "trace";
  EXPECT_NE(make_error(c, 4).find("traffic.trace.file"), std::string::npos);
  c = base_config();
  c.pattern = "ring";
  EXPECT_NE(make_error(c, 4).find("traffic.pattern"), std::string::npos);
  c = base_config();
  c.load = 1.5;
  EXPECT_NE(make_error(c, 4).find("traffic.load"), std::string::npos);
}

TEST(Validate, ReportsThroughTheChecker) {
  std::vector<std::string> asked;
  const config::Checker checker([&asked](const std::string& key) {
    asked.push_back(key);
    return std::string("cfg.yaml:9");
  });
  TrafficConfig c = base_config();
  EXPECT_NO_THROW(c.validate(checker));
  c.sizes = {64};
  c.size_weights = {1, 2};
  EXPECT_THROW(c.validate(checker), config::ConfigError);
  ASSERT_FALSE(asked.empty());
  EXPECT_EQ(asked.back(), "traffic.size_weights");
}

// ---------------------------------------------------------------------------------------------
// The `traffic:` keys through the YAML loader, embedded the way a run configuration embeds them.

struct Wrapped : config::Configurable {
  TrafficConfig traffic;
  void visit(config::Visitor& v) override {
    v.begin_section("traffic", "traffic sources");
    traffic.visit(v);
    v.end_section();
  }
  void validate(const config::Checker& c) const override { traffic.validate(c); }
};

TEST(TrafficConfigKeys, DefaultsThroughTheLoader) {
  Wrapped w;
  config::load(w, "", {});
  const TrafficConfig& t = w.traffic;
  EXPECT_EQ(t.pattern, "uniform");
  EXPECT_EQ(t.load, 0.5);
  EXPECT_EQ(t.arrival, "bernoulli");
  EXPECT_EQ(t.burst_packets, 8);
  EXPECT_EQ(t.size, Bytes(64));
  EXPECT_TRUE(t.sizes.empty());
  EXPECT_TRUE(t.size_weights.empty());
  EXPECT_TRUE(t.tc_weights.empty());
  EXPECT_TRUE(t.self);
  EXPECT_EQ(t.hotspot_port, 0);
  EXPECT_EQ(t.hotspot_fraction, 0.5);
  EXPECT_EQ(t.incast_target, 0);
  EXPECT_EQ(t.incast_sources, 0);
  EXPECT_EQ(t.trace_file, "");
  EXPECT_EQ(t.message_size, Bytes(64 * 1024));
  EXPECT_EQ(t.message_verb, "write");
  EXPECT_EQ(t.messages_file, "");
  // A configuration built in code starts from the same message defaults.
  EXPECT_EQ(TrafficConfig().message_size, t.message_size);
  EXPECT_EQ(TrafficConfig().message_verb, t.message_verb);
}

TEST(TrafficConfigKeys, MessageKeysLoadAndAreChecked) {
  TempFile f(".yaml",
             "traffic:\n"
             "  pattern: messages\n"
             "  message_size: 2GiB\n"
             "  message_verb: write_imm\n"
             "  messages:\n"
             "    file: work.txt\n");
  Wrapped w;
  config::load(w, f.path(), {});
  EXPECT_EQ(w.traffic.pattern, "messages");
  EXPECT_EQ(w.traffic.message_size, Bytes(uint64_t{1} << 31));
  EXPECT_EQ(w.traffic.message_verb, "write_imm");
  EXPECT_EQ(w.traffic.messages_file, "work.txt");
  const auto error = [](const std::vector<std::string>& overrides) -> std::string {
    Wrapped x;
    try {
      config::load(x, "", overrides);
    } catch (const config::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error({"traffic.message_size=0B"}).find("traffic.message_size"), std::string::npos);
  EXPECT_NE(error({"traffic.message_size=2147483649B"}).find("traffic.message_size"),
            std::string::npos);
  EXPECT_NE(error({"traffic.message_verb=atomic"}).find("traffic.message_verb"), std::string::npos);
  EXPECT_NE(error({"traffic.pattern=messages"}).find("traffic.messages.file"), std::string::npos);
  EXPECT_EQ(error({"traffic.pattern=messages", "traffic.messages.file=a.txt"}), "");
}

TEST(TrafficConfigKeys, PacketRunsRefusePatternMessages) {
  TrafficConfig c = base_config();
  c.pattern = "messages";
  c.messages_file = "a.txt";
  EXPECT_NE(make_error(c, 4).find("traffic.pattern: messages is a NIC workload"),
            std::string::npos);
}

TEST(TrafficConfigKeys, NestedKeysLoad) {
  TempFile f(".yaml",
             "traffic:\n"
             "  pattern: hotspot\n"
             "  load: 0.8\n"
             "  arrival: onoff\n"
             "  burst_packets: 16\n"
             "  size: 1500B\n"
             "  sizes: [64, 1500]\n"
             "  size_weights: [3, 1]\n"
             "  tc_weights: [1, 0, 2]\n"
             "  self: false\n"
             "  hotspot: {port: 3, fraction: 0.2}\n"
             "  incast:\n"
             "    target: 5\n"
             "    sources: 4\n"
             "  trace:\n"
             "    file: x.trace\n");
  Wrapped w;
  config::load(w, f.path(), {"traffic.load=0.25"});
  const TrafficConfig& t = w.traffic;
  EXPECT_EQ(t.pattern, "hotspot");
  EXPECT_EQ(t.load, 0.25);
  EXPECT_EQ(t.arrival, "onoff");
  EXPECT_EQ(t.burst_packets, 16);
  EXPECT_EQ(t.size, Bytes(1500));
  EXPECT_EQ(t.sizes, (std::vector<double>{64, 1500}));
  EXPECT_EQ(t.size_weights, (std::vector<double>{3, 1}));
  EXPECT_EQ(t.tc_weights, (std::vector<double>{1, 0, 2}));
  EXPECT_FALSE(t.self);
  EXPECT_EQ(t.hotspot_port, 3);
  EXPECT_EQ(t.hotspot_fraction, 0.2);
  EXPECT_EQ(t.incast_target, 5);
  EXPECT_EQ(t.incast_sources, 4);
  EXPECT_EQ(t.trace_file, "x.trace");
}

TEST(TrafficConfigKeys, LoaderRejectsBadValues) {
  const auto error = [](const std::vector<std::string>& overrides) -> std::string {
    Wrapped w;
    try {
      config::load(w, "", overrides);
    } catch (const config::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error({"traffic.load=1.5"}).find("traffic.load"), std::string::npos);
  EXPECT_NE(error({"traffic.pattern=ring"}).find("traffic.pattern"), std::string::npos);
  EXPECT_NE(error({"traffic.size=0B"}).find("traffic.size"), std::string::npos);
  EXPECT_NE(error({"traffic.sizes=[64, 128]", "traffic.size_weights=[1]"}).find("size_weights"),
            std::string::npos);
  EXPECT_NE(error({"traffic.pattern=trace"}).find("traffic.trace.file"), std::string::npos);
  EXPECT_NE(error({"traffic.hotspot.fraction=2"}).find("traffic.hotspot.fraction"),
            std::string::npos);
  EXPECT_EQ(error({"traffic.pattern=trace", "traffic.trace.file=a.trace"}), "");
}

TEST(TrafficConfigKeys, CrossChecksNameFileLineAndKey) {
  TempFile f(".yaml",
             "traffic:\n"
             "  sizes: [64, 1500]\n"
             "  size_weights: [1]\n");
  Wrapped w;
  try {
    config::load(w, f.path(), {});
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(f.path() + ":3: traffic.size_weights: has 1 entries"),
              std::string::npos)
        << e.what();
  }
}

TEST(TrafficConfigKeys, EveryKeyIsDocumented) {
  Wrapped w;
  const std::string md = config::to_markdown(w, "Traffic");
  for (const char* key : {"pattern", "load",         "arrival",      "burst_packets", "size",
                          "sizes",   "size_weights", "tc_weights",   "self",          "hotspot",
                          "port",    "fraction",     "incast",       "target",        "sources",
                          "trace",   "file",         "message_size", "message_verb",  "messages"})
    EXPECT_NE(md.find(key), std::string::npos) << key;
}

}  // namespace
}  // namespace fabricsim::traffic
