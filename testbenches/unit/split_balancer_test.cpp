#include "models/common/split_balancer.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

// A run's windows in closed form: side 0 runs the hosts (`hosts` seconds a stretch) and its
// switches, each worker its switches, every switch `cost[i]` seconds a stretch; the sides hold
// consecutive switches. A stretch lasts as long as its busiest side, and each side waits the
// rest of it.
struct Model {
  double hosts;
  std::vector<double> cost;
  std::vector<double> busy(const std::vector<int>& counts) const {
    std::vector<double> b(counts.size(), 0.0);
    size_t i = 0;
    for (size_t s = 0; s < counts.size(); ++s)
      for (int k = 0; k < counts[s]; ++k) b[s] += cost[i++];
    b[0] += hosts;
    return b;
  }
  double wall(const std::vector<int>& counts) const {
    const std::vector<double> b = busy(counts);
    return *std::max_element(b.begin(), b.end());
  }
  // One stretch of the split: true if the balancer moved switches.
  bool step(SplitBalancer& bal) const {
    const std::vector<double> b = busy(bal.counts());
    const double w = wall(bal.counts());
    std::vector<double> waits;
    for (double x : b) waits.push_back(w - x);
    return bal.look(w, waits);
  }
};

// The best split's stretch for two sides, by trying every one.
double best_wall(const Model& m, int n) {
  double best = 1e300;
  for (int k = 0; k < n; ++k) best = std::min(best, m.wall({k, n - k}));
  return best;
}

TEST(SplitBalancer, TwoSidesConvergeToTheBestSplitAndStay) {
  // The all-to-all's slow half in small: 320 switches of 1 s each (266 on the worker), hosts
  // worth 100 switches; the best split puts 110 on side 0.
  Model m{100.0, std::vector<double>(320, 1.0)};
  SplitBalancer bal({54, 266});
  EXPECT_NEAR(m.wall(bal.counts()), 266.0, 1e-9);
  int looks = 0;
  while (m.step(bal) && ++looks < 100) {
  }
  EXPECT_LT(looks, 30);  // settles, and then moves nothing more
  EXPECT_FALSE(m.step(bal));
  const double best = best_wall(m, 320);
  EXPECT_NEAR(best, 210.0, 1e-9);
  // Within the dead band of the best (4% of the stretch between the waits).
  EXPECT_LE(m.wall(bal.counts()), best * (1 + SplitBalancer::kDeadband));
  EXPECT_EQ(bal.counts()[0] + bal.counts()[1], 320);
  EXPECT_GT(bal.moves(), 50u);
}

TEST(SplitBalancer, MovesTheOtherWayWhenTheMainThreadSetsThePace) {
  // Hosts worth 300 switches: side 0 should give every switch it can.
  Model m{300.0, std::vector<double>(100, 1.0)};
  SplitBalancer bal({40, 60});
  for (int k = 0; k < 100; ++k) m.step(bal);
  EXPECT_EQ(bal.counts(), (std::vector<int>{0, 100}));
}

TEST(SplitBalancer, ABalancedSplitOrOneWithinTheDeadBandDoesNotMove) {
  SplitBalancer bal({10, 20});
  EXPECT_FALSE(bal.look(10.0, {1.0, 1.0}));
  EXPECT_FALSE(bal.look(10.0, {0.5, 0.1}));  // 0.4 s of 10: the band's edge
  EXPECT_FALSE(bal.look(0.0, {0.0, 5.0}));   // no stretch measured
  EXPECT_EQ(bal.counts(), (std::vector<int>{10, 20}));
  EXPECT_EQ(bal.moves(), 0u);
}

TEST(SplitBalancer, StepsAreBoundedAndAWorkerKeepsASwitch) {
  // The main thread waited the whole stretch: at most an eighth of the worker's switches move
  // at once, and the worker never gives its last one.
  SplitBalancer bal({0, 16});
  ASSERT_TRUE(bal.look(1.0, {1.0, 0.0}));
  EXPECT_EQ(bal.counts(), (std::vector<int>{2, 14}));
  for (int k = 0; k < 50; ++k) bal.look(1.0, {1.0, 0.0});
  EXPECT_EQ(bal.counts(), (std::vector<int>{15, 1}));
  EXPECT_FALSE(bal.look(1.0, {1.0, 0.0}));
  EXPECT_EQ(bal.moves(), 15u);
}

TEST(SplitBalancer, ThreeSidesEvenOutPairByPair) {
  // Switches of unequal cost (the cores last, dearer): every side ends within a few percent of
  // the others' busy time, and the split holds every switch.
  Model m{20.0, {}};
  for (int i = 0; i < 90; ++i) m.cost.push_back(i < 70 ? 1.0 : 2.5);
  SplitBalancer bal({5, 5, 80});
  for (int k = 0; k < 200; ++k) m.step(bal);
  const std::vector<int>& c = bal.counts();
  EXPECT_EQ(std::accumulate(c.begin(), c.end(), 0), 90);
  const std::vector<double> b = m.busy(c);
  const double most = *std::max_element(b.begin(), b.end());
  const double least = *std::min_element(b.begin(), b.end());
  EXPECT_LE(most - least, 2 * SplitBalancer::kDeadband * most + 2.5) << c[0] << " " << c[1];
}

TEST(SplitBalancer, RefusesAWorkerWithoutASwitchOrWaitsOfAnotherShape) {
  EXPECT_THROW(SplitBalancer({3, 0}), std::invalid_argument);
  SplitBalancer bal({3, 4});
  EXPECT_THROW(bal.look(1.0, {0.5}), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim
