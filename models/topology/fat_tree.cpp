// `fat_tree`: the 3-tier k-ary fat tree of Al-Fares, Loukissas and Vahdat (SIGCOMM 2008), built
// from one k-port (or larger) chip: k pods, each of k/2 edge and k/2 aggregation switches fully
// connected, and (k/2)^2 core switches; k^3/4 hosts, 5k^2/4 switches, k^3/2 switch-to-switch
// links (times m = links_per_pair, parallel links per connected pair).
//
// Numbering (docs/topologies.md): switch index pod*k + e for "pod<p>_edge<e>", pod*k + k/2 + a for
// "pod<p>_agg<a>", k^2 + c for "core<c>". Host pod*(k/2)^2 + e*(k/2) + i sits on edge (pod, e),
// port i. Edge up port k/2 + a*m + j goes to agg a; agg a's down port e*m + j to edge e, its up
// port k/2*m + i*m + j to core a*(k/2) + i; core c's port pod*m + j to agg c/(k/2) of the pod.
// Routing: up through one ECMP group over all up ports, down deterministically (the switch path
// down is fixed; ECMP only over the m parallel links).
#include <algorithm>

#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

enum Tier { kEdge, kAgg, kCore };

// k = 0: the largest even k every tier's ports carry: an edge switch uses k/2 host ports and
// k/2 x m up ports, an aggregation and a core switch k x m ports.
int64_t arity(const TopologyConfig& cfg, const TierPorts& tp) {
  if (cfg.k > 0) return cfg.k;
  const int64_t m = cfg.links_per_pair;
  const int64_t k = std::min({tp[kAgg] / m, tp[kCore] / m, 2 * tp[kEdge] / (1 + m)});
  return k / 2 * 2;
}

void validate(const TopologyConfig& cfg, const config::Checker& c, const TierPorts& tp) {
  const std::string m = std::to_string(cfg.links_per_pair);
  const int64_t k = arity(cfg, tp);
  if (cfg.k == 0)
    c.require(k >= 2, "k",
              tp.uniform()
                  ? "0 takes the largest even k with k x links_per_pair (" + m +
                        ") <= switch.ports (" + std::to_string(tp[0]) + "), and none is >= 2"
                  : "0 takes the largest even k whose switches fit their ports (edge "
                    "k/2 x (1 + links_per_pair) <= " +
                        tp.is(kEdge) + ", aggregation and core k x links_per_pair <= " +
                        tp.is(kAgg) + ", " + tp.is(kCore) + "), and none is >= 2");
  c.require(
      k % 2 == 0, "k",
      "must be even (k/2 edge and k/2 aggregation switches per pod), got " + std::to_string(k));
  c.require(k >= 2, "k", "must be at least 2, got " + std::to_string(k));
  const char* key = cfg.links_per_pair > 1 ? "links_per_pair" : "k";
  const std::string uses = "uses k x topology.links_per_pair = " + std::to_string(k) + " x " + m +
                           " = " + std::to_string(k * cfg.links_per_pair) + " ports, but ";
  if (tp.uniform()) {  // the edge switch needs fewer ports than the other two
    c.require(k * cfg.links_per_pair <= tp[0], key,
              "an aggregation or core switch of a k=" + std::to_string(k) + " fat tree " + uses +
                  tp.is(0));
    return;
  }
  const int64_t edge = k / 2 * (1 + cfg.links_per_pair);
  c.require(edge <= tp[kEdge], key,
            "an edge switch of a k=" + std::to_string(k) +
                " fat tree uses k/2 host ports + k/2 x " + "topology.links_per_pair up ports = " +
                std::to_string(edge) + " ports, but " + tp.is(kEdge));
  c.require(
      k * cfg.links_per_pair <= tp[kAgg], key,
      "an aggregation switch of a k=" + std::to_string(k) + " fat tree " + uses + tp.is(kAgg));
  c.require(k * cfg.links_per_pair <= tp[kCore], key,
            "a core switch of a k=" + std::to_string(k) + " fat tree " + uses + tp.is(kCore));
}

int64_t hosts(const TopologyConfig& cfg, const TierPorts& tp) {
  const int64_t k = arity(cfg, tp);
  return k * k * k / 4;
}
int64_t switches(const TopologyConfig& cfg, const TierPorts& tp) {
  const int64_t k = arity(cfg, tp);
  return 5 * k * k / 4;
}

Topology build(const TopologyConfig& cfg, const TierPorts& tp, uint64_t seed) {
  const int k = static_cast<int>(arity(cfg, tp)), half = k / 2;
  const int m = static_cast<int>(cfg.links_per_pair);
  const int cores = half * half;
  Topology t;
  t.hosts = static_cast<int>(hosts(cfg, tp));
  auto edge = [&](int pod, int e) { return pod * k + e; };
  auto agg = [&](int pod, int a) { return pod * k + half + a; };
  auto core = [&](int c) { return k * k + c; };
  for (int pod = 0; pod < k; ++pod) {
    for (int e = 0; e < half; ++e)
      t.add_switch("pod" + std::to_string(pod) + "_edge" + std::to_string(e), seed, kEdge);
    for (int a = 0; a < half; ++a)
      t.add_switch("pod" + std::to_string(pod) + "_agg" + std::to_string(a), seed, kAgg);
  }
  for (int c = 0; c < cores; ++c) t.add_switch("core" + std::to_string(c), seed, kCore);

  t.switch_group.assign(t.switch_names.size(), -1);
  for (int pod = 0; pod < k; ++pod)
    for (int i = 0; i < k; ++i) t.switch_group[pod * k + i] = pod;
  for (int h = 0; h < t.hosts; ++h) {
    t.host_port.push_back({edge(h / (half * half), h / half % half), h % half});
    t.host_group.push_back(h / (half * half));
  }
  for (int pod = 0; pod < k; ++pod)
    for (int e = 0; e < half; ++e)
      for (int a = 0; a < half; ++a)
        for (int j = 0; j < m; ++j)
          t.add_wire({edge(pod, e), half + a * m + j}, {agg(pod, a), e * m + j});
  for (int pod = 0; pod < k; ++pod)
    for (int a = 0; a < half; ++a)
      for (int i = 0; i < half; ++i)
        for (int j = 0; j < m; ++j)
          t.add_wire({agg(pod, a), half * m + i * m + j}, {core(a * half + i), pod * m + j});

  std::vector<int> edge_up, agg_up;
  for (int i = 0; i < half * m; ++i) {
    edge_up.push_back(half + i);
    agg_up.push_back(half * m + i);
  }
  std::vector<int> down(m);
  auto parallel = [&](int first) -> const std::vector<int>& {
    for (int j = 0; j < m; ++j) down[j] = first + j;
    return down;
  };
  for (int h = 0; h < t.hosts; ++h) {
    const int hp = h / (half * half), he = h / half % half;
    for (int pod = 0; pod < k; ++pod) {
      for (int e = 0; e < half; ++e)
        t.set_route(edge(pod, e), h, pod == hp && e == he ? std::vector<int>{h % half} : edge_up);
      for (int a = 0; a < half; ++a)
        t.set_route(agg(pod, a), h, pod == hp ? parallel(he * m) : agg_up);
    }
    for (int c = 0; c < cores; ++c) t.set_route(core(c), h, parallel(hp * m));
  }
  t.tiers = {{"edge", k * half, half, half * m},
             {"aggregation", k * half, half * m, half * m},
             {"core", cores, k * m, 0}};
  t.max_switch_hops = 5;
  return t;
}

}  // namespace

const TopologyKind& fat_tree_kind() {
  static const TopologyKind kind{"fat_tree",
                                 "a 3-tier k-ary fat tree (Al-Fares 2008), ECMP up, "
                                 "deterministic down",
                                 {"k", "links_per_pair"},
                                 {"edge", "agg", "core"},
                                 {{kEdge, kAgg}, {kAgg, kCore}},
                                 validate,
                                 hosts,
                                 switches,
                                 build};
  return kind;
}

}  // namespace fabricsim::topo
