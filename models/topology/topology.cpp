#include "models/topology/topology.h"

#include "models/common/rng.h"
#include "models/topology/box.h"
#include "models/topology/registry.h"

namespace fabricsim::topo {

int Topology::add_switch(const std::string& name, uint64_t seed, int tier) {
  switch_names.push_back(name);
  switch_tier.push_back(tier);
  tables.emplace_back(hosts, Rng::derive(seed, name + ".ecmp").next_u64());
  route_.resize(switch_names.size() * static_cast<size_t>(hosts), 0);
  return switches() - 1;
}

void Topology::set_route(int sw, int dst, const std::vector<int>& ports) {
  tables[sw].set(dst, ports);
  auto [it, added] = group_index_.emplace(ports, static_cast<uint32_t>(groups_.size()));
  if (added) groups_.push_back(ports);
  route_[static_cast<size_t>(sw) * hosts + dst] = it->second;
}

int Topology::add_unit_host(PortRef at) {
  const int old = hosts++;
  std::vector<uint32_t> route(static_cast<size_t>(switches()) * hosts, 0);
  for (int s = 0; s < switches(); ++s)
    for (int d = 0; d < old; ++d)
      route[static_cast<size_t>(s) * hosts + d] = route_[static_cast<size_t>(s) * old + d];
  route_.swap(route);
  for (auto& t : tables) t.add_destination();
  host_port.push_back(at);
  if (!host_group.empty()) host_group.push_back(switch_group.empty() ? -1 : switch_group[at.sw]);
  ++aggregation_units_;
  return old;
}

Topology build_topology(const TopologyConfig& cfg, const TierPorts& ports, uint64_t seed,
                        const std::vector<BoxSpec>& tier_box) {
  Topology t = cfg.kind_info().build(cfg, ports, seed);
  for (int tier : t.switch_tier) t.switch_ports.push_back(static_cast<int>(ports[tier]));
  for (const BoxSpec& b : tier_box)
    if (b.is_box()) return expand_boxes(t, tier_box, seed);
  return t;
}

}  // namespace fabricsim::topo
