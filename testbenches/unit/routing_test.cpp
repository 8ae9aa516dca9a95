// Load balancing over ECMP groups (LoadBalancer, switch.routing) and the receivers' reorder
// count, without the SystemC kernel.
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "models/switch/load_balancer.h"
#include "models/switch/switch_core.h"
#include "models/traffic/reorder_counter.h"

namespace fabricsim::sw {
namespace {

RoutingConfig routing(std::vector<std::string> o = {}) {
  // Loaded through the switch section, so the defaults and checks are the real ones.
  SwitchConfig cfg;
  config::load(cfg, "", o);
  return cfg.routing;
}

Packet pkt(int src, int dst, int tc = 0, uint64_t id = 0) {
  Packet p;
  p.id = id;
  p.src = src;
  p.dst = dst;
  p.tc = tc;
  p.size = Bytes(1000);
  return p;
}

// 64 destinations; destination d < 8 on port d, the others over the group {8, 9, 10, 11}.
ForwardingTable leaf_table(uint64_t salt = 0x1234567887654321ULL) {
  ForwardingTable t(64, salt);
  for (int d = 0; d < 64; ++d)
    t.set(d, d < 8 ? std::vector<int>{d} : std::vector<int>{8, 9, 10, 11});
  return t;
}

const std::vector<int64_t> kIdle(16, 0);

TEST(Routing, DefaultIsTheTablesSaltedSourceDestinationHash) {
  const auto cfg = routing();
  EXPECT_EQ(cfg.mode, "ecmp");
  EXPECT_EQ(cfg.hash_field_mask(), kHashSrc | kHashDst);
  const ForwardingTable t = leaf_table();
  LoadBalancer lb(cfg, t);
  std::set<int> used;
  for (int s = 0; s < 64; ++s)
    for (int d = 8; d < 64; ++d)
      for (int tc = 0; tc < 3; ++tc) {
        const Packet p = pkt(s, d, tc);
        const int port = lb.pick(p, t.group(d), Time(), kIdle.data());
        ASSERT_EQ(port, t.lookup(p)) << s << "->" << d;
        used.insert(port);
      }
  EXPECT_EQ(used, (std::set<int>{8, 9, 10, 11}));
  EXPECT_EQ(lb.multipath_packets(), 0u);  // ecmp needs no state and counts nothing
}

TEST(Routing, DestinationsWithTheSamePortsShareOneList) {
  // leaf_table: 56 destinations over {8, 9, 10, 11}, eight over a port each. Equal lists are
  // stored once (a fat tree's 4,096-host tables held a copy per destination: 1 GB at k = 32);
  // every destination still reads its own ports, and a list set again replaces its entry.
  ForwardingTable t = leaf_table();
  for (int d = 9; d < 64; ++d) EXPECT_EQ(t.group(d).ports, t.group(8).ports) << d;
  for (int d = 0; d < 8; ++d) {
    const ForwardingTable::Group g = t.group(d);
    ASSERT_EQ(g.count, 1u);
    EXPECT_EQ(g.ports[0], d);
    EXPECT_NE(g.ports, t.group(8).ports);
  }
  const ForwardingTable::Group up = t.group(40);
  ASSERT_EQ(up.count, 4u);
  EXPECT_EQ(std::vector<int>(up.ports, up.ports + 4), (std::vector<int>{8, 9, 10, 11}));
  t.set(40, {9, 10});  // a different list: its own copy, the others unchanged
  EXPECT_EQ(std::vector<int>(t.group(40).ports, t.group(40).ports + 2), (std::vector<int>{9, 10}));
  EXPECT_EQ(std::vector<int>(t.group(41).ports, t.group(41).ports + 4),
            (std::vector<int>{8, 9, 10, 11}));
  t.set(42, {3});  // the same list as destination 3's: shared
  EXPECT_EQ(t.group(42).ports, t.group(3).ports);
}

TEST(Routing, HashRespectsItsFields) {
  const ForwardingTable t = leaf_table();
  // Fields not hashed never change the choice.
  LoadBalancer src_dst(routing(), t);
  LoadBalancer dst_only(routing({"routing.hash_fields=dst"}), t);
  LoadBalancer with_tc(routing({"routing.hash_fields=src, dst ,tc"}), t);
  int tc_changed = 0, src_changed_dst_only = 0;
  for (int s = 0; s < 32; ++s)
    for (int d = 8; d < 64; ++d) {
      const auto g = t.group(d);
      const int a = src_dst.pick(pkt(s, d, 0), g, Time(), kIdle.data());
      EXPECT_EQ(a, src_dst.pick(pkt(s, d, 5), g, Time(), kIdle.data()));
      const int b = dst_only.pick(pkt(s, d, 0), g, Time(), kIdle.data());
      EXPECT_EQ(b, dst_only.pick(pkt(s + 1, d, 3), g, Time(), kIdle.data()));
      // Hashed fields do change it, for about 3 in 4 of the flows (4 ports).
      tc_changed += with_tc.pick(pkt(s, d, 0), g, Time(), kIdle.data()) !=
                    with_tc.pick(pkt(s, d, 1), g, Time(), kIdle.data());
      src_changed_dst_only += a != src_dst.pick(pkt(s + 1, d, 0), g, Time(), kIdle.data());
    }
  const int flows = 32 * 56;
  EXPECT_GT(tc_changed, flows * 6 / 10);
  EXPECT_GT(src_changed_dst_only, flows * 6 / 10);
}

TEST(Routing, EntropySpreadsOnePairOverTheGroupAndIsIgnoredOtherwise) {
  const ForwardingTable t = leaf_table();
  LoadBalancer flow(routing(), t);
  LoadBalancer ent(routing({"routing.hash_fields=src,dst,entropy"}), t);
  EXPECT_EQ(routing({"routing.hash_fields=src,dst,entropy"}).hash_field_mask(),
            kHashSrc | kHashDst | kHashEntropy);
  for (int s = 0; s < 8; ++s)
    for (int d = 8; d < 40; ++d) {
      const auto g = t.group(d);
      // The entropy is the id's low byte: the rest of the id never matters.
      std::map<int, int> per_port;
      for (uint64_t e = 0; e < 256; ++e) {
        const Packet p = pkt(s, d, 0, (uint64_t{0xabcdef} << 8) | e);
        // Flow hashing ignores it: the pair keeps the table's port.
        ASSERT_EQ(flow.pick(p, g, Time(), kIdle.data()), t.lookup(p));
        const int port = ent.pick(p, g, Time(), kIdle.data());
        ASSERT_EQ(port, ent.pick(pkt(s, d, 0, e), g, Time(), kIdle.data()));
        ++per_port[port];
      }
      // 256 entropies over 4 ports: every port used, each near 64 (binomial sd ~7: 30..98 is
      // beyond 4.5 sd).
      ASSERT_EQ(per_port.size(), 4u) << s << "->" << d;
      for (const auto& [port, n] : per_port) {
        EXPECT_GT(n, 30) << port;
        EXPECT_LT(n, 98) << port;
      }
    }
  // A pair's packets with one entropy (an RC QP's) keep one port; another QP's (another
  // entropy) takes another for about 3 in 4 pairs.
  int moved = 0;
  for (int d = 8; d < 64; ++d)
    moved += ent.pick(pkt(1, d, 0, 17), t.group(d), Time(), kIdle.data()) !=
             ent.pick(pkt(1, d, 0, 18), t.group(d), Time(), kIdle.data());
  EXPECT_GT(moved, 56 / 2);
}

TEST(Routing, HashIsDeterministicAndSeeded) {
  const ForwardingTable t = leaf_table();
  LoadBalancer a(routing({"routing.hash_seed=7"}), t), b(routing({"routing.hash_seed=7"}), t);
  LoadBalancer c(routing({"routing.hash_seed=8"}), t), plain(routing(), t);
  int differs = 0, differs_from_plain = 0;
  for (int s = 0; s < 32; ++s)
    for (int d = 8; d < 64; ++d) {
      const Packet p = pkt(s, d);
      const int x = a.pick(p, t.group(d), Time(), kIdle.data());
      EXPECT_EQ(x, b.pick(p, t.group(d), Time(), kIdle.data()));
      differs += x != c.pick(p, t.group(d), Time(), kIdle.data());
      differs_from_plain += x != plain.pick(p, t.group(d), Time(), kIdle.data());
    }
  EXPECT_GT(differs, 32 * 56 / 2);
  EXPECT_GT(differs_from_plain, 32 * 56 / 2);
  // The per-switch salt still matters with a seed: another switch, other choices.
  const ForwardingTable other = leaf_table(99);
  LoadBalancer a2(routing({"routing.hash_seed=7"}), other);
  int salt_differs = 0;
  for (int d = 8; d < 64; ++d)
    salt_differs += a.pick(pkt(1, d), t.group(d), Time(), kIdle.data()) !=
                    a2.pick(pkt(1, d), other.group(d), Time(), kIdle.data());
  EXPECT_GT(salt_differs, 56 / 2);
}

TEST(Routing, SprayIsRoundRobinPerDestination) {
  const ForwardingTable t = leaf_table();
  LoadBalancer lb(routing({"routing.mode=spray"}), t);
  // Bound: over any run of packets to one destination, port counts differ by at most one; every
  // multiple of the group size is exactly even, whatever the flows.
  std::map<int, std::map<int, int>> per_dst;
  std::set<int> first_ports;
  for (int k = 0; k < 1003; ++k)
    for (int d = 8; d < 64; ++d) {
      const int port = lb.pick(pkt(k % 5, d), t.group(d), Time(), kIdle.data());
      if (k == 0) first_ports.insert(port);
      ++per_dst[d][port];
    }
  for (auto& [d, counts] : per_dst) {
    ASSERT_EQ(counts.size(), 4u) << d;
    int lo = 1 << 30, hi = 0;
    for (auto& [port, n] : counts) {
      lo = std::min(lo, n);
      hi = std::max(hi, n);
    }
    EXPECT_LE(hi - lo, 1) << d;
    EXPECT_EQ(lo, 250) << d;
  }
  // Consecutive packets of one destination take consecutive ports of the group.
  int prev = lb.pick(pkt(0, 20), t.group(20), Time(), kIdle.data());
  for (int k = 0; k < 8; ++k) {
    const int port = lb.pick(pkt(0, 20), t.group(20), Time(), kIdle.data());
    EXPECT_EQ(port, prev == 11 ? 8 : prev + 1);
    prev = port;
  }
  // The pointers start at seeded positions, not all on the first port.
  EXPECT_GT(first_ports.size(), 1u);
  EXPECT_EQ(lb.multipath_packets(), 1003u * 56 + 9);
}

TEST(Routing, FlowletKeepsItsPortUntilAGapThenTakesTheLeastLoaded) {
  const ForwardingTable t = leaf_table();
  LoadBalancer lb(routing({"routing.mode=flowlet", "routing.flowlet_gap=1us"}), t);
  std::vector<int64_t> cells(16, 0);
  const Packet p = pkt(3, 40);
  const auto g = t.group(40);
  const int home = lb.pick(p, g, Time::ns(100), cells.data());
  // Idle queues: the first flowlet goes to the hash's port (ties start there).
  EXPECT_EQ(home, t.lookup(p));
  // Now its port is the fullest and `target` the emptiest; gaps below 1 us keep the flow on its
  // port all the same.
  const int target = home == 8 ? 9 : 8;
  for (int q = 8; q < 12; ++q) cells[q] = q == home ? 100 : q == target ? 18 : 50;
  Time now = Time::ns(100);
  for (int k = 0; k < 20; ++k) {
    now = now + Time::ns(999);
    EXPECT_EQ(lb.pick(p, g, now, cells.data()), home) << k;
  }
  EXPECT_EQ(lb.flowlets(), 1u);
  // A gap of exactly flowlet_gap ends the flowlet: the least-loaded port.
  now = now + Time::us(1);
  const int moved = lb.pick(p, g, now, cells.data());
  EXPECT_EQ(moved, target);
  EXPECT_EQ(lb.flowlets(), 2u);
  EXPECT_EQ(lb.flowlet_moves(), 1u);
  EXPECT_EQ(lb.diverted(), 1u);
  // ... and the new flowlet stays there while it is busy, whatever the loads do.
  cells[target] = 1000;
  EXPECT_EQ(lb.pick(p, g, now + Time::ns(500), cells.data()), target);
  // Another flow has its own entry: it is not held by this one's port.
  const Packet q = pkt(4, 40);
  EXPECT_NE(lb.pick(q, g, now + Time::ns(600), cells.data()), target);
}

TEST(Routing, FlowletTableIsBounded) {
  const ForwardingTable t = leaf_table();
  // One entry: flows of two destinations take it from each other (an active entry taken over is
  // an eviction, and its flow starts a new flowlet); flows of one destination share it.
  LoadBalancer lb(
      routing({"routing.mode=flowlet", "routing.flowlet_gap=1us", "routing.flowlet_table_size=1"}),
      t);
  std::vector<int64_t> cells(16, 0);
  lb.pick(pkt(0, 20), t.group(20), Time::ns(0), cells.data());
  lb.pick(pkt(1, 20), t.group(20), Time::ns(10), cells.data());  // same destination: shares
  EXPECT_EQ(lb.flowlets(), 1u);
  lb.pick(pkt(0, 30), t.group(30), Time::ns(20), cells.data());
  lb.pick(pkt(0, 20), t.group(20), Time::ns(30), cells.data());
  EXPECT_EQ(lb.flowlets(), 3u);
  EXPECT_EQ(lb.flowlet_evictions(), 2u);
}

TEST(Routing, AdaptivePicksTheEmptiestQueue) {
  const ForwardingTable t = leaf_table();
  LoadBalancer lb(routing({"routing.mode=adaptive"}), t);
  std::vector<int64_t> cells(16, 0);
  cells[8] = 40, cells[9] = 7, cells[10] = 12, cells[11] = 9;
  for (int s = 0; s < 16; ++s)
    for (int d = 8; d < 64; ++d) EXPECT_EQ(lb.pick(pkt(s, d), t.group(d), Time(), cells.data()), 9);
  cells[11] = 0;
  EXPECT_EQ(lb.pick(pkt(0, 9), t.group(9), Time(), cells.data()), 11);
  // Host-facing ports are not in the group: a full or empty port 3 changes nothing.
  cells[3] = -1;
  EXPECT_EQ(lb.pick(pkt(0, 9), t.group(9), Time(), cells.data()), 11);
  // Ties are broken from the hash's port: with equal queues, adaptive is ecmp.
  std::fill(cells.begin(), cells.end(), 5);
  for (int s = 0; s < 16; ++s)
    for (int d = 8; d < 64; ++d)
      EXPECT_EQ(lb.pick(pkt(s, d), t.group(d), Time(), cells.data()), t.lookup(pkt(s, d)));
  // Two ports tied below the rest: the first of them from the hash's port on, cyclically.
  cells[8] = cells[10] = 1;
  for (int d = 8; d < 64; ++d) {
    const int home = t.lookup(pkt(2, d));
    const int want = home == 9 || home == 10 ? 10 : 8;
    EXPECT_EQ(lb.pick(pkt(2, d), t.group(d), Time(), cells.data()), want) << d;
  }
}

// Through the switch core: one input sends a burst to a destination behind ports {1, 2, 3}.
struct Departure {
  int port;
  Packet p;
};
class Recorder : public DepartureSink {
 public:
  void on_departure(int port, const Packet& p, Time, Time) override { out.push_back({port, p}); }
  void on_control(int, const ControlFrame&, Time, Time) override {}
  std::vector<Departure> out;
};

// The egress port of each of 30 frames (by id) that input 0 sends at line rate to a
// destination behind ports {1, 2, 3}.
std::vector<int> burst_ports(const std::string& mode) {
  SwitchConfig cfg;
  config::load(cfg, "",
               {"ports=4", "port_speed=800Gbps", "serdes.lanes=32", "serdes.lane_rate=106.25Gbps",
                "core_clock=2GHz", "cell_size=250B", "traffic_classes=1", "buffer.size=1MB",
                "routing.mode=" + mode});
  ForwardingTable t(2, 77);
  t.set(0, {0});
  t.set(1, {1, 2, 3});
  SwitchCore core(cfg, t, 1, "leaf");
  Recorder rec;
  // 4000 B frames back to back (40 ns each at 800G).
  for (int k = 0; k < 30; ++k) {
    const Time t0 = Time::ns(40) * k;
    Packet p = pkt(0, 1, 0, static_cast<uint64_t>(k));
    p.size = Bytes(4000);
    p.inject_time = t0;
    core.receive(0, p, t0);
  }
  for (int64_t c = core.next_work_cycle(); c != EventWheel<int>::kNone; c = core.next_work_cycle())
    core.run_cycle(c, rec);
  EXPECT_TRUE(core.check_invariants().empty());
  std::vector<int> port(30, -1);
  for (const auto& d : rec.out) port[d.p.id] = d.port;
  EXPECT_EQ(rec.out.size(), 30u);
  return port;
}

TEST(Routing, ThroughTheSwitchCore) {
  // ecmp: one flow, one port.
  const auto e = burst_ports("ecmp");
  EXPECT_EQ(std::set<int>(e.begin(), e.end()).size(), 1u);
  // spray: round robin, exactly even.
  const auto s = burst_ports("spray");
  for (int k = 1; k < 30; ++k) EXPECT_EQ(s[k], s[k - 1] % 3 + 1) << k;
  // adaptive: a frame is admitted while the previous one still holds cells for its port, so it
  // never takes that port (the others are empty).
  const auto a = burst_ports("adaptive");
  EXPECT_GE(std::set<int>(a.begin(), a.end()).size(), 2u);
  for (int k = 1; k < 30; ++k) EXPECT_NE(a[k], a[k - 1]) << k;
  // flowlet (2 us gap): the burst is one flowlet, on one port.
  const auto f = burst_ports("flowlet");
  EXPECT_EQ(std::set<int>(f.begin(), f.end()).size(), 1u);
}

}  // namespace
}  // namespace fabricsim::sw

namespace fabricsim::traffic {
namespace {

// Both stores: the dense array (hosts given, up to kDenseHosts) and the growing table (0).
class Reorder : public ::testing::TestWithParam<int> {};

TEST_P(Reorder, CountsPacketsOvertakenWithinTheirFlow) {
  ReorderCounter r(GetParam());
  // In order: nothing.
  for (uint64_t id = 0; id < 10; ++id) EXPECT_FALSE(r.arrive(1, 2, id));
  // Packet 12 overtakes 10 and 11: each of those two counts once; 13 is in order again.
  EXPECT_FALSE(r.arrive(1, 2, 12));
  EXPECT_TRUE(r.arrive(1, 2, 10));
  EXPECT_TRUE(r.arrive(1, 2, 11));
  EXPECT_FALSE(r.arrive(1, 2, 13));
  EXPECT_EQ(r.reordered(), 2u);
  // Flows are (source, destination) pairs: another pair's later ids do not matter, in either
  // direction.
  EXPECT_FALSE(r.arrive(2, 1, 5));
  EXPECT_FALSE(r.arrive(1, 3, 4));
  EXPECT_EQ(r.reordered(), 2u);
}

TEST_P(Reorder, KeepsEveryFlow) {
  ReorderCounter r(GetParam());
  // 200 x 200 flows (far past the table's initial size), each seen twice in order, then late.
  for (int round = 0; round < 2; ++round)
    for (int s = 0; s < 200; ++s)
      for (int d = 0; d < 200; ++d)
        EXPECT_FALSE(r.arrive(s, d, static_cast<uint64_t>(100 + round * 100000 + s * 200 + d)));
  if (GetParam() == 0) {
    EXPECT_EQ(r.flows(), 40000u);
  }
  for (int s = 0; s < 200; ++s)
    for (int d = 0; d < 200; ++d) EXPECT_TRUE(r.arrive(s, d, 50));
  EXPECT_EQ(r.reordered(), 40000u);
}

INSTANTIATE_TEST_SUITE_P(Stores, Reorder,
                         ::testing::Values(0, 200, ReorderCounter::kDenseHosts,
                                           ReorderCounter::kDenseHosts + 1));

}  // namespace
}  // namespace fabricsim::traffic
