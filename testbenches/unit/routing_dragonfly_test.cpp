// Dragonfly non-minimal routing (switch.routing.mode valiant / ugal, LoadBalancer::route) on the
// real dragonfly wiring, without the SystemC kernel: packets are walked router by router through
// the topology's wires, each router deciding with its own LoadBalancer.
#include <algorithm>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/error.h"
#include "models/switch/load_balancer.h"
#include "models/switch/switch_config.h"
#include "models/topology/topology.h"

namespace fabricsim::sw {
namespace {

using topo::PortRef;
using topo::Topology;

RoutingConfig routing(std::vector<std::string> o) {
  SwitchConfig cfg;
  config::load(cfg, "", o);
  return cfg.routing;
}

Topology dragonfly(int a, int p, int h, int groups = 0) {
  topo::TopologyConfig c;
  c.kind = "dragonfly";
  c.routers_per_group = a;
  c.hosts_per_router = p;
  c.global_links = h;
  c.groups = groups;
  return topo::build_topology(c, p + a - 1 + h, 1);
}

// A fabric of one LoadBalancer per router, and the walk of a packet through it.
struct Fabric {
  const Topology& t;
  std::vector<LoadBalancer> lb;
  std::map<std::pair<int, int>, int> peer;  // (switch, port) -> switch at the other end
  std::vector<std::vector<int64_t>> cells;  // per switch, the cells held per egress port

  Fabric(const Topology& topo, const RoutingConfig& cfg) : t(topo) {
    for (int s = 0; s < t.switches(); ++s) lb.emplace_back(cfg, t.tables[s], 254);
    for (const topo::Wire& w : t.wires) {
      peer[{w.a.sw, w.a.port}] = w.b.sw;
      peer[{w.b.sw, w.b.port}] = w.a.sw;
    }
    for (int s = 0; s < t.switches(); ++s) cells.emplace_back(t.switch_ports[s], 0);
  }

  // The routers the packet visits, from its source's to its destination's.
  std::vector<int> walk(Packet p) {
    std::vector<int> path{t.host_port[p.src].sw};
    for (int guard = 0; guard < 10; ++guard) {
      const int s = path.back();
      const ForwardingTable::Group g = t.tables[s].group(p.dst);
      EXPECT_EQ(g.count, 1u);  // a dragonfly has no ECMP groups
      const int out = lb[s].route(p, g.ports[0], cells[s].data());
      if (s == t.host_port[p.dst].sw && out == t.host_port[p.dst].port) {
        EXPECT_EQ(p.via, -1) << "delivered with an intermediate group still set";
        return path;
      }
      const auto it = peer.find({s, out});
      if (it == peer.end()) {
        ADD_FAILURE() << "router " << s << " sent to port " << out << ", which has no wire";
        return path;
      }
      path.push_back(it->second);
    }
    ADD_FAILURE() << "no delivery within 10 routers";
    return path;
  }
};

Packet pkt(int src, int dst, uint64_t id) {
  Packet p;
  p.id = id;
  p.src = src;
  p.dst = dst;
  p.size = Bytes(4096);
  return p;
}

TEST(DragonflyRouting, HopsMatchTheMinimalTables) {
  // DragonflyGroups::hops (what UGAL weighs) equals the links of the tables' minimal path.
  const Topology t = dragonfly(4, 2, 2);
  Fabric f(t, routing({"routing.mode=ecmp"}));
  const DragonflyGroups& d = *t.tables[0].dragonfly();
  for (int src = 0; src < t.hosts; ++src)
    for (int dst = 0; dst < t.hosts; ++dst) {
      int s = t.host_port[src].sw, links = 0;
      while (s != t.host_port[dst].sw) {
        s = f.peer.at({s, t.tables[s].group(dst).ports[0]});
        ++links;
      }
      ASSERT_EQ(d.hops(t.host_port[src].sw, dst), links) << src << "->" << dst;
    }
}

TEST(DragonflyRouting, ValiantGoesThroughOneRandomIntermediateGroup) {
  const Topology t = dragonfly(4, 2, 2);  // 9 groups, 36 routers, 72 hosts
  const int g = 9;
  Fabric f(t, routing({"routing.mode=valiant"}));
  std::vector<int> via_count(g, 0);
  uint64_t id = 0, inter = 0;
  for (int src = 0; src < t.hosts; ++src)
    for (int dst = 0; dst < t.hosts; ++dst) {
      const int sg = t.host_group[src], dg = t.host_group[dst];
      for (int k = 0; k < 8; ++k) {
        const std::vector<int> path = f.walk(pkt(src, dst, id++));
        // The groups visited, in order, without repeats of consecutive routers' group.
        std::vector<int> groups;
        for (int s : path)
          if (groups.empty() || groups.back() != t.switch_group[s])
            groups.push_back(t.switch_group[s]);
        const int links = static_cast<int>(path.size()) - 1;
        if (sg == dg) {
          ASSERT_EQ(groups, std::vector<int>{sg});  // same group: minimal, at most one local link
          ASSERT_LE(links, 1);
          continue;
        }
        ++inter;
        ASSERT_EQ(groups.size(), 3u) << src << "->" << dst;
        ASSERT_EQ(groups[0], sg);
        ASSERT_EQ(groups[2], dg);
        ASSERT_NE(groups[1], sg);
        ASSERT_NE(groups[1], dg);
        ++via_count[groups[1]];
        // Minimal into I (<= 2 links), then I's entry router's minimal path (<= 3): <= 5 links,
        // exactly what UGAL counts.
        const DragonflyGroups& d = *t.tables[0].dragonfly();
        const int s0 = path.front();
        ASSERT_EQ(links, d.hops_to_group(s0, groups[1]) + d.hops(d.entry(groups[1], sg), dst));
        ASSERT_LE(links, 5);
      }
    }
  // Every packet between groups took a Valiant path, counted at its source router.
  uint64_t decided = 0, non_minimal = 0;
  for (const LoadBalancer& b : f.lb) {
    decided += b.inter_group_packets();
    non_minimal += b.non_minimal_packets();
  }
  EXPECT_EQ(decided, inter);
  EXPECT_EQ(non_minimal, inter);
  // Intermediate groups are uniform: each group is the intermediate of the pairs that exclude
  // it, 1/7 of them; inter = 72 x 64 x 8 = 36864, so each expects 36864 x 7/9 / 7 = 4096
  // (std ~60); 5% is > 3 sigma.
  for (int x = 0; x < g; ++x) EXPECT_NEAR(via_count[x], 4096, 205) << "group " << x;
}

TEST(DragonflyRouting, ValiantIsDeterministicPerPacketAndSeed) {
  const Topology t = dragonfly(4, 2, 2);
  Fabric a(t, routing({"routing.mode=valiant"})), b(t, routing({"routing.mode=valiant"}));
  Fabric c(t, routing({"routing.mode=valiant", "routing.hash_seed=7"}));
  int differ = 0;
  for (uint64_t id = 0; id < 200; ++id) {
    const Packet p = pkt(3, 70, id);
    const auto pa = a.walk(p);
    ASSERT_EQ(pa, b.walk(p));
    differ += pa != c.walk(p);
  }
  EXPECT_GT(differ, 100);  // another seed draws other intermediates (same with p 1/7)
}

TEST(DragonflyRouting, TwoGroupsHaveNoIntermediateAndGoMinimal) {
  const Topology t = dragonfly(2, 1, 1, 2);
  Fabric f(t, routing({"routing.mode=valiant"}));
  for (int src = 0; src < t.hosts; ++src)
    for (int dst = 0; dst < t.hosts; ++dst)
      EXPECT_EQ(f.walk(pkt(src, dst, 1)).size() - 1,
                static_cast<size_t>(t.tables[0].dragonfly()->hops(t.host_port[src].sw, dst)));
}

TEST(DragonflyRouting, UgalComparesQueueTimesHopsWithTheThreshold) {
  const Topology t = dragonfly(4, 2, 2);
  const DragonflyGroups& d = *t.tables[0].dragonfly();
  // Host 2 is on router 1 of group 0; host 70 on router 3 of group 8.
  const int src = 2, dst = 70, s = t.host_port[src].sw;
  const int minimal = t.tables[s].group(dst).ports[0];
  ASSERT_EQ(d.hops(s, dst), 3);  // local, global, local
  Fabric v(t, routing({"routing.mode=valiant"}));
  for (int64_t threshold : {0, 5}) {
    // 5 cells given as 1170 B (rounded up to whole 254 B cells); 0 is the default.
    Fabric f(t, threshold == 0 ? routing({"routing.mode=ugal"})
                               : routing({"routing.mode=ugal",
                                          "routing.ugal_threshold=" +
                                              std::to_string(threshold * 254 - 100) + "B"}));
    int checked = 0;
    for (uint64_t id = 0; id < 100; ++id) {
      // Idle queues: always minimal (0 <= 0 + T).
      Packet p = pkt(src, dst, id);
      ASSERT_EQ(f.lb[s].route(p, minimal, f.cells[s].data()), minimal);
      ASSERT_EQ(p.via, -1);
      // The Valiant candidate: valiant's draw on the same router (same salt, same packet id).
      Packet q = pkt(src, dst, id);
      const int vport = v.lb[s].route(q, minimal, v.cells[s].data());
      const int I = q.via;
      ASSERT_GE(I, 0);
      const int64_t hm = 3, hv = d.hops_to_group(s, I) + d.hops(d.entry(I, 0), dst);
      ASSERT_GE(hv, 2);
      ASSERT_LE(hv, 5);
      if (vport == minimal) continue;  // the same first port: nothing to compare
      ++checked;
      // The rule, cell by cell: Valiant iff q_min * H_min > q_val * H_val + T (T in whole cells,
      // rounded up).
      for (int64_t qv : {0, 3, 10})
        for (int64_t qm = 0; qm < 80; ++qm) {
          std::fill(f.cells[s].begin(), f.cells[s].end(), 0);
          f.cells[s][vport] = qv;
          f.cells[s][minimal] = qm;
          Packet r = pkt(src, dst, id);
          const bool valiant = qm * hm > qv * hv + threshold;
          ASSERT_EQ(f.lb[s].route(r, minimal, f.cells[s].data()), valiant ? vport : minimal)
              << "id " << id << " q_min " << qm << " q_val " << qv << " H_val " << hv;
          ASSERT_EQ(r.via, valiant ? I : -1);
        }
      std::fill(f.cells[s].begin(), f.cells[s].end(), 0);
    }
    EXPECT_GT(checked, 50);
  }
  // Off the source router nothing is decided: a packet without an intermediate goes minimally
  // whatever the queues.
  Fabric f(t, routing({"routing.mode=ugal"}));
  const int other = t.host_port[5].sw;  // router 2 of group 0
  f.cells[other][t.tables[other].group(dst).ports[0]] = 1000;
  Packet p = pkt(src, dst, 1);
  EXPECT_EQ(f.lb[other].route(p, t.tables[other].group(dst).ports[0], f.cells[other].data()),
            t.tables[other].group(dst).ports[0]);
  EXPECT_EQ(f.lb[other].inter_group_packets(), 0u);
}

TEST(DragonflyRouting, RefusedWithoutADragonfly) {
  ForwardingTable plain = ForwardingTable::identity(8);
  EXPECT_THROW(LoadBalancer(routing({"routing.mode=valiant"}), plain), InputError);
  EXPECT_THROW(LoadBalancer(routing({"routing.mode=ugal"}), plain), InputError);
  EXPECT_NO_THROW(LoadBalancer(routing({"routing.mode=ecmp"}), plain));
}

}  // namespace
}  // namespace fabricsim::sw
