// Configuration of the network around the switch chips (the `topology:` section).
//
// One switch chip configuration (`switch:`) is instantiated as many times as the topology needs;
// hosts are traffic endpoints attached to switch ports, numbered 0..hosts-1 across the whole
// topology (traffic patterns address them by these numbers). `kind` names one of the kinds of
// the registry (models/topology/registry.h; docs/topologies.md): single, line, leaf_spine,
// fat_tree, rail_optimized, rail_only, dragonfly. The keys below are shared by the kinds that
// use them; each kind checks its own against the switch's port count.
#pragma once

#include <string>

#include "models/config/config.h"

namespace fabricsim::topo {

struct TopologyKind;

struct TopologyConfig : config::Configurable {
  std::string kind;  // a registered kind; "" (a config built in code) = single
  int64_t switches = 2;
  int64_t hosts_per_switch = 0;  // line; 0 = every port not used by a switch-to-switch link
  int64_t leaves = 2;
  int64_t spines = 2;          // leaf_spine, rail_optimized
  int64_t hosts_per_leaf = 0;  // leaf_spine, rail_optimized; 0 = every port uplinks leave free
  int64_t links_per_pair = 1;  // leaf_spine, fat_tree: parallel wires per connected switch pair
  int64_t k = 0;               // fat_tree: arity; 0 = the most that fits in switch.ports
  int64_t servers = 4;         // rail_optimized, rail_only
  int64_t gpus_per_server = 8;
  int64_t routers_per_group = 4;  // dragonfly: a
  int64_t hosts_per_router = 2;   // p
  int64_t global_links = 2;       // h, per router
  int64_t groups = 0;             // g; 0 = a*h + 1

  void visit(config::Visitor& v) override;
  // Checks that depend on the switch's port count (refuses, through `c`, what cannot be built).
  void validate_ports(const config::Checker& c, int64_t ports) const;

  const TopologyKind& kind_info() const;
  // Hosts per line switch / per leaf, with 0 resolved against the switch's port count.
  int64_t line_hosts(int64_t ports) const;
  int64_t leaf_hosts(int64_t ports) const;
  // Hosts in the whole topology (the traffic endpoints), and switch chips.
  int64_t hosts(int64_t ports) const;
  int64_t switch_count(int64_t ports) const;
  // False if some host pairs have no route (Topology::routable; the run refuses traffic that
  // would use one).
  bool all_pairs_routable() const;
};

}  // namespace fabricsim::topo
