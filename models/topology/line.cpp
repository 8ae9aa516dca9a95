// `line`: switches in a chain, the same number of hosts on each; back-pressure that has to cross
// several hops. Switch s ("s<s>") has hosts s*per .. s*per+per-1 on ports 0..per-1, then the
// link to its left neighbour (if any), then to its right one.
#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

int64_t links(const TopologyConfig& cfg) {
  return cfg.switches > 2 ? 2 : 1;
}

void validate(const TopologyConfig& cfg, const config::Checker& c, const TierPorts& tp) {
  const int64_t ports = tp[0];
  c.require(cfg.line_hosts(ports) >= 1 && cfg.line_hosts(ports) + links(cfg) <= ports,
            "hosts_per_switch",
            "hosts plus " + std::to_string(links(cfg)) + " neighbour link(s) must fit in the " +
                std::to_string(ports) + " switch ports" + tp.of(0) + ", with at least one host");
}

int64_t hosts(const TopologyConfig& cfg, const TierPorts& tp) {
  return cfg.switches * cfg.line_hosts(tp[0]);
}
int64_t switches(const TopologyConfig& cfg, const TierPorts&) {
  return cfg.switches;
}

Topology build(const TopologyConfig& cfg, const TierPorts& tp, uint64_t seed) {
  const int n = static_cast<int>(cfg.switches);
  const int per = static_cast<int>(cfg.line_hosts(tp[0]));
  Topology t;
  t.hosts = static_cast<int>(hosts(cfg, tp));
  auto left_port = [&](int) { return per; };
  auto right_port = [&](int s) { return s == 0 ? per : per + 1; };
  for (int s = 0; s < n; ++s) t.add_switch("s" + std::to_string(s), seed);
  for (int s = 0; s < n; ++s) {
    for (int k = 0; k < per; ++k) t.host_port.push_back({s, k});
    if (s + 1 < n) t.add_wire({s, right_port(s)}, {s + 1, left_port(s + 1)});
  }
  for (int s = 0; s < n; ++s)
    for (int h = 0; h < t.hosts; ++h) {
      const int hs = h / per;
      t.set_route(s, h, {hs == s ? h % per : hs < s ? left_port(s) : right_port(s)});
    }
  // A middle switch's two links carry everything crossing it; the ratio is its hosts to them.
  t.tiers = {{"switch", n, per, static_cast<int>(links(cfg))}};
  t.max_switch_hops = n;
  return t;
}

}  // namespace

const TopologyKind& line_kind() {
  static const TopologyKind k{"line",
                              "switches in a chain",
                              {"switches", "hosts_per_switch"},
                              {"switch"},
                              {{0, 0}},
                              validate,
                              hosts,
                              switches,
                              build};
  return k;
}

}  // namespace fabricsim::topo
