// The registry of topology kinds: what `topology.kind` may name.
//
// Each kind lives in its own file (models/topology/<kind>.cpp) and describes itself with one
// TopologyKind: its name, a one-line description, the `topology.*` keys it reads, the checks of
// those keys against the chip's port count (exit 2 naming the keys and the numbers), its host
// and switch counts, and its builder. `topology.kind`'s choices and its description in the
// configuration reference come from here. The list is explicit (registry.cpp), not built by
// static constructors: a static library drops object files nothing refers to, and the order is
// the documentation's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/config/config.h"
#include "models/topology/topology.h"
#include "models/topology/topology_config.h"

namespace fabricsim::topo {

struct TopologyKind {
  const char* name;
  const char* description;        // one line, for the configuration reference
  std::vector<const char*> keys;  // the topology.* keys it reads (besides kind)
  // Its tiers of switches (each may be its own switch kind: topology.kinds.<tier>); the hosts
  // attach to the first. Builders number them in this order (Topology::switch_tier) and get a
  // port count per tier (TierPorts).
  std::vector<const char*> tiers;
  // The pairs of tiers (indices into `tiers`) that links join: their ports must run at one
  // speed. A tier linked to itself (line, dragonfly) is one pair (t, t).
  std::vector<std::pair<int, int>> tier_links;
  // Refuses, through `c` (keys relative to `topology`), a configuration whose tiers' `ports`
  // cannot build it.
  void (*validate)(const TopologyConfig& cfg, const config::Checker& c, const TierPorts& ports);
  int64_t (*hosts)(const TopologyConfig& cfg, const TierPorts& ports);
  int64_t (*switches)(const TopologyConfig& cfg, const TierPorts& ports);
  Topology (*build)(const TopologyConfig& cfg, const TierPorts& ports, uint64_t seed);
  bool all_pairs_routable = true;  // false: Topology::routable() refuses some pairs
};

// Every tier name of every kind, once, in registry order: the keys of topology.kinds.
std::vector<std::string> all_tier_names();

// Every kind, in documentation order.
const std::vector<const TopologyKind*>& topology_kinds();
// The kind named `name`, or nullptr.
const TopologyKind* find_topology_kind(const std::string& name);

// One accessor per kind file.
const TopologyKind& single_kind();
const TopologyKind& line_kind();
const TopologyKind& leaf_spine_kind();
const TopologyKind& fat_tree_kind();
const TopologyKind& rail_optimized_kind();
const TopologyKind& rail_only_kind();
const TopologyKind& dragonfly_kind();

}  // namespace fabricsim::topo
