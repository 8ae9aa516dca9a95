// Configuration of the network around the switch chips (the `topology:` section).
//
// One switch chip configuration (`switch:`) is instantiated as many times as the topology needs,
// except in the tiers `kinds` gives another chip (a switch kind, `switch_kinds:`); hosts are
// traffic endpoints attached to switch ports, numbered 0..hosts-1 across the whole topology
// (traffic patterns address them by these numbers). `kind` names one of the kinds of the registry
// (models/topology/registry.h; docs/topologies.md): single, line, leaf_spine, fat_tree,
// rail_optimized, rail_only, dragonfly. The keys below are shared by the kinds that use them; each
// kind checks its own against the switch's port count.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/config/config.h"

namespace fabricsim::topo {

struct TopologyKind;

// The port count of each tier of switches of a topology kind (TopologyKind::tiers order), and the
// key that sets it, for messages: every tier the same chip (`switch.ports`, converted from one
// number), or per tier the chip of its switch kind (`switch_kinds[1].ports`).
class TierPorts {
 public:
  TierPorts(int64_t ports) : all_(ports) {}  // NOLINT: implicit, every tier `ports`
  // Per tier: its port count, the key that set it and its switch kind's name ("": switch:).
  TierPorts(std::vector<int64_t> ports, std::vector<std::string> keys,
            std::vector<std::string> kinds)
      : ports_(std::move(ports)), keys_(std::move(keys)), kinds_(std::move(kinds)) {}
  int64_t operator[](size_t tier) const { return ports_.empty() ? all_ : ports_.at(tier); }
  // Every tier the switch: chip (one number given).
  bool uniform() const { return ports_.empty(); }
  // For messages: "switch.ports", or "switch_kinds[1].ports (kind spine)".
  std::string named(size_t tier) const;
  // "switch.ports is 64": what a message refusing a tier's ports ends with.
  std::string is(size_t tier) const { return named(tier) + " is " + std::to_string((*this)[tier]); }
  // " (switch_kinds[1].ports, kind spine)" after "the 8 leaf ports"; "" when uniform.
  std::string of(size_t tier) const;
  // The most ports any tier has.
  int64_t max() const;

 private:
  int64_t all_ = 0;
  std::vector<int64_t> ports_;
  std::vector<std::string> keys_, kinds_;
};

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
  // topology.kinds: per tier name (every kind's tiers, TopologyKind::tiers), the switch kind
  // (switch_kinds[].name) its switches are; "" = the `switch:` chip.
  std::map<std::string, std::string> tier_kinds;

  void visit(config::Visitor& v) override;
  // Checks that depend on the switches' port counts (refuses, through `c`, what cannot be built).
  void validate_ports(const config::Checker& c, const TierPorts& ports) const;
  // Refuses a topology.kinds entry for a tier this kind does not have, or naming a switch kind
  // not among `kind_names` (switch_kinds[].name).
  void validate_tier_kinds(const config::Checker& c,
                           const std::vector<std::string>& kind_names) const;
  // The switch kind of tier `tier` of the configured kind ("" = the switch: chip).
  std::string tier_kind(size_t tier) const;

  const TopologyKind& kind_info() const;
  // Hosts per line switch / per leaf, with 0 resolved against the switch's port count.
  int64_t line_hosts(int64_t ports) const;
  int64_t leaf_hosts(int64_t ports) const;
  // Hosts in the whole topology (the traffic endpoints), and switch chips.
  int64_t hosts(const TierPorts& ports) const;
  int64_t switch_count(const TierPorts& ports) const;
  // False if some host pairs have no route (Topology::routable; the run refuses traffic that
  // would use one).
  bool all_pairs_routable() const;
};

}  // namespace fabricsim::topo
