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
#include <vector>

#include "models/config/config.h"
#include "models/topology/topology.h"
#include "models/topology/topology_config.h"

namespace fabricsim::topo {

struct TopologyKind {
  const char* name;
  const char* description;        // one line, for the configuration reference
  std::vector<const char*> keys;  // the topology.* keys it reads (besides kind)
  // Refuses, through `c` (keys relative to `topology`), a configuration the chip's `ports`
  // cannot build.
  void (*validate)(const TopologyConfig& cfg, const config::Checker& c, int64_t ports);
  int64_t (*hosts)(const TopologyConfig& cfg, int64_t ports);
  int64_t (*switches)(const TopologyConfig& cfg, int64_t ports);
  Topology (*build)(const TopologyConfig& cfg, int ports, uint64_t seed);
  bool all_pairs_routable = true;  // false: Topology::routable() refuses some pairs
};

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
