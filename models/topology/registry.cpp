#include "models/topology/registry.h"

#include <algorithm>

namespace fabricsim::topo {

const std::vector<const TopologyKind*>& topology_kinds() {
  static const std::vector<const TopologyKind*> kinds = {
      &single_kind(),         &line_kind(),      &leaf_spine_kind(), &fat_tree_kind(),
      &rail_optimized_kind(), &rail_only_kind(), &dragonfly_kind()};
  return kinds;
}

std::vector<std::string> all_tier_names() {
  std::vector<std::string> names;
  for (const TopologyKind* k : topology_kinds())
    for (const char* t : k->tiers)
      if (std::find(names.begin(), names.end(), t) == names.end()) names.emplace_back(t);
  return names;
}

const TopologyKind* find_topology_kind(const std::string& name) {
  for (const TopologyKind* k : topology_kinds())
    if (name == k->name) return k;
  return nullptr;
}

}  // namespace fabricsim::topo
