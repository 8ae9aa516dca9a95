// Bisection bandwidth (models/topology/bisection.h) against the closed forms of the kinds
// (docs/topologies.md): a single switch and a k-ary fat tree give full bisection, hosts/2 x B; a
// 2:1 oversubscribed leaf-spine half of it; a line one link; a dragonfly of g groups (g even)
// (g/2)^2 global links; a rail-only network none (its rails are not joined). The maximum flow
// itself against a network whose minimum cut is known.
#include "models/topology/bisection.h"

#include <chrono>
#include <cstdio>
#include <tuple>

#include <gtest/gtest.h>

#include "models/topology/registry.h"

namespace fabricsim::topo {
namespace {

constexpr uint64_t kB = 400000000000ull;  // 400 Gb/s ports

TopologyConfig make(const std::string& kind) {
  TopologyConfig c;
  c.kind = kind;
  return c;
}

Bisection of(const Topology& t, uint64_t bps = kB) {
  return bisection(t, std::vector<uint64_t>(static_cast<size_t>(t.switches()), bps));
}

TEST(TopologyBisection, MaxFlowFindsTheMinimumCut) {
  // Two disjoint paths of capacities 3 and 5 and a cross edge 2 between their middles: the cut
  // {s-a, s-b} = 3 + 4 = 7 is smaller than {a-t, b-t} = 5 + 9 = 14.
  //   s -3- a -5- t,  s -4- b -9- t,  a -2- b
  const std::vector<std::tuple<int, int, uint64_t>> e = {
      {0, 1, 3}, {1, 3, 5}, {0, 2, 4}, {2, 3, 9}, {1, 2, 2}};
  EXPECT_EQ(max_flow(4, e, 0, 3), 7u);
  // Narrow a-t to 1: the cut {a-t, b-t} is then 1 + 9 = 10, {s-a, s-b} still 7; but a's
  // excess must cross a-b (2) to reach t: min cut {a-t, a-b, s-b} = 1 + 2 + 4 = 7.
  auto e2 = e;
  std::get<2>(e2[1]) = 1;
  EXPECT_EQ(max_flow(4, e2, 0, 3), 7u);
  std::get<2>(e2[2]) = 1;  // s-b 1: {a-t, a-b, s-b} = 4
  EXPECT_EQ(max_flow(4, e2, 0, 3), 4u);
  EXPECT_EQ(max_flow(4, {{0, 1, 5}}, 0, 3), 0u);  // t unreachable
}

TEST(TopologyBisection, SingleSwitchIsFullBisection) {
  const Topology t = build_topology(make("single"), 64, 1);
  const Bisection b = of(t);
  EXPECT_EQ(b.bps, 32 * kB);
  EXPECT_EQ(b.full_bps, 32 * kB);
}

TEST(TopologyBisection, FatTreeIsFullBisection) {
  // k^3/4 hosts x B / 2, for every k, with one or two links per pair.
  for (auto [k, m] : {std::pair{4, 1}, {6, 1}, {8, 1}, {4, 2}, {16, 1}}) {
    TopologyConfig c = make("fat_tree");
    c.k = k;
    c.links_per_pair = m;
    const Topology t = build_topology(c, k * m, 1);
    const Bisection b = of(t);
    const uint64_t full = static_cast<uint64_t>(k) * k * k / 4 * kB / 2;
    EXPECT_EQ(b.full_bps, full) << k;
    EXPECT_EQ(b.bps, full) << k << " x" << m;
  }
}

TEST(TopologyBisection, FatTreeWithoutItsCoreHasNone) {
  // The cut is what the links carry: take the core's wires out and the pods are cut apart.
  TopologyConfig c = make("fat_tree");
  c.k = 4;
  Topology t = build_topology(c, 4, 1);
  std::vector<Wire> kept;
  for (const Wire& w : t.wires)
    if (t.switch_group[w.a.sw] >= 0 && t.switch_group[w.b.sw] >= 0) kept.push_back(w);
  ASSERT_LT(kept.size(), t.wires.size());
  t.wires = kept;
  EXPECT_EQ(of(t).bps, 0u);
}

TEST(TopologyBisection, OversubscribedLeafSpineIsAFractionOfFull) {
  // 4 leaves, 2 spines, m links per pair: H hosts a leaf against 2m uplinks. Halving the leaves
  // cuts 2 leaves' uplinks: 2 x 2m x B; full is 4H/2 x B.
  for (auto [h, m, ratio] : {std::tuple{4, 1, 0.5}, {2, 1, 1.0}, {8, 2, 0.5}, {12, 2, 1.0 / 3}}) {
    TopologyConfig c = make("leaf_spine");
    c.leaves = 4;
    c.spines = 2;
    c.links_per_pair = m;
    c.hosts_per_leaf = h;
    const Topology t = build_topology(c, 16, 1);
    const Bisection b = of(t);
    EXPECT_EQ(b.full_bps, static_cast<uint64_t>(2 * h) * kB);
    EXPECT_EQ(b.bps, std::min(2 * 2 * m, 2 * h) * kB) << h << " " << m;
    EXPECT_DOUBLE_EQ(static_cast<double>(b.bps) / b.full_bps, ratio);
    EXPECT_EQ(b.split, "by host number");
  }
}

TEST(TopologyBisection, LineIsOneLinkAndRailOnlyNone) {
  TopologyConfig c = make("line");
  c.switches = 4;
  c.hosts_per_switch = 3;
  EXPECT_EQ(of(build_topology(c, 8, 1)).bps, kB);
  // Rails are not joined: halving by rail cuts nothing.
  TopologyConfig r = make("rail_only");
  r.servers = 6;
  r.gpus_per_server = 4;
  const Bisection b = of(build_topology(r, 8, 1));
  EXPECT_EQ(b.bps, 0u);
  EXPECT_EQ(b.split, "by group");
  EXPECT_EQ(b.full_bps, 12 * kB);
}

TEST(TopologyBisection, DragonflyCutsTheGlobalLinksBetweenHalves) {
  // g groups (even), one global link per pair: (g/2)^2 of them join the halves, when fewer than
  // the hosts of a half.
  for (auto [a, p, h, g] : {std::tuple{4, 2, 2, 8}, {4, 4, 2, 6}, {2, 4, 3, 6}}) {
    TopologyConfig c = make("dragonfly");
    c.routers_per_group = a;
    c.hosts_per_router = p;
    c.global_links = h;
    c.groups = g;
    const Topology t = build_topology(c, p + a - 1 + h, 1);
    const uint64_t hosts = static_cast<uint64_t>(g) * a * p;
    EXPECT_EQ(of(t).bps, std::min<uint64_t>((g / 2) * (g / 2), hosts / 2) * kB) << a << p << h << g;
  }
}

TEST(TopologyBisection, CostGrowsWithTheNetlist) {
  // A k = 24 fat tree: 3,456 hosts, 720 switches, 6,912 wires. A handful of Dinic phases (k = 32,
  // 8,192 hosts: 1 phase, 0.4 ms; building its tables takes the seconds).
  TopologyConfig c = make("fat_tree");
  c.k = 24;
  const Topology t = build_topology(c, 24, 1);
  const auto t0 = std::chrono::steady_clock::now();
  const Bisection b = of(t);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(b.bps, 24 * 24 * 24 / 8 * kB);
  EXPECT_LE(b.phases, 8);
  RecordProperty("phases", b.phases);
  RecordProperty("ms", std::to_string(ms));
  std::printf("k = 24 fat tree: %d phases, %.1f ms\n", b.phases, ms);
}

}  // namespace
}  // namespace fabricsim::topo
