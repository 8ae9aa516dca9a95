#include "models/topology/topology_config.h"

namespace fabricsim::topo {

void TopologyConfig::visit(config::Visitor& v) {
  v.choice("kind", kind, "single", {"single", "line", "leaf_spine"},
           "single: one switch, a host on every port. line: switches in a chain. leaf_spine: a "
           "2-tier Clos with ECMP over the spines.");
  v.param("switches", switches, 2, 2, 64, "", "line: number of switches in the chain.");
  v.param("hosts_per_switch", hosts_per_switch, 0, 0, 4096, "",
          "line: hosts on each switch (ports 0..n-1); the next ports link to the left and right "
          "neighbours. 0 = all ports the links leave free.");
  v.param("leaves", leaves, 2, 1, 1024, "", "leaf_spine: number of leaf switches.");
  v.param("spines", spines, 2, 1, 1024, "",
          "leaf_spine: number of spine switches (one link from every leaf to every spine).");
  v.param("hosts_per_leaf", hosts_per_leaf, 0, 0, 4096, "",
          "leaf_spine: hosts on each leaf (ports 0..n-1; uplinks follow). 0 = all ports the "
          "uplinks leave free.");
}

Kind TopologyConfig::kind_enum() const {
  if (kind == "line") return Kind::kLine;
  if (kind == "leaf_spine") return Kind::kLeafSpine;
  return Kind::kSingle;
}

int64_t TopologyConfig::line_hosts(int64_t ports) const {
  // End switches need one neighbour port, middle ones two; every switch gets the same host count.
  const int64_t links = switches > 2 ? 2 : 1;
  return hosts_per_switch > 0 ? hosts_per_switch : ports - links;
}

int64_t TopologyConfig::leaf_hosts(int64_t ports) const {
  return hosts_per_leaf > 0 ? hosts_per_leaf : ports - spines;
}

int64_t TopologyConfig::hosts(int64_t ports) const {
  switch (kind_enum()) {
    case Kind::kLine:
      return switches * line_hosts(ports);
    case Kind::kLeafSpine:
      return leaves * leaf_hosts(ports);
    case Kind::kSingle:
      break;
  }
  return ports;
}

int64_t TopologyConfig::switch_count() const {
  switch (kind_enum()) {
    case Kind::kLine:
      return switches;
    case Kind::kLeafSpine:
      return leaves + spines;
    case Kind::kSingle:
      break;
  }
  return 1;
}

void TopologyConfig::validate_ports(const config::Checker& c, int64_t ports) const {
  const std::string p = std::to_string(ports);
  switch (kind_enum()) {
    case Kind::kSingle:
      break;
    case Kind::kLine: {
      const int64_t links = switches > 2 ? 2 : 1;
      c.require(line_hosts(ports) >= 1 && line_hosts(ports) + links <= ports,
                "topology.hosts_per_switch",
                "hosts plus " + std::to_string(links) + " neighbour link(s) must fit in the " + p +
                    " switch ports, with at least one host");
      break;
    }
    case Kind::kLeafSpine:
      c.require(spines < ports, "topology.spines",
                "a leaf needs a port per spine plus one for a host; switch.ports is " + p);
      c.require(
          leaf_hosts(ports) >= 1 && leaf_hosts(ports) + spines <= ports, "topology.hosts_per_leaf",
          "hosts plus " + std::to_string(spines) + " uplinks must fit in the " + p + " leaf ports");
      c.require(leaves <= ports, "topology.leaves",
                "a spine has one port per leaf; switch.ports is " + p);
      c.require(leaves >= 2, "topology.leaves", "a leaf-spine needs at least 2 leaves");
      break;
  }
}

}  // namespace fabricsim::topo
