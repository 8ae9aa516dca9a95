#include "models/topology/registry.h"

namespace fabricsim::topo {

const std::vector<const TopologyKind*>& topology_kinds() {
  static const std::vector<const TopologyKind*> kinds = {
      &single_kind(),         &line_kind(),      &leaf_spine_kind(), &fat_tree_kind(),
      &rail_optimized_kind(), &rail_only_kind(), &dragonfly_kind()};
  return kinds;
}

const TopologyKind* find_topology_kind(const std::string& name) {
  for (const TopologyKind* k : topology_kinds())
    if (name == k->name) return k;
  return nullptr;
}

}  // namespace fabricsim::topo
