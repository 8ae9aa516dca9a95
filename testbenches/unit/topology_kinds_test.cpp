// Every topology kind of the registry, at several sizes: host, switch and wire counts against
// closed forms, every switch port used at most once, and full reachability: for every (src, dst)
// pair, every path the tables allow (every ECMP member at every hop) reaches dst's port within
// the kind's stated hop count without revisiting a switch; pairs the topology calls unroutable
// have no route at all. Bad sizes are refused naming the keys and the numbers.
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/topology/registry.h"
#include "models/topology/topology.h"
#include "models/topology/traffic_routes.h"

namespace fabricsim::topo {
namespace {

TopologyConfig make(const std::string& kind) {
  TopologyConfig c;
  c.kind = kind;
  return c;
}

struct Walk {
  int min_hops = 1 << 30, max_hops = 0;  // switches traversed, over all pairs and paths
  long paths = 0;
  std::map<std::pair<int, int>, std::pair<int, int>> pair_hops;  // (src, dst) -> min, max
};

// Checks the port invariants and walks every path of every pair; returns the hop statistics.
// `ports` < 0: switches have their own port counts (t.switch_ports, switch kinds).
Walk check(const Topology& t, int ports) {
  Walk w;
  EXPECT_EQ(static_cast<int>(t.host_port.size()), t.hosts);
  EXPECT_EQ(static_cast<int>(t.tables.size()), t.switches());
  EXPECT_EQ(static_cast<int>(t.switch_ports.size()), t.switches());
  EXPECT_EQ(static_cast<int>(t.switch_tier.size()), t.switches());
  for (int s = 0; s < t.switches() && ports >= 0; ++s) EXPECT_EQ(t.switch_ports[s], ports);
  std::set<std::pair<int, int>> used;
  std::map<std::pair<int, int>, PortRef> peer;
  std::map<std::pair<int, int>, int> host_at;
  const auto use = [&](PortRef p) {
    EXPECT_TRUE(p.sw >= 0 && p.sw < t.switches() && p.port >= 0 && p.port < t.switch_ports[p.sw])
        << p.sw << ":" << p.port;
    EXPECT_TRUE(used.insert({p.sw, p.port}).second) << "port used twice: " << p.sw << ":" << p.port;
  };
  for (const Wire& x : t.wires) {
    use(x.a);
    use(x.b);
    EXPECT_NE(x.a.sw, x.b.sw);
    peer[{x.a.sw, x.a.port}] = x.b;
    peer[{x.b.sw, x.b.port}] = x.a;
  }
  for (int h = 0; h < t.hosts; ++h) {
    use(t.host_port[h]);
    host_at[{t.host_port[h].sw, t.host_port[h].port}] = h;
  }
  for (int src = 0; src < t.hosts; ++src)
    for (int dst = 0; dst < t.hosts; ++dst) {
      const int first = t.host_port[src].sw;
      if (!t.routable(src, dst)) {
        EXPECT_TRUE(t.route(first, dst).empty()) << src << "->" << dst;
        continue;
      }
      int lo = 1 << 30, hi = 0;
      std::vector<int> path;
      // Depth-first over every ECMP member.
      std::function<void(int)> go = [&](int sw) {
        ASSERT_EQ(std::count(path.begin(), path.end(), sw), 0) << "loop " << src << "->" << dst;
        path.push_back(sw);
        ASSERT_LE(static_cast<int>(path.size()), t.max_switch_hops) << src << "->" << dst;
        const auto& group = t.route(sw, dst);
        ASSERT_FALSE(group.empty()) << "no route at switch " << sw << " " << src << "->" << dst;
        for (int port : group) {
          if (auto h = host_at.find({sw, port}); h != host_at.end()) {
            ASSERT_EQ(h->second, dst) << src << "->" << dst;
            lo = std::min(lo, static_cast<int>(path.size()));
            hi = std::max(hi, static_cast<int>(path.size()));
            ++w.paths;
            continue;
          }
          auto next = peer.find({sw, port});
          ASSERT_NE(next, peer.end()) << "unconnected port " << sw << ":" << port;
          go(next->second.sw);
        }
        path.pop_back();
      };
      go(first);
      w.pair_hops[{src, dst}] = {lo, hi};
      w.min_hops = std::min(w.min_hops, lo);
      w.max_hops = std::max(w.max_hops, hi);
      // The hardware table agrees with the readable route: its pick is a member of the group.
      Packet p;
      p.src = src;
      p.dst = dst;
      const auto& g = t.route(first, dst);
      EXPECT_NE(std::find(g.begin(), g.end(), t.tables[first].lookup(p)), g.end());
    }
  return w;
}

int count_named(const Topology& t, const std::string& part) {
  return static_cast<int>(
      std::count_if(t.switch_names.begin(), t.switch_names.end(),
                    [&](const std::string& n) { return n.find(part) != std::string::npos; }));
}

// What validate_ports says about `cfg` on `ports`-port chips ("" if it accepts it).
std::string refusal(const TopologyConfig& cfg, const TierPorts& ports) {
  const config::Checker c([](const std::string& key) { return "--set " + key; });
  try {
    cfg.validate_ports(c, ports);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(TopologyKinds, RegistryListsEveryKindInDocumentationOrder) {
  std::vector<std::string> names;
  for (const TopologyKind* k : topology_kinds()) names.emplace_back(k->name);
  EXPECT_EQ(names, (std::vector<std::string>{"single", "line", "leaf_spine", "fat_tree",
                                             "rail_optimized", "rail_only", "dragonfly"}));
  EXPECT_EQ(find_topology_kind("ring"), nullptr);
  EXPECT_THROW(make("ring").hosts(8), std::invalid_argument);
}

TEST(TopologyKinds, FatTreeMatchesTheClosedForms) {
  // k pods x (k/2 edge + k/2 aggregation) + (k/2)^2 cores = 5k^2/4 switches; k/2 hosts per edge:
  // k^3/4 hosts; edge-agg links k x (k/2)^2, agg-core links k x (k/2)^2: k^3/2, times m.
  for (auto [k, m, ports] : {std::tuple{4, 1, 4}, {8, 1, 8}, {4, 2, 8}, {6, 1, 16}}) {
    TopologyConfig c = make("fat_tree");
    c.k = k == 8 ? 0 : k;  // 0: the chip's 8 ports
    c.links_per_pair = m;
    ASSERT_EQ(refusal(c, ports), "") << k;
    const Topology t = build_topology(c, ports, 1);
    ASSERT_EQ(t.hosts, k * k * k / 4) << k;
    ASSERT_EQ(t.switches(), 5 * k * k / 4) << k;
    ASSERT_EQ(c.hosts(ports), t.hosts);
    ASSERT_EQ(c.switch_count(ports), t.switches());
    ASSERT_EQ(static_cast<int>(t.wires.size()), m * k * k * k / 2) << k;
    EXPECT_EQ(count_named(t, "_edge"), k * k / 2);
    EXPECT_EQ(count_named(t, "_agg"), k * k / 2);
    EXPECT_EQ(count_named(t, "core"), k * k / 4);
    EXPECT_EQ(t.switch_names[1], "pod0_edge1");
    EXPECT_EQ(t.switch_names[k + k / 2], "pod1_agg0");
    EXPECT_EQ(t.switch_names[k * k + 3], "core3");
    const Walk w = check(t, ports);
    EXPECT_EQ(w.max_hops, 5);
    // Same edge: 1 switch; same pod: edge-agg-edge; else edge-agg-core-agg-edge. Paths per pair:
    // up through k/2 aggs (x m links), then k/2 cores (x m), each down fixed up to the m links.
    const int per_pod = k * k / 4;
    for (auto [pair, hops] : w.pair_hops) {
      const auto [s, d] = pair;
      const int want = s / (k / 2) == d / (k / 2) ? 1 : s / per_pod == d / per_pod ? 3 : 5;
      ASSERT_EQ(hops.first, want) << s << "->" << d;
      ASSERT_EQ(hops.second, want) << s << "->" << d;
    }
    const long edge_pairs = static_cast<long>(t.hosts) * (k / 2);
    const long pod_pairs = static_cast<long>(t.hosts) * (per_pod - k / 2);
    const long far_pairs = static_cast<long>(t.hosts) * (t.hosts - per_pod);
    const long up = k / 2 * m;  // choices at each upward hop
    EXPECT_EQ(w.paths, edge_pairs + pod_pairs * up * m + far_pairs * up * up * m * m);
    ASSERT_EQ(t.tiers.size(), 3u);
    EXPECT_DOUBLE_EQ(t.tiers[0].ratio(), 1.0 / m);  // k/2 hosts : k/2 x m uplinks
    EXPECT_DOUBLE_EQ(t.tiers[1].ratio(), 1.0);
    EXPECT_EQ(t.tiers[2].up, 0);
    EXPECT_EQ(t.host_group[t.hosts - 1], k - 1);  // the pod
  }
}

TEST(TopologyKinds, FatTreeSpreadsFlowsOverTheAggregationSwitches) {
  TopologyConfig c = make("fat_tree");
  c.k = 8;
  const Topology t = build_topology(c, 8, 3);
  // Each source's first hop hashes over the 4 aggs: pod 0 sources to other pods, 16 x 112
  // flows, each agg's share binomial(1792, 1/4) (sd 18): within +-15% (60 flows, > 3 sd).
  std::map<int, int> per_agg;
  Packet p;
  for (p.src = 0; p.src < 16; ++p.src)
    for (p.dst = 16; p.dst < t.hosts; ++p.dst) ++per_agg[t.tables[t.host_port[p.src].sw].lookup(p)];
  ASSERT_EQ(per_agg.size(), 4u);
  for (auto [port, n] : per_agg) EXPECT_NEAR(n, 1792 / 4.0, 1792 / 4.0 * 0.15) << port;
}

TEST(TopologyKinds, LeafSpineParallelLinksMultiplyTheWires) {
  TopologyConfig c = make("leaf_spine");
  c.leaves = 4;
  c.spines = 2;
  c.links_per_pair = 3;
  c.hosts_per_leaf = 0;  // 16 - 2 x 3 = 10
  const Topology t = build_topology(c, 16, 1);
  ASSERT_EQ(t.hosts, 40);
  ASSERT_EQ(static_cast<int>(t.wires.size()), 4 * 2 * 3);
  const Walk w = check(t, 16);
  EXPECT_EQ(w.max_hops, 3);
  EXPECT_EQ(t.route(0, 39).size(), 6u);  // ECMP over every uplink
  EXPECT_EQ(t.route(4, 39).size(), 3u);  // a spine: the 3 links to leaf 3
  EXPECT_DOUBLE_EQ(t.tiers[0].ratio(), 10.0 / 6.0);
}

TEST(TopologyKinds, RailOptimizedNumbersHostsServerMajor) {
  // S servers of G GPUs, H NICs per leaf: L = ceil(S/H) leaves per rail, G x L leaves, each with
  // a link to every spine.
  for (auto [servers, gpus, per_leaf, spines, ports] :
       {std::tuple{4, 8, 0, 2, 8}, {10, 4, 4, 3, 16}, {5, 2, 2, 2, 8}}) {
    TopologyConfig c = make("rail_optimized");
    c.servers = servers;
    c.gpus_per_server = gpus;
    c.hosts_per_leaf = per_leaf;
    c.spines = spines;
    ASSERT_EQ(refusal(c, ports), "");
    const int h = per_leaf ? per_leaf : ports - spines;
    const int l = (servers + h - 1) / h;
    const Topology t = build_topology(c, ports, 1);
    ASSERT_EQ(t.hosts, servers * gpus);
    ASSERT_EQ(t.switches(), gpus * l + spines);
    ASSERT_EQ(c.switch_count(ports), t.switches());
    ASSERT_EQ(static_cast<int>(t.wires.size()), gpus * l * spines);
    for (int s = 0; s < servers; ++s)
      for (int r = 0; r < gpus; ++r) {
        const PortRef at = t.host_port[s * gpus + r];
        EXPECT_EQ(t.switch_names[at.sw],
                  "rail" + std::to_string(r) + "_leaf" + std::to_string(s / h));
        EXPECT_EQ(at.port, s % h);
        EXPECT_EQ(t.host_group[s * gpus + r], r);
      }
    const Walk w = check(t, ports);
    for (auto [pair, hops] : w.pair_hops) {
      const bool same_leaf = t.host_port[pair.first].sw == t.host_port[pair.second].sw;
      ASSERT_EQ(hops.first, same_leaf ? 1 : 3);
      ASSERT_EQ(hops.second, same_leaf ? 1 : 3);
    }
    EXPECT_DOUBLE_EQ(t.tiers[0].ratio(), static_cast<double>(h) / spines);
  }
}

TEST(TopologyKinds, RailOnlyRoutesWithinARailAndNothingAcross) {
  TopologyConfig c = make("rail_only");
  c.servers = 6;
  c.gpus_per_server = 4;
  const Topology t = build_topology(c, 8, 1);
  ASSERT_EQ(t.hosts, 24);
  ASSERT_EQ(t.switches(), 4);
  EXPECT_TRUE(t.wires.empty());
  for (int a = 0; a < 24; ++a)
    for (int b = 0; b < 24; ++b) EXPECT_EQ(t.routable(a, b), a % 4 == b % 4) << a << "," << b;
  const Walk w = check(t, 8);
  EXPECT_EQ(w.max_hops, 1);
  EXPECT_EQ(w.pair_hops.size(), 24u * 6u);  // only same-rail pairs have paths
  EXPECT_EQ(t.switch_names[t.host_port[13].sw], "rail1");
  EXPECT_EQ(t.host_port[13].port, 3);  // server 3
  EXPECT_FALSE(c.all_pairs_routable());
  EXPECT_TRUE(make("fat_tree").all_pairs_routable());
}

TEST(TopologyKinds, DragonflyJoinsEveryPairOfGroupsOnce) {
  // g groups of a routers: hosts g a p, switches g a, local links g a(a-1)/2, global links
  // g(g-1)/2 (one per pair of groups). Minimal paths: 1 switch on one router, 2 in one group, at
  // most 4 (local, global, local) between groups.
  for (auto [a, p, h, groups, ports] :
       {std::tuple{4, 2, 2, 0, 8}, {2, 1, 1, 0, 4}, {4, 2, 2, 5, 8}, {3, 3, 2, 0, 16}}) {
    TopologyConfig c = make("dragonfly");
    c.routers_per_group = a;
    c.hosts_per_router = p;
    c.global_links = h;
    c.groups = groups;
    ASSERT_EQ(refusal(c, ports), "");
    const int g = groups ? groups : a * h + 1;
    const Topology t = build_topology(c, ports, 1);
    ASSERT_EQ(t.hosts, g * a * p);
    ASSERT_EQ(t.switches(), g * a);
    ASSERT_EQ(static_cast<int>(t.wires.size()), g * a * (a - 1) / 2 + g * (g - 1) / 2);
    std::map<std::pair<int, int>, int> between;  // group pair -> global links
    for (const Wire& x : t.wires) {
      const int ga = t.switch_group[x.a.sw], gb = t.switch_group[x.b.sw];
      if (ga != gb) ++between[{std::min(ga, gb), std::max(ga, gb)}];
    }
    ASSERT_EQ(static_cast<int>(between.size()), g * (g - 1) / 2);
    for (auto [pair, n] : between) EXPECT_EQ(n, 1);
    // group_port leads to the group it names.
    for (int x = 0; x < g; ++x)
      for (int y = 0; y < g; ++y) {
        const PortRef gp = t.group_port[x][y];
        if (x == y) {
          EXPECT_EQ(gp.sw, -1);
          continue;
        }
        EXPECT_EQ(t.switch_group[gp.sw], x);
        const auto w = std::find_if(t.wires.begin(), t.wires.end(), [&](const Wire& v) {
          return (v.a.sw == gp.sw && v.a.port == gp.port) ||
                 (v.b.sw == gp.sw && v.b.port == gp.port);
        });
        ASSERT_NE(w, t.wires.end());
        const PortRef far = w->a.sw == gp.sw && w->a.port == gp.port ? w->b : w->a;
        EXPECT_EQ(t.switch_group[far.sw], y);
      }
    const Walk walk = check(t, ports);
    EXPECT_EQ(walk.max_hops, 4);
    for (auto [pair, hops] : walk.pair_hops) {
      const auto [s, d] = pair;
      const bool router = s / p == d / p, group = t.host_group[s] == t.host_group[d];
      ASSERT_EQ(hops.first, hops.second);  // one minimal path, no ECMP
      ASSERT_EQ(hops.first >= (router ? 1 : 2) && hops.first <= (router  ? 1
                                                                 : group ? 2
                                                                         : 4),
                true)
          << s << "->" << d << ": " << hops.first;
    }
    EXPECT_DOUBLE_EQ(t.tiers[0].ratio(), static_cast<double>(p) / (a - 1 + h));
    EXPECT_DOUBLE_EQ(t.tiers[1].ratio(), static_cast<double>(a * p) / (g - 1));
  }
}

TEST(TopologyKinds, ImpossibleSizesAreRefusedNamingKeysAndNumbers) {
  TopologyConfig c = make("fat_tree");
  c.k = 5;
  EXPECT_NE(refusal(c, 8).find("topology.k: must be even"), std::string::npos) << refusal(c, 8);
  c.k = 16;
  EXPECT_NE(refusal(c, 8).find("16 x 1 = 16 ports, but switch.ports is 8"), std::string::npos)
      << refusal(c, 8);
  c.k = 4;
  c.links_per_pair = 3;
  EXPECT_NE(refusal(c, 8).find("topology.links_per_pair"), std::string::npos) << refusal(c, 8);

  TopologyConfig d = make("dragonfly");
  d.groups = 10;  // a x h + 1 = 9
  EXPECT_NE(refusal(d, 8).find("topology.groups: 10 groups need 9 global links"), std::string::npos)
      << refusal(d, 8);
  d.groups = 0;
  EXPECT_NE(refusal(d, 6).find("= 7 ports, but switch.ports is 6"), std::string::npos)
      << refusal(d, 6);

  TopologyConfig r = make("rail_optimized");
  r.servers = 20;
  r.gpus_per_server = 8;
  r.spines = 2;  // 6 NICs per leaf: 4 leaves per rail, 32 leaves for 8-port spines
  EXPECT_NE(refusal(r, 8).find("topology.gpus_per_server"), std::string::npos) << refusal(r, 8);
  EXPECT_NE(refusal(r, 8).find("= 32 leaves"), std::string::npos) << refusal(r, 8);
  r.hosts_per_leaf = 7;
  EXPECT_NE(refusal(r, 8).find("topology.hosts_per_leaf"), std::string::npos) << refusal(r, 8);

  TopologyConfig o = make("rail_only");
  o.servers = 9;
  EXPECT_NE(refusal(o, 8).find("topology.servers: rail_only has one switch per rail"),
            std::string::npos)
      << refusal(o, 8);

  TopologyConfig big = make("fat_tree");  // k=64: 65,536 hosts x 5,120 switches
  EXPECT_NE(refusal(big, 64).find("topology.kind"), std::string::npos) << refusal(big, 64);
}

TEST(TopologyKinds, CrossRailTrafficIsRefusedNamingThePair) {
  TopologyConfig c = make("rail_only");
  c.servers = 4;
  c.gpus_per_server = 2;
  const Topology t = build_topology(c, 8, 1);
  std::string why, key;
  const RouteFailFn fail = [&](const std::string& k, const std::string& m) {
    key = k;
    why = m;
    throw std::runtime_error(m);
  };
  traffic::TrafficConfig tc;
  tc.load = 0.5;
  tc.size = Bytes(512);
  tc.pattern = "uniform";
  EXPECT_THROW(check_traffic_routes(t, tc, 1, fail), std::runtime_error);
  EXPECT_EQ(key, "traffic.pattern");
  EXPECT_NE(why.find("from host 0 to host 1"), std::string::npos) << why;
  EXPECT_NE(why.find("cross-rail traffic must go through a server"), std::string::npos) << why;
  tc.pattern = "incast";  // host 0 (rail 0) to host 6 (rail 0)
  tc.incast_target = 6;
  tc.incast_sources = 1;
  EXPECT_NO_THROW(check_traffic_routes(t, tc, 1, fail));
  tc.incast_sources = 2;  // and host 1, on rail 1
  EXPECT_THROW(check_traffic_routes(t, tc, 1, fail), std::runtime_error);
  EXPECT_NE(why.find("from host 1 to host 6"), std::string::npos) << why;
  tc.pattern = "hotspot";
  tc.hotspot_port = 2;
  tc.hotspot_fraction = 1.0;  // everybody to host 2: host 1 cannot
  EXPECT_THROW(check_traffic_routes(t, tc, 1, fail), std::runtime_error);
  EXPECT_EQ(key, "traffic.hotspot.port");
  tc.load = 0;  // sends nothing
  EXPECT_NO_THROW(check_traffic_routes(t, tc, 1, fail));
  // A single rail (one GPU per server) routes every pair.
  c.gpus_per_server = 1;
  tc.load = 0.5;
  tc.pattern = "permutation";
  EXPECT_NO_THROW(check_traffic_routes(build_topology(c, 8, 1), tc, 1, fail));
}

// Tier port counts as RunConfig::tier_ports gives them: kind `name` at switch_kinds[index] for
// the tiers given a kind ("" = the switch: chip).
TierPorts tier_ports(const std::vector<int64_t>& ports, const std::vector<std::string>& kinds) {
  std::vector<std::string> keys;
  for (size_t t = 0; t < kinds.size(); ++t)
    keys.push_back(kinds[t].empty() ? "switch.ports"
                                    : "switch_kinds[" + std::to_string(t) + "].ports");
  return TierPorts(ports, keys, kinds);
}

TEST(TopologyKinds, TiersAndTheirLinksMatchWhatTheBuildersWire) {
  // Every kind at a small size: each switch has a tier of its kind, the hosts attach to the first
  // tier, and the tiers joined by wires are exactly the declared tier_links (what RunConfig checks
  // port speeds on).
  std::vector<TopologyConfig> configs;
  for (const TopologyKind* k : topology_kinds()) configs.push_back(make(k->name));
  configs[3].k = 4;  // fat_tree
  for (const TopologyConfig& c : configs) {
    const TopologyKind& k = c.kind_info();
    ASSERT_EQ(refusal(c, 16), "") << k.name;
    const Topology t = build_topology(c, 16, 1);
    std::set<std::pair<int, int>> declared, wired;
    for (auto [a, b] : k.tier_links) declared.insert({std::min(a, b), std::max(a, b)});
    for (const Wire& w : t.wires) {
      const int a = t.switch_tier[w.a.sw], b = t.switch_tier[w.b.sw];
      wired.insert({std::min(a, b), std::max(a, b)});
    }
    EXPECT_EQ(wired, declared) << k.name;
    std::set<int> tiers(t.switch_tier.begin(), t.switch_tier.end());
    EXPECT_EQ(tiers.size(), k.tiers.size()) << k.name;  // every tier has switches
    EXPECT_EQ(*tiers.rbegin(), static_cast<int>(k.tiers.size()) - 1) << k.name;
    for (const PortRef& h : t.host_port) EXPECT_EQ(t.switch_tier[h.sw], 0) << k.name;
  }
  const std::vector<std::string> names = all_tier_names();
  EXPECT_EQ(names, (std::vector<std::string>{"switch", "leaf", "spine", "edge", "agg", "core",
                                             "rail_leaf", "rail", "router"}));
}

TEST(TopologyKinds, LeafSpineSpinesOfMorePortsTakeMoreLeaves) {
  TopologyConfig c = make("leaf_spine");
  c.leaves = 12;  // more leaves than an 8-port spine has ports
  c.spines = 2;
  EXPECT_NE(refusal(c, 8).find("topology.leaves: a spine has one port per leaf: 12 leaves need 12 "
                               "but switch.ports is 8"),
            std::string::npos)
      << refusal(c, 8);
  const TierPorts small = tier_ports({8, 10}, {"", "spine"});
  EXPECT_NE(
      refusal(c, small).find("12 leaves need 12 but switch_kinds[1].ports (kind spine) is 10"),
      std::string::npos)
      << refusal(c, small);
  const TierPorts big = tier_ports({8, 16}, {"", "spine"});
  ASSERT_EQ(refusal(c, big), "");
  EXPECT_EQ(c.hosts(big), 12 * 6);  // 8 leaf ports - 2 uplinks
  const Topology t = build_topology(c, big, 1);
  for (int s = 0; s < t.switches(); ++s)
    EXPECT_EQ(t.switch_ports[s], s < 12 ? 8 : 16) << t.switch_names[s];
  const Walk w = check(t, -1);
  EXPECT_EQ(w.max_hops, 3);
  // The leaf tier's ports fix the hosts per leaf: 4 spines on 6-port leaves leave 2.
  c.spines = 4;
  const TierPorts leaf6 = tier_ports({6, 16}, {"leafchip", "spine"});
  ASSERT_EQ(refusal(c, leaf6), "");
  EXPECT_EQ(c.hosts(leaf6), 12 * 2);
  c.spines = 6;
  EXPECT_NE(refusal(c, leaf6).find("topology.spines: a leaf needs a port per spine plus one for a "
                                   "host; switch_kinds[0].ports (kind leafchip) is 6"),
            std::string::npos)
      << refusal(c, leaf6);
}

TEST(TopologyKinds, FatTreeTiersOfTheirOwnPortCounts) {
  TopologyConfig c = make("fat_tree");
  // k = 0 takes the largest k every tier carries: 4-port edges (k/2 hosts + k/2 up) limit it to 4.
  const TierPorts edge4 = tier_ports({4, 8, 8}, {"e", "", ""});
  ASSERT_EQ(refusal(c, edge4), "");
  EXPECT_EQ(c.hosts(edge4), 16);
  EXPECT_EQ(c.hosts(8), 128);  // the same chip everywhere: k = 8
  const Topology t = build_topology(c, edge4, 1);
  for (int s = 0; s < t.switches(); ++s)
    EXPECT_EQ(t.switch_ports[s], t.switch_tier[s] == 0 ? 4 : 8) << t.switch_names[s];
  check(t, -1);
  c.k = 8;
  EXPECT_NE(refusal(c, edge4).find("topology.k: an edge switch of a k=8 fat tree uses k/2 host "
                                   "ports + k/2 x topology.links_per_pair up ports = 8 ports, but "
                                   "switch_kinds[0].ports (kind e) is 4"),
            std::string::npos)
      << refusal(c, edge4);
  const TierPorts core6 = tier_ports({8, 8, 6}, {"", "", "c"});
  EXPECT_NE(refusal(c, core6).find("a core switch of a k=8 fat tree uses k x "
                                   "topology.links_per_pair = 8 x 1 = 8 ports, but "
                                   "switch_kinds[2].ports (kind c) is 6"),
            std::string::npos)
      << refusal(c, core6);
}

TEST(TopologyKinds, RailSpinesOfMorePortsTakeMoreRailLeaves) {
  TopologyConfig r = make("rail_optimized");
  r.servers = 20;
  r.gpus_per_server = 8;
  r.spines = 2;  // 6 NICs per 8-port leaf: 4 leaves per rail, 32 rail leaves
  EXPECT_NE(refusal(r, 8).find("= 32 leaves, but switch.ports is 8"), std::string::npos)
      << refusal(r, 8);
  const TierPorts big = tier_ports({8, 32}, {"", "spine32"});
  ASSERT_EQ(refusal(r, big), "");
  const Topology t = build_topology(r, big, 1);
  EXPECT_EQ(t.switches(), 34);
  EXPECT_EQ(t.switch_ports.back(), 32);
  EXPECT_EQ(t.switch_ports.front(), 8);
  check(t, -1);
}

}  // namespace
}  // namespace fabricsim::topo
