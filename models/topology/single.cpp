// `single`: one switch, host h on port h; the single-chip studies of the switch core.
#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

void validate(const TopologyConfig&, const config::Checker&, int64_t) {}
int64_t hosts(const TopologyConfig&, int64_t ports) {
  return ports;
}
int64_t switches(const TopologyConfig&, int64_t) {
  return 1;
}

Topology build(const TopologyConfig&, int ports, uint64_t seed) {
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
      "single", "one switch, a host on every port", {}, validate, hosts, switches, build};
  return k;
}

}  // namespace fabricsim::topo
