// ECN marking: measured marking fraction against the Kmin/Kmax/Pmax curve at several depths, and
// in a queue driven by arrivals and departures, marking on enqueue vs dequeue.
#include "models/link/ecn_marker.h"

#include <cmath>
#include <deque>

#include <gtest/gtest.h>

namespace fabricsim::link {
namespace {

EcnConfig make(const std::vector<std::string>& o) {
  EcnConfig c;
  config::load(c, "", o);
  return c;
}

TEST(EcnMarker, MarkingFractionFollowsCurve) {
  // A steep curve so that every region is measurable: Kmin 10 KB, Kmax 100 KB, Pmax 0.2.
  EcnMarker m(make({"kmin=10KB", "kmax=100KB", "pmax=0.2"}), 2);
  Rng rng(31);
  constexpr int kN = 40000;
  // Depth -> the curve value written out by hand (not by the model's own function).
  const std::vector<std::pair<int64_t, double>> points = {
      {0, 0.0},      {9999, 0.0},   {10000, 0.0},  {32500, 0.05}, {55000, 0.1},
      {77500, 0.15}, {100000, 0.2}, {100001, 1.0}, {500000, 1.0}};
  for (auto [depth, p] : points) {
    EXPECT_NEAR(m.probability(1, depth), p, 1e-12) << depth;
    const uint64_t before = m.marked(1);
    for (int i = 0; i < kN; ++i) m.mark(1, depth, rng);
    const double frac = static_cast<double>(m.marked(1) - before) / kN;
    // 4.5-sigma binomial band (exact for p = 0 and 1).
    EXPECT_NEAR(frac, p, 4.5 * std::sqrt(p * (1 - p) / kN) + 1e-12) << "depth " << depth;
  }
  EXPECT_EQ(m.packets(1), points.size() * kN);
  EXPECT_EQ(m.packets(0), 0u);
}

TEST(EcnMarker, PerQueueCurvesAndDisable) {
  EcnMarker m(make({}), 3);  // DCQCN defaults: 10 KB / 100 KB / 1%
  EXPECT_NEAR(m.probability(0, 55000), 0.005, 1e-12);
  m.set_curve(2, {1000, 2000, 0.5, true});
  EXPECT_NEAR(m.probability(2, 1500), 0.25, 1e-12);
  EXPECT_NEAR(m.probability(0, 1500), 0.0, 1e-12);
  EcnMarker off(make({"enabled=false"}), 1);
  Rng rng(1);
  EXPECT_FALSE(off.mark(0, 1 << 30, rng));
  EXPECT_TRUE(m.mark_on_enqueue());
  EXPECT_FALSE(EcnMarker(make({"mark_on=dequeue"}), 1).mark_on_enqueue());
  EcnConfig bad;
  EXPECT_THROW(config::load(bad, "", {"kmin=200KB"}), config::ConfigError);
}

TEST(EcnMarker, EnqueueVersusDequeueInAQueue) {
  // A queue of 1000 B packets holding 40..60 packets, marked on enqueue (depth found) or dequeue
  // (depth left behind). Each mode's mark count must match the sum of the curve over the depths
  // it saw, within a binomial band.
  for (const char* mode : {"enqueue", "dequeue"}) {
    EcnMarker m(make({"kmin=20KB", "kmax=80KB", "pmax=0.5", std::string("mark_on=") + mode}), 1);
    Rng rng(5), traffic(6);
    int64_t depth = 50000;
    double expected = 0, var = 0;
    for (int i = 0; i < 100000; ++i) {
      const bool arrive = depth <= 40000 || (depth < 60000 && traffic.bernoulli(0.5));
      if (arrive) {
        if (m.mark_on_enqueue()) {
          const double p = m.probability(0, depth);
          expected += p, var += p * (1 - p);
          m.mark(0, depth, rng);
        }
        depth += 1000;
      } else {
        depth -= 1000;
        if (!m.mark_on_enqueue()) {
          const double p = m.probability(0, depth);
          expected += p, var += p * (1 - p);
          m.mark(0, depth, rng);
        }
      }
    }
    EXPECT_GT(expected, 1000);
    EXPECT_NEAR(static_cast<double>(m.marked(0)), expected, 4.5 * std::sqrt(var)) << mode;
  }
}

}  // namespace
}  // namespace fabricsim::link
