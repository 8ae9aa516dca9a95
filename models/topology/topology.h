// The wiring of a run: which switches exist, where each host attaches, which switch ports are
// joined by links, and every switch's forwarding table.
//
// Plain data built from a TopologyConfig and the switch's port count; the simulation elaborates
// SystemC modules from it and tests check routes on it without any kernel. Routing is shortest
// path: a line forwards towards the destination's switch; a leaf sends local traffic straight down
// and the rest up through an ECMP group over all spines (flow-hashed, so a flow stays on one
// path); a spine sends down to the destination's leaf.
#pragma once

#include <string>
#include <vector>

#include "models/switch/forwarding_table.h"
#include "models/topology/topology_config.h"

namespace fabricsim::topo {

struct PortRef {
  int sw = -1;  // switch index
  int port = -1;
};

// A bidirectional link between two switch ports.
struct Wire {
  PortRef a, b;
};

struct Topology {
  int hosts = 0;
  std::vector<std::string> switch_names;
  std::vector<sw::ForwardingTable> tables;  // per switch
  std::vector<PortRef> host_port;           // per host: where it attaches
  std::vector<Wire> wires;                  // switch-to-switch links
  int switches() const { return static_cast<int>(switch_names.size()); }
};

// `seed` salts each switch's ECMP hash (derived per switch name).
Topology build_topology(const TopologyConfig& cfg, int ports, uint64_t seed);

}  // namespace fabricsim::topo
