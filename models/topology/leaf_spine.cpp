// `leaf_spine`: a 2-tier Clos. Leaf l ("leaf<l>") has hosts l*per .. l*per+per-1 on ports
// 0..per-1 and m = links_per_pair links to every spine s on ports per + s*m + j (j < m); spine s
// ("spine<s>") reaches leaf l on ports l*m + j. A leaf sends local traffic straight down and the
// rest up through one ECMP group over all its uplinks; a spine sends down to the destination's
// leaf (ECMP over the m parallel links).
#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

enum Tier { kLeaf, kSpine };

void validate(const TopologyConfig& cfg, const config::Checker& c, const TierPorts& tp) {
  const int64_t leaf = tp[kLeaf], spine = tp[kSpine];
  const int64_t m = cfg.links_per_pair, up = cfg.spines * m;
  if (m == 1)
    c.require(cfg.spines < leaf, "spines",
              "a leaf needs a port per spine plus one for a host; " + tp.is(kLeaf));
  else
    c.require(up < leaf, "links_per_pair",
              "a leaf needs " + std::to_string(m) + " ports per spine (" +
                  std::to_string(cfg.spines) + " topology.spines) plus one for a host; " +
                  tp.is(kLeaf));
  c.require(cfg.leaf_hosts(leaf) >= 1 && cfg.leaf_hosts(leaf) + up <= leaf, "hosts_per_leaf",
            "hosts plus " + std::to_string(up) + " uplinks must fit in the " +
                std::to_string(leaf) + " leaf ports" + tp.of(kLeaf));
  if (m == 1)
    c.require(cfg.leaves <= spine, "leaves",
              "a spine has one port per leaf: " + std::to_string(cfg.leaves) + " leaves need " +
                  std::to_string(cfg.leaves) + " but " + tp.is(kSpine));
  else
    c.require(cfg.leaves * m <= spine, "leaves",
              "a spine has " + std::to_string(m) +
                  " ports (topology.links_per_pair) per leaf: " + std::to_string(cfg.leaves) +
                  " leaves need " + std::to_string(cfg.leaves * m) + " but " + tp.is(kSpine));
  c.require(cfg.leaves >= 2, "leaves", "a leaf-spine needs at least 2 leaves");
}

int64_t hosts(const TopologyConfig& cfg, const TierPorts& tp) {
  return cfg.leaves * cfg.leaf_hosts(tp[kLeaf]);
}
int64_t switches(const TopologyConfig& cfg, const TierPorts&) {
  return cfg.leaves + cfg.spines;
}

Topology build(const TopologyConfig& cfg, const TierPorts& tp, uint64_t seed) {
  const int leaves = static_cast<int>(cfg.leaves), spines = static_cast<int>(cfg.spines);
  const int m = static_cast<int>(cfg.links_per_pair);
  const int per = static_cast<int>(cfg.leaf_hosts(tp[kLeaf]));
  Topology t;
  t.hosts = static_cast<int>(hosts(cfg, tp));
  for (int l = 0; l < leaves; ++l) t.add_switch("leaf" + std::to_string(l), seed, kLeaf);
  for (int s = 0; s < spines; ++s) t.add_switch("spine" + std::to_string(s), seed, kSpine);
  std::vector<int> uplinks;
  for (int s = 0; s < spines; ++s)
    for (int j = 0; j < m; ++j) uplinks.push_back(per + s * m + j);
  for (int l = 0; l < leaves; ++l) {
    for (int k = 0; k < per; ++k) t.host_port.push_back({l, k});
    for (int s = 0; s < spines; ++s)
      for (int j = 0; j < m; ++j) t.add_wire({l, per + s * m + j}, {leaves + s, l * m + j});
  }
  for (int h = 0; h < t.hosts; ++h) {
    const int hl = h / per;
    for (int l = 0; l < leaves; ++l)
      t.set_route(l, h, hl == l ? std::vector<int>{h % per} : uplinks);
    std::vector<int> down;
    for (int j = 0; j < m; ++j) down.push_back(hl * m + j);
    for (int s = 0; s < spines; ++s) t.set_route(leaves + s, h, down);
  }
  t.tiers = {{"leaf", leaves, per, spines * m}, {"spine", spines, leaves * m, 0}};
  t.max_switch_hops = 3;
  return t;
}

}  // namespace

const TopologyKind& leaf_spine_kind() {
  static const TopologyKind k{"leaf_spine",
                              "a 2-tier Clos with ECMP over the spines",
                              {"leaves", "spines", "hosts_per_leaf", "links_per_pair"},
                              {"leaf", "spine"},
                              {{kLeaf, kSpine}},
                              validate,
                              hosts,
                              switches,
                              build};
  return k;
}

}  // namespace fabricsim::topo
