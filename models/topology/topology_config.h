// Configuration of the network around the switch chips (the `topology:` section).
//
// One switch chip configuration (`switch:`) is instantiated as many times as the topology needs;
// hosts are traffic endpoints attached to switch ports, numbered 0..hosts-1 across the whole
// topology (traffic patterns address them by these numbers). Kinds:
//   single     - one switch, one host per port (the single-chip studies of the switch core);
//   line       - `switches` switches in a chain, `hosts_per_switch` hosts on each: back-pressure
//                that has to cross several hops;
//   leaf_spine - a 2-tier Clos: `leaves` leaf switches with `hosts_per_leaf` hosts and one link
//                to each of `spines` spine switches; ECMP over the spines.
#pragma once

#include <string>

#include "models/config/config.h"

namespace fabricsim::topo {

enum class Kind { kSingle, kLine, kLeafSpine };

struct TopologyConfig : config::Configurable {
  std::string kind;  // single | line | leaf_spine
  int64_t switches = 2;
  int64_t hosts_per_switch = 0;  // line; 0 = every port not used by a switch-to-switch link
  int64_t leaves = 2;
  int64_t spines = 2;
  int64_t hosts_per_leaf = 0;  // leaf_spine; 0 = every port not used by an uplink

  void visit(config::Visitor& v) override;
  // Checks that depend on the switch's port count.
  void validate_ports(const config::Checker& c, int64_t ports) const;

  Kind kind_enum() const;
  // Hosts per line switch / per leaf, with 0 resolved against the switch's port count.
  int64_t line_hosts(int64_t ports) const;
  int64_t leaf_hosts(int64_t ports) const;
  // Hosts in the whole topology (the traffic endpoints), and switch chips.
  int64_t hosts(int64_t ports) const;
  int64_t switch_count() const;
};

}  // namespace fabricsim::topo
