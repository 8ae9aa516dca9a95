// `single`: one switch, host h on port h; the single-chip studies of the switch core.
#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

void validate(const TopologyConfig&, const config::Checker&, const TierPorts&) {}
int64_t hosts(const TopologyConfig&, const TierPorts& ports) {
  return ports[0];
}
int64_t switches(const TopologyConfig&, const TierPorts&) {
  return 1;
}

Topology build(const TopologyConfig&, const TierPorts& tier_ports, uint64_t seed) {
  const int ports = static_cast<int>(tier_ports[0]);
  Topology t;
  t.hosts = ports;
  t.add_switch("switch", seed);
  for (int h = 0; h < ports; ++h) {
    t.host_port.push_back({0, h});
    t.set_route(0, h, {h});
  }
  t.tiers = {{"switch", 1, ports, 0}};
  t.max_switch_hops = 1;
  return t;
}

}  // namespace

const TopologyKind& single_kind() {
  static const TopologyKind k{
      "single", "one switch, a host on every port", {}, {"switch"}, {}, validate, hosts, switches,
      build};
  return k;
}

}  // namespace fabricsim::topo
