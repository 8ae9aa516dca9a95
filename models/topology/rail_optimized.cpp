// `rail_optimized`: the GPU cluster network of rails. `servers` servers of G = gpus_per_server
// GPUs, one NIC (one host) per GPU: host = server*G + r. NIC r of every server attaches to rail
// r's leaves: H = hosts_per_leaf servers per leaf (0 = the ports the spine uplinks leave free),
// L = ceil(servers / H) leaves per rail. Every leaf has one uplink to each of `spines` spines.
//
// Numbering (docs/topologies.md): leaf (r, j) is switch r*L + j, "rail<r>_leaf<j>", with server
// s's NIC r (s / H == j) on port s % H and spine uplink s on port H + s; spine s is switch
// G*L + s, "spine<s>", with leaf (r, j) on port r*L + j. Routing: a leaf sends its own hosts'
// traffic down and the rest up through one ECMP group over all spines; a spine sends down to
// the destination's leaf. Same-leaf traffic takes one switch, everything else three (also
// cross-rail traffic, which in a real cluster often crosses the server's NVLink instead).
#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

enum Tier { kLeaf, kSpine };

int64_t per_leaf(const TopologyConfig& cfg, int64_t ports) {
  return cfg.hosts_per_leaf > 0 ? cfg.hosts_per_leaf : ports - cfg.spines;
}
int64_t leaves_per_rail(const TopologyConfig& cfg, int64_t ports) {
  const int64_t h = per_leaf(cfg, ports);
  return h > 0 ? (cfg.servers + h - 1) / h : 0;
}

void validate(const TopologyConfig& cfg, const config::Checker& c, const TierPorts& tp) {
  const int64_t leaf = tp[kLeaf];
  c.require(cfg.spines < leaf, "spines",
            "a rail leaf needs a port per spine plus one for a NIC; " + tp.is(kLeaf));
  const int64_t h = per_leaf(cfg, leaf);
  c.require(h >= 1 && h + cfg.spines <= leaf, "hosts_per_leaf",
            "NICs (" + std::to_string(h) + ") plus " + std::to_string(cfg.spines) +
                " spine uplinks must fit in the " + std::to_string(leaf) + " leaf ports" +
                tp.of(kLeaf));
  const int64_t l = leaves_per_rail(cfg, leaf), n = cfg.gpus_per_server * l;
  c.require(n <= tp[kSpine], "gpus_per_server",
            "a spine has a port per rail leaf: " + std::to_string(cfg.gpus_per_server) +
                " rails (topology.gpus_per_server) x " + std::to_string(l) +
                " leaves per rail (topology.servers " + std::to_string(cfg.servers) + " / " +
                std::to_string(h) + " per leaf) = " + std::to_string(n) + " leaves, but " +
                tp.is(kSpine));
}

int64_t hosts(const TopologyConfig& cfg, const TierPorts&) {
  return cfg.servers * cfg.gpus_per_server;
}
int64_t switches(const TopologyConfig& cfg, const TierPorts& tp) {
  return cfg.gpus_per_server * leaves_per_rail(cfg, tp[kLeaf]) + cfg.spines;
}

Topology build(const TopologyConfig& cfg, const TierPorts& tp, uint64_t seed) {
  const int g = static_cast<int>(cfg.gpus_per_server), spines = static_cast<int>(cfg.spines);
  const int h = static_cast<int>(per_leaf(cfg, tp[kLeaf]));
  const int l = static_cast<int>(leaves_per_rail(cfg, tp[kLeaf]));
  Topology t;
  t.hosts = static_cast<int>(hosts(cfg, tp));
  for (int r = 0; r < g; ++r)
    for (int j = 0; j < l; ++j)
      t.add_switch("rail" + std::to_string(r) + "_leaf" + std::to_string(j), seed, kLeaf);
  for (int s = 0; s < spines; ++s) t.add_switch("spine" + std::to_string(s), seed, kSpine);
  const auto leaf_of = [&](int host) { return host % g * l + host / g / h; };
  for (int host = 0; host < t.hosts; ++host) {
    t.host_port.push_back({leaf_of(host), host / g % h});
    t.host_group.push_back(host % g);
  }
  t.switch_group.assign(t.switch_names.size(), -1);
  for (int leaf = 0; leaf < g * l; ++leaf) {
    t.switch_group[leaf] = leaf / l;
    for (int s = 0; s < spines; ++s) t.add_wire({leaf, h + s}, {g * l + s, leaf});
  }
  std::vector<int> uplinks;
  for (int s = 0; s < spines; ++s) uplinks.push_back(h + s);
  for (int host = 0; host < t.hosts; ++host) {
    for (int leaf = 0; leaf < g * l; ++leaf)
      t.set_route(leaf, host, leaf == leaf_of(host) ? std::vector<int>{host / g % h} : uplinks);
    for (int s = 0; s < spines; ++s) t.set_route(g * l + s, host, {leaf_of(host)});
  }
  t.tiers = {{"rail leaf", g * l, h, spines}, {"spine", spines, g * l, 0}};
  t.max_switch_hops = 3;
  return t;
}

}  // namespace

const TopologyKind& rail_optimized_kind() {
  static const TopologyKind k{"rail_optimized",
                              "GPU servers whose NIC r attaches to rail r's leaves, rails "
                              "joined by spines (ECMP)",
                              {"servers", "gpus_per_server", "hosts_per_leaf", "spines"},
                              {"rail_leaf", "spine"},
                              {{kLeaf, kSpine}},
                              validate,
                              hosts,
                              switches,
                              build};
  return k;
}

}  // namespace fabricsim::topo
