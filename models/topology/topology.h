// The wiring of a run: which switches exist, where each host attaches, which switch ports are
// joined by links, and every switch's forwarding table.
//
// Plain data built from a TopologyConfig and the switch's port count by the builder of the
// configured kind (models/topology/registry.h, one file per kind; docs/topologies.md has each
// kind's host numbering, port assignment and routing); the simulation elaborates SystemC modules
// from it and tests check routes on it without any kernel. Routing is minimal (shortest path),
// with ECMP groups (flow-hashed, so a flow stays on one path) wherever several equal-cost next
// hops exist. Every switch belongs to one tier of its kind (TopologyKind::tiers), and each tier
// may be a chip of its own (a switch kind: topology.kinds); builders get a port count per tier
// (TierPorts) and ports a builder leaves unused get terminators in the simulation.
#pragma once

#include <cstdint>
#include <map>
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
  int box = -1;  // a multi-chip box's internal link: the box (Topology::boxes); -1 otherwise
};

// One tier's multi-chip box (switch_kinds[].box; models/topology/box.h); leaves 0: the tier's
// switches are plain chips.
struct BoxSpec {
  int leaves = 0;
  int spines = 0;          // 0: a mesh, the leaves joined directly
  int links_per_pair = 0;  // internal links between each leaf and each spine (mesh: leaf pair)
  int front_ports = 0;     // the box's ports as the topology sees them: leaves x front_per_leaf()
  int chip_ports = 0;      // each chip's ports
  bool is_box() const { return leaves > 0; }
  int front_per_leaf() const { return leaves > 0 ? front_ports / leaves : 0; }
  int chips() const { return leaves + spines; }
  bool mesh() const { return spines == 0; }
  // A leaf's internal ports (after its front ports): to every spine, or to every other leaf.
  int uplinks() const { return (mesh() ? leaves - 1 : spines) * links_per_pair; }
  // Leaf l's first port towards leaf o (mesh): the others in order, links_per_pair each.
  int mesh_port(int l, int o) const {
    return front_per_leaf() + (o < l ? o : o - 1) * links_per_pair;
  }
};

// A box after expansion: its name (the switch the topology placed), its tier, its chips (switch
// indices, leaves first) and where each front-panel port is.
struct Box {
  std::string name;
  int tier = 0;
  BoxSpec spec;
  std::vector<int> chips;
  std::vector<PortRef> front;  // [front port] -> (leaf chip, port)
};

// One tier of switches and its oversubscription: per switch, `down` ports face the hosts (or the
// tier below) and `up` ports the tier above (or, in a dragonfly, the other routers and groups).
// Linked ports run at one speed (RunConfig refuses links between tiers of different port_speed),
// so the capacity ratio is the port ratio.
struct Tier {
  std::string name;
  int switches = 0;
  int down = 0;
  int up = 0;
  // down : up capacity, e.g. 3.0 for 3:1; 0 for a top tier (no uplinks).
  double ratio() const { return up > 0 ? static_cast<double>(down) / up : 0.0; }
};

struct Topology {
  int hosts = 0;
  std::vector<std::string> switch_names;
  // Per switch: its tier (index into its TopologyKind's tiers) and its chip's port count (every
  // port exists, used or not).
  std::vector<int> switch_tier;
  std::vector<int> switch_ports;
  std::vector<sw::ForwardingTable> tables;  // per switch
  std::vector<PortRef> host_port;           // per host: where it attaches
  std::vector<Wire> wires;                  // switch-to-switch links
  std::vector<Tier> tiers;                  // oversubscription per tier, hosts' tier first
  // The longest minimal path, in switches traversed (1: source and destination on one switch).
  int max_switch_hops = 1;

  // Multi-chip boxes (expand_boxes): each box, and per switch the box its chip is in (-1: a
  // switch of its own). Both empty when no tier is a box.
  std::vector<Box> boxes;
  std::vector<int> switch_box;

  // Groups, for adaptive (Valiant / UGAL) routing and per-group reports: a dragonfly's groups,
  // a fat tree's pods, a rail network's rails; -1 for a switch in no group (core, spine). Empty
  // for kinds without groups.
  std::vector<int> switch_group;
  std::vector<int> host_group;
  // group_port[a][b]: the port in group a whose link leads to group b directly (sw -1 if none):
  // a dragonfly's global links.
  std::vector<std::vector<PortRef>> group_port;

  // Pairs without a route (a rail-only network's cross-rail pairs): rail_of_host[src] !=
  // rail_of_host[dst]. Empty when every host reaches every other.
  std::vector<int> rail_of_host;
  std::string unroutable_rule;  // why, for the message that refuses such traffic

  // Endpoints added after the builder's hosts (aggregation_nodes.h): per switch, the host that is
  // its aggregation unit (-1: none); empty when no switch has one. Hosts from job_hosts() on are
  // such units.
  std::vector<int> aggregation_host;
  int job_hosts() const { return hosts - aggregation_units_; }

  int switches() const { return static_cast<int>(switch_names.size()); }
  bool routable(int src, int dst) const {
    return rail_of_host.empty() || rail_of_host[src] == rail_of_host[dst];
  }
  // The ECMP group switch `sw` forwards `dst` to (empty: no route). The same group as
  // tables[sw] holds, readable (what tests walk and adaptive routing would choose from).
  const std::vector<int>& route(int sw, int dst) const {
    return groups_[route_[static_cast<size_t>(sw) * hosts + dst]];
  }

  // For builders: a switch of tier `tier` with an empty table for `hosts` destinations (set `hosts`
  // first), its ECMP hash salted by `seed` and its name; returns its index.
  int add_switch(const std::string& name, uint64_t seed, int tier = 0);
  // Switch `sw` forwards `dst` to one of `ports` (an ECMP group when there are several).
  void set_route(int sw, int dst, const std::vector<int>& ports);
  void add_wire(PortRef a, PortRef b) { wires.push_back({a, b}); }
  // One more host, at `at`, without routes yet (every table gains a destination); returns its
  // index. For endpoints added after a builder (aggregation units), never by builders.
  int add_unit_host(PortRef at);

 private:
  std::vector<uint32_t> route_;                       // [sw * hosts + dst] -> index into groups_
  std::vector<std::vector<int>> groups_{{}};          // distinct groups; 0 is "no route"
  std::map<std::vector<int>, uint32_t> group_index_;  // groups_ by content (built once)
  int aggregation_units_ = 0;
};

// Builds the configured kind (cfg must have passed validate_ports for `ports`), filling
// switch_ports from the tiers' port counts. `seed` salts each switch's ECMP hash (derived per
// switch name). A tier with a box in `tier_box` (a box's `ports` are its front ports) is
// expanded into its chips (box.h), which get the box's chip_ports.
Topology build_topology(const TopologyConfig& cfg, const TierPorts& ports, uint64_t seed,
                        const std::vector<BoxSpec>& tier_box = {});

}  // namespace fabricsim::topo
