#include "models/topology/topology.h"

#include "models/common/rng.h"

namespace fabricsim::topo {

namespace {

void add_switch(Topology& t, const std::string& name, int endpoints, uint64_t seed) {
  t.switch_names.push_back(name);
  t.tables.emplace_back(endpoints, Rng::derive(seed, name + ".ecmp").next_u64());
}

Topology single(int ports, uint64_t seed) {
  Topology t;
  t.hosts = ports;  // TopologyConfig::hosts()
  add_switch(t, "switch", ports, seed);
  for (int h = 0; h < ports; ++h) {
    t.host_port.push_back({0, h});
    t.tables[0].set(h, {h});
  }
  return t;
}

Topology line(const TopologyConfig& cfg, int ports, uint64_t seed) {
  const int n = static_cast<int>(cfg.switches);
  const int per = static_cast<int>(cfg.line_hosts(ports));
  Topology t;
  t.hosts = static_cast<int>(cfg.hosts(ports));
  // Ports: hosts 0..per-1, then the link to the left neighbour (if any), then to the right one.
  auto left_port = [&](int) { return per; };
  auto right_port = [&](int s) { return s == 0 ? per : per + 1; };
  for (int s = 0; s < n; ++s) add_switch(t, "s" + std::to_string(s), t.hosts, seed);
  for (int s = 0; s < n; ++s) {
    for (int k = 0; k < per; ++k) t.host_port.push_back({s, k});
    if (s + 1 < n) t.wires.push_back({{s, right_port(s)}, {s + 1, left_port(s + 1)}});
  }
  for (int s = 0; s < n; ++s)
    for (int h = 0; h < t.hosts; ++h) {
      const int hs = h / per;
      t.tables[s].set(h, {hs == s ? h % per : hs < s ? left_port(s) : right_port(s)});
    }
  return t;
}

Topology leaf_spine(const TopologyConfig& cfg, int ports, uint64_t seed) {
  const int leaves = static_cast<int>(cfg.leaves), spines = static_cast<int>(cfg.spines);
  const int per = static_cast<int>(cfg.leaf_hosts(ports));
  Topology t;
  t.hosts = static_cast<int>(cfg.hosts(ports));
  for (int l = 0; l < leaves; ++l) add_switch(t, "leaf" + std::to_string(l), t.hosts, seed);
  for (int s = 0; s < spines; ++s) add_switch(t, "spine" + std::to_string(s), t.hosts, seed);
  // Leaf l: hosts on ports 0..per-1, uplink to spine s on port per + s. Spine s: port l to leaf l.
  std::vector<int> uplinks;
  for (int s = 0; s < spines; ++s) uplinks.push_back(per + s);
  for (int l = 0; l < leaves; ++l) {
    for (int k = 0; k < per; ++k) t.host_port.push_back({l, k});
    for (int s = 0; s < spines; ++s) t.wires.push_back({{l, per + s}, {leaves + s, l}});
  }
  for (int h = 0; h < t.hosts; ++h) {
    const int hl = h / per;
    for (int l = 0; l < leaves; ++l)
      t.tables[l].set(h, hl == l ? std::vector<int>{h % per} : uplinks);
    for (int s = 0; s < spines; ++s) t.tables[leaves + s].set(h, {hl});
  }
  return t;
}

}  // namespace

Topology build_topology(const TopologyConfig& cfg, int ports, uint64_t seed) {
  switch (cfg.kind_enum()) {
    case Kind::kLine:
      return line(cfg, ports, seed);
    case Kind::kLeafSpine:
      return leaf_spine(cfg, ports, seed);
    case Kind::kSingle:
      break;
  }
  return single(ports, seed);
}

}  // namespace fabricsim::topo
