// Multi-chip boxes (models/topology/box.h, models/sim/box_config.h): the expansion of a box into
// its chips (front-panel port map, internal wires, forwarding: every pair of hosts reaches its
// destination through one or three chips of each box), and the refusal of box specs the chips
// cannot build (exit 2 naming the key).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/sim/run_config.h"
#include "models/topology/box.h"
#include "testbenches/unit/check_command.h"

namespace fabricsim {
namespace {

using ::testing::HasSubstr;
using topo::BoxSpec;
using topo::PortRef;
using topo::Topology;

// 8-port chips, 2 leaves and 2 spines, 2 links per pair: 4 front ports per leaf, 8 per box.
BoxSpec small_box() {
  BoxSpec b;
  b.leaves = 2;
  b.spines = 2;
  b.links_per_pair = 2;
  b.front_ports = 8;
  b.chip_ports = 8;
  return b;
}

topo::TopologyConfig kind(const std::string& k) {
  topo::TopologyConfig c;
  c.kind = k;
  return c;
}

// Every path (every ECMP member) from host src to host dst: the chips crossed, per path; fails
// the test on a loop, a dead end or a wrong host.
std::vector<int> path_lengths(const Topology& t, int src, int dst) {
  std::map<std::pair<int, int>, PortRef> peer;
  for (const auto& w : t.wires) {
    peer[{w.a.sw, w.a.port}] = w.b;
    peer[{w.b.sw, w.b.port}] = w.a;
  }
  std::vector<int> lengths;
  std::vector<std::pair<int, int>> frontier{{t.host_port[src].sw, 1}};
  while (!frontier.empty()) {
    const auto [sw, hops] = frontier.back();
    frontier.pop_back();
    if (hops > t.switches()) {
      ADD_FAILURE() << "loop from host " << src << " to " << dst;
      return lengths;
    }
    const auto& g = t.route(sw, dst);
    if (g.empty()) ADD_FAILURE() << "no route at " << t.switch_names[sw] << " to " << dst;
    for (int p : g) {
      const auto it = peer.find({sw, p});
      if (it != peer.end()) {
        frontier.push_back({it->second.sw, hops + 1});
        continue;
      }
      const PortRef want = t.host_port[dst];
      EXPECT_TRUE(want.sw == sw && want.port == p)
          << t.switch_names[sw] << " port " << p << " is not host " << dst << "'s";
      lengths.push_back(hops);
    }
  }
  return lengths;
}

TEST(Box, SingleBoxPortMapWiresAndRoutes) {
  const Topology t = topo::build_topology(kind("single"), 8, 1, {small_box()});
  ASSERT_EQ(t.switches(), 4);
  EXPECT_EQ(t.switch_names, (std::vector<std::string>{"switch.leaf0", "switch.leaf1",
                                                      "switch.spine0", "switch.spine1"}));
  EXPECT_EQ(t.switch_box, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(t.switch_ports, (std::vector<int>{8, 8, 8, 8}));
  ASSERT_EQ(t.boxes.size(), 1u);
  EXPECT_EQ(t.boxes[0].name, "switch");
  EXPECT_EQ(t.boxes[0].chips, (std::vector<int>{0, 1, 2, 3}));
  // Front port p (host p of `single`) is leaf p / 4's port p % 4.
  ASSERT_EQ(t.hosts, 8);
  for (int h = 0; h < 8; ++h) {
    EXPECT_EQ(t.host_port[h].sw, h / 4);
    EXPECT_EQ(t.host_port[h].port, h % 4);
    EXPECT_EQ(t.boxes[0].front[h].sw, h / 4);
    EXPECT_EQ(t.boxes[0].front[h].port, h % 4);
  }
  // Leaf l port 4 + 2s + j <-> spine s port 2l + j, all internal.
  ASSERT_EQ(t.wires.size(), 8u);
  std::set<std::pair<std::pair<int, int>, std::pair<int, int>>> wires;
  for (const auto& w : t.wires) {
    EXPECT_EQ(w.box, 0);
    wires.insert({{w.a.sw, w.a.port}, {w.b.sw, w.b.port}});
  }
  for (int l = 0; l < 2; ++l)
    for (int s = 0; s < 2; ++s)
      for (int j = 0; j < 2; ++j)
        EXPECT_EQ(wires.count({{l, 4 + 2 * s + j}, {2 + s, 2 * l + j}}), 1u) << l << s << j;
  // A leaf: its own front port, or ECMP over all four uplinks; a spine: the two links down to
  // the destination's leaf.
  EXPECT_EQ(t.route(0, 1), (std::vector<int>{1}));
  EXPECT_EQ(t.route(0, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(t.route(1, 5), (std::vector<int>{1}));
  EXPECT_EQ(t.route(2, 5), (std::vector<int>{2, 3}));
  EXPECT_EQ(t.route(3, 1), (std::vector<int>{0, 1}));
  // Every pair: one chip on a leaf, three (leaf, spine, leaf) across.
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      for (int n : path_lengths(t, a, b)) EXPECT_EQ(n, a / 4 == b / 4 ? 1 : 3) << a << "->" << b;
    }
  EXPECT_EQ(t.max_switch_hops, 3);
}

// A mesh box (spines 0): 3 leaves of 8 ports, 2 links between every pair, 4 front ports each.
// Leaf l's ports 4.. go to the other leaves in order (2 each); a packet crosses 2 chips.
TEST(Box, MeshBoxJoinsTheLeavesDirectly) {
  BoxSpec b;
  b.leaves = 3;
  b.spines = 0;
  b.links_per_pair = 2;
  b.front_ports = 12;
  b.chip_ports = 8;
  const Topology t = topo::build_topology(kind("single"), 12, 1, {b});
  ASSERT_EQ(t.switches(), 3);
  EXPECT_EQ(t.switch_names,
            (std::vector<std::string>{"switch.leaf0", "switch.leaf1", "switch.leaf2"}));
  ASSERT_EQ(t.wires.size(), 6u);  // 3 pairs x 2 links
  std::set<std::pair<std::pair<int, int>, std::pair<int, int>>> wires;
  for (const auto& w : t.wires) wires.insert({{w.a.sw, w.a.port}, {w.b.sw, w.b.port}});
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(wires.count({{0, 4 + j}, {1, 4 + j}}), 1u);  // 0 -> 1: 0's first pair, 1's first
    EXPECT_EQ(wires.count({{0, 6 + j}, {2, 4 + j}}), 1u);  // 0 -> 2: 0's second, 2's first
    EXPECT_EQ(wires.count({{1, 6 + j}, {2, 6 + j}}), 1u);  // 1 -> 2: second pairs
  }
  EXPECT_EQ(t.route(0, 1), (std::vector<int>{1}));
  EXPECT_EQ(t.route(0, 9), (std::vector<int>{6, 7}));  // host 9 is on leaf 2
  EXPECT_EQ(t.route(2, 5), (std::vector<int>{6, 7}));  // host 5 is on leaf 1
  for (int a = 0; a < 12; ++a)
    for (int d = 0; d < 12; ++d) {
      if (a == d) continue;
      for (int n : path_lengths(t, a, d)) EXPECT_EQ(n, a / 4 == d / 4 ? 1 : 2) << a << "->" << d;
    }
  EXPECT_EQ(t.max_switch_hops, 2);
}

TEST(Box, BoxesAsSpinesOfALeafSpine) {
  // Two 8-port leaves (4 hosts, 2 uplinks each: one per spine box) and two spine boxes of 8
  // front ports: the topology's wires land on the boxes' leaf chips.
  topo::TopologyConfig c = kind("leaf_spine");
  c.leaves = 2;
  c.spines = 2;
  c.hosts_per_leaf = 4;
  std::vector<BoxSpec> tiers{BoxSpec{}, small_box()};
  const Topology t = topo::build_topology(c, topo::TierPorts(8), 7, tiers);
  ASSERT_EQ(t.switches(), 2 + 2 * 4);
  EXPECT_EQ(t.switch_names[2], "spine0.leaf0");
  EXPECT_EQ(t.switch_names[9], "spine1.spine1");
  EXPECT_EQ(t.switch_box, (std::vector<int>{-1, -1, 0, 0, 0, 0, 1, 1, 1, 1}));
  // leaf1's uplink to spine box 0 (box port 1) is that box's leaf0 port 1.
  bool found = false;
  for (const auto& w : t.wires)
    found = found || (w.a.sw == 1 && w.a.port == 4 && w.b.sw == 2 && w.b.port == 1 && w.box < 0);
  EXPECT_TRUE(found);
  // Across the leaves: leaf, then 1 chip of a box (both box ports on leaf chip 0), then leaf.
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      for (int n : path_lengths(t, a, b)) EXPECT_EQ(n, a / 4 == b / 4 ? 1 : 3);
    }
  // With one front port per box leaf chip the path crosses the box's spine: 5 chips.
  BoxSpec wide = small_box();
  wide.front_ports = 2;  // 1 per leaf chip
  tiers[1] = wide;
  const Topology u = topo::build_topology(c, topo::TierPorts(8), 7, tiers);
  for (int n : path_lengths(u, 0, 7)) EXPECT_EQ(n, 5);
  EXPECT_EQ(u.max_switch_hops, 5);
  // Tables of the plain leaves are those of the topology without boxes (same names, seeds).
  const Topology plain = topo::build_topology(c, topo::TierPorts(8), 7);
  EXPECT_EQ(t.route(0, 6), plain.route(0, 6));
}

// The command's side: `fabricsim check` on the shipped box with --set overrides.
using unit::Command;
Command check(const std::vector<std::string>& sets) {
  std::vector<std::string> args;
  for (const std::string& s : sets) args.push_back("--set " + s);
  return unit::run_check(std::string(FABRICSIM_SOURCE_DIR) + "/configs/examples/box_102t4.yaml",
                         args);
}

TEST(Box, ShippedExampleLoadsAndBuilds) {
  const sim::RunConfig cfg = sim::RunConfig::load(
      std::string(FABRICSIM_SOURCE_DIR) + "/configs/examples/box_102t4.yaml", {});
  const auto specs = cfg.box_specs();
  ASSERT_FALSE(specs.empty());
  const Topology t = topo::build_topology(cfg.topology, cfg.tier_ports(), 1, specs);
  ASSERT_FALSE(t.boxes.empty());
  const BoxSpec& b = t.boxes[0].spec;
  EXPECT_EQ(b.chips(), 4);
  EXPECT_EQ(b.chip_ports, 64);
  EXPECT_EQ(static_cast<int>(t.boxes[0].front.size()), b.front_ports);
  EXPECT_EQ(check({}).rc, 0) << check({}).err;
}

TEST(Box, BadSpecsAreRefusedNamingTheKey) {
  const std::string k = "switch_kinds[0].box.";
  const std::vector<std::pair<std::string, std::string>> bad{
      {k + "leaves=1", k + "leaves"},
      {k + "links_per_pair=40", k + "links_per_pair"},
      {k + "front_ports=63", k + "front_ports"},
      {k + "front_ports=200", k + "front_ports"},
      {k + "chip=nope", k + "chip"},
  };
  for (const auto& [set, key] : bad) {
    const Command c = check({set});
    EXPECT_EQ(c.rc, 2) << set << ": " << c.err;
    EXPECT_THAT(c.err, HasSubstr(key)) << set;
  }
}

}  // namespace
}  // namespace fabricsim
