// Aggregation units in the topology (models/topology/aggregation_nodes.h): each on its switch's
// highest spare port, reachable from every host and unit by a minimal route, the tree of units
// along the topology, and the refusals (no spare port, rail-only routing).
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/topology/aggregation_nodes.h"
#include "testbenches/unit/topology_walk.h"

namespace fabricsim::topo {
namespace {

using testing::walk;  // the switches a packet visits (testbenches/unit/topology_walk.h)

Topology leaf_spine(int ports = 8) {
  TopologyConfig c;
  c.kind = "leaf_spine";
  c.leaves = 4;
  c.spines = 3;
  c.hosts_per_leaf = 4;
  return build_topology(c, ports, 1);
}

TEST(AggregationNodes, OneUnitPerSwitchOnASparePortWithMinimalRoutes) {
  Topology t = leaf_spine();
  const Topology before = t;
  add_aggregation_nodes(t, std::vector<bool>(7, true));
  ASSERT_EQ(t.hosts, 16 + 7);
  EXPECT_EQ(t.job_hosts(), 16);
  for (int s = 0; s < 7; ++s) {
    const int h = t.aggregation_host[s];
    ASSERT_EQ(h, 16 + s);
    EXPECT_EQ(t.host_port[h].sw, s);
    // Leaves: 4 hosts + 3 uplinks on ports 0-6, the unit on 7; spines: 4 leaves, the unit on 7.
    EXPECT_EQ(t.host_port[h].port, 7);
  }
  // The hosts' routes are as before; every host reaches every unit in minimal hops.
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b) EXPECT_EQ(walk(t, a, b), walk(before, a, b));
  for (int a = 0; a < t.hosts; ++a)
    for (int s = 0; s < 7; ++s) {
      const auto path = walk(t, a, t.aggregation_host[s]);
      ASSERT_FALSE(path.empty()) << a << " -> unit " << s;
      const int from = t.host_port[a].sw;
      const size_t hops = from == s ? 1 : (from < 4) == (s < 4) ? 3 : 2;
      EXPECT_EQ(path.size(), hops) << a << " -> unit " << s;
    }
}

TEST(AggregationNodes, TheTreeRunsFromTheFirstSpine) {
  Topology t = leaf_spine();
  add_aggregation_nodes(t, std::vector<bool>(7, true));
  const std::vector<int> up = aggregation_parents(t);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(up[s], 4) << s;  // every leaf under spine 4, the root
  EXPECT_EQ(up[4], -1);
  // The other spines hang under leaf 0 (breadth-first), with no host below: never used.
  EXPECT_EQ(up[5], 0);
  EXPECT_EQ(up[6], 0);
  // Without units on the spines the root is leaf 0's, the other leaves' under it (through a
  // spine that does not reduce).
  Topology u = leaf_spine();
  add_aggregation_nodes(u, {true, true, true, true, false, false, false});
  EXPECT_EQ(aggregation_parents(u), (std::vector<int>{-1, 0, 0, 0, -1, -1, -1}));
}

TEST(AggregationNodes, RefusesAFullChipAndRailOnlyRouting) {
  Topology t = leaf_spine(7);  // leaves: 4 hosts + 3 uplinks, no port left
  try {
    add_aggregation_nodes(t, std::vector<bool>(7, true));
    FAIL() << "no refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no spare port"), std::string::npos) << e.what();
  }
  TopologyConfig c;
  c.kind = "rail_only";
  Topology r = build_topology(c, 16, 1);
  EXPECT_THROW(add_aggregation_nodes(r, std::vector<bool>(static_cast<size_t>(r.switches()), true)),
               std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim::topo
