// Topologies: every host reaches every other host by walking the forwarding tables hop by hop,
// over the shortest path, and ECMP spreads flows evenly over the spines.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "models/topology/topology.h"
#include "testbenches/unit/topology_walk.h"

namespace fabricsim::topo {
namespace {

using testing::walk;

TopologyConfig make(const std::string& kind) {
  TopologyConfig c;
  c.kind = kind;
  return c;
}

TEST(Topology, SingleIsOneSwitchWithAHostPerPort) {
  const Topology t = build_topology(make("single"), 8, 1);
  ASSERT_EQ(t.switches(), 1);
  ASSERT_EQ(t.hosts, 8);
  EXPECT_TRUE(t.wires.empty());
  for (int h = 0; h < 8; ++h) {
    EXPECT_EQ(t.host_port[h].port, h);
    for (int d = 0; d < 8; ++d) EXPECT_EQ(walk(t, h, d), std::vector<int>{0});
  }
}

TEST(Topology, LineRoutesAlongTheChain) {
  for (int n : {2, 3, 5}) {
    TopologyConfig c = make("line");
    c.switches = n;
    const Topology t = build_topology(c, 8, 1);
    const int per = n > 2 ? 6 : 7;  // ports minus neighbour links
    ASSERT_EQ(t.hosts, n * per) << n;
    ASSERT_EQ(static_cast<int>(t.wires.size()), n - 1);
    for (int s = 0; s < t.hosts; ++s)
      for (int d = 0; d < t.hosts; ++d) {
        const auto path = walk(t, s, d);
        const int from = s / per, to = d / per;
        ASSERT_EQ(static_cast<int>(path.size()), std::abs(from - to) + 1) << s << "->" << d;
        EXPECT_EQ(path.front(), from);
        EXPECT_EQ(path.back(), to);
      }
  }
}

TEST(Topology, LeafSpineTakesOneOrThreeHopsAndEveryLinkIsDistinct) {
  TopologyConfig c = make("leaf_spine");
  c.leaves = 4;
  c.spines = 3;
  c.hosts_per_leaf = 5;
  const Topology t = build_topology(c, 8, 1);
  ASSERT_EQ(t.switches(), 7);
  ASSERT_EQ(t.hosts, 20);
  ASSERT_EQ(static_cast<int>(t.wires.size()), 12);
  std::set<std::pair<int, int>> used;
  for (const auto& w : t.wires) {
    EXPECT_TRUE(used.insert({w.a.sw, w.a.port}).second);
    EXPECT_TRUE(used.insert({w.b.sw, w.b.port}).second);
  }
  for (const auto& hp : t.host_port) EXPECT_TRUE(used.insert({hp.sw, hp.port}).second);
  for (int s = 0; s < t.hosts; ++s)
    for (int d = 0; d < t.hosts; ++d) {
      const auto path = walk(t, s, d);
      const bool local = s / 5 == d / 5;
      ASSERT_EQ(path.size(), local ? 1u : 3u) << s << "->" << d;
      if (!local) {
        EXPECT_GE(path[1], 4);  // through a spine
      }
    }
}

TEST(Topology, EcmpSpreadsFlowsEvenlyOverTheSpines) {
  // 64 hosts per leaf, 4 spines: 64 x 192 = 12,288 remote flows from leaf 0. Each spine's share
  // is binomial(12288, 1/4): sd = 48 flows, so +-5% (154 flows, > 3 sd) holds for a good hash.
  TopologyConfig c = make("leaf_spine");
  c.leaves = 4;
  c.spines = 4;
  const Topology t = build_topology(c, 68, 7);
  std::map<int, int> per_spine;
  int flows = 0;
  for (int s = 0; s < 64; ++s)
    for (int d = 64; d < t.hosts; ++d) {
      ++per_spine[walk(t, s, d).at(1)];
      ++flows;
    }
  ASSERT_EQ(per_spine.size(), 4u);
  for (auto [spine, n] : per_spine) EXPECT_NEAR(n, flows / 4.0, flows / 4.0 * 0.05) << spine;
  // A flow always takes the same path.
  EXPECT_EQ(walk(t, 3, 100), walk(t, 3, 100));
}

}  // namespace
}  // namespace fabricsim::topo
