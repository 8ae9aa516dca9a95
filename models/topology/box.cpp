#include "models/topology/box.h"

#include <map>
#include <utility>

namespace fabricsim::topo {

namespace {

// The chips' routes for destination `dst` of box b, whose route (front ports) is `front`.
void route_box(Topology& n, const Box& b, int dst, const std::vector<int>& front) {
  if (front.empty()) return;  // no route (a rail-only network's cross-rail pair)
  const BoxSpec& s = b.spec;
  const int f = s.front_per_leaf(), m = s.links_per_pair;
  std::vector<std::vector<int>> local(static_cast<size_t>(s.leaves));
  for (int p : front) local[static_cast<size_t>(p / f)].push_back(p % f);
  if (s.mesh()) {  // straight to the leaves that hold the destination's front ports
    for (int l = 0; l < s.leaves; ++l) {
      std::vector<int> ports = local[static_cast<size_t>(l)];
      if (ports.empty())
        for (int o = 0; o < s.leaves; ++o)
          if (o != l && !local[static_cast<size_t>(o)].empty())
            for (int j = 0; j < m; ++j) ports.push_back(s.mesh_port(l, o) + j);
      n.set_route(b.chips[static_cast<size_t>(l)], dst, ports);
    }
    return;
  }
  std::vector<int> up, down;
  for (int sp = 0; sp < s.spines; ++sp)
    for (int j = 0; j < m; ++j) up.push_back(f + sp * m + j);
  for (int l = 0; l < s.leaves; ++l) {
    const auto& here = local[static_cast<size_t>(l)];
    n.set_route(b.chips[static_cast<size_t>(l)], dst, here.empty() ? up : here);
    if (!here.empty())
      for (int j = 0; j < m; ++j) down.push_back(l * m + j);
  }
  for (int sp = 0; sp < s.spines; ++sp)
    n.set_route(b.chips[static_cast<size_t>(s.leaves + sp)], dst, down);
}

// The most switches a packet from host 0 crosses to any host (first port of each ECMP group):
// the topologies are symmetric, and a box adds its chips to the paths that cross it.
int longest_path(const Topology& n) {
  std::map<std::pair<int, int>, PortRef> peer;
  for (const Wire& w : n.wires) {
    peer[{w.a.sw, w.a.port}] = w.b;
    peer[{w.b.sw, w.b.port}] = w.a;
  }
  int longest = 1;
  for (int dst = 1; dst < n.hosts; ++dst) {
    if (!n.routable(0, dst)) continue;
    int sw = n.host_port[0].sw, hops = 1;
    while (hops <= n.switches()) {
      const auto& g = n.route(sw, dst);
      if (g.empty()) break;
      const auto it = peer.find({sw, g[0]});
      if (it == peer.end()) break;  // out to the host
      sw = it->second.sw;
      ++hops;
    }
    longest = std::max(longest, hops);
  }
  return longest;
}

}  // namespace

Topology expand_boxes(const Topology& t, const std::vector<BoxSpec>& tier_box, uint64_t seed) {
  const auto box_of_tier = [&](int tier) {
    return static_cast<size_t>(tier) < tier_box.size() &&
                   tier_box[static_cast<size_t>(tier)].is_box()
               ? &tier_box[static_cast<size_t>(tier)]
               : nullptr;
  };
  Topology n;
  n.hosts = t.hosts;
  std::vector<int> plain(static_cast<size_t>(t.switches()), -1), box(plain);
  for (int s = 0; s < t.switches(); ++s) {
    const int tier = t.switch_tier[static_cast<size_t>(s)];
    const BoxSpec* spec = box_of_tier(tier);
    if (!spec) {
      plain[static_cast<size_t>(s)] =
          n.add_switch(t.switch_names[static_cast<size_t>(s)], seed, tier);
      n.switch_ports.push_back(t.switch_ports[static_cast<size_t>(s)]);
      n.switch_box.push_back(-1);
      continue;
    }
    Box b;
    b.name = t.switch_names[static_cast<size_t>(s)];
    b.tier = tier;
    b.spec = *spec;
    box[static_cast<size_t>(s)] = static_cast<int>(n.boxes.size());
    for (int c = 0; c < spec->chips(); ++c) {
      const bool leaf = c < spec->leaves;
      const std::string name = b.name + (leaf ? ".leaf" + std::to_string(c)
                                              : ".spine" + std::to_string(c - spec->leaves));
      b.chips.push_back(n.add_switch(name, seed, tier));
      n.switch_ports.push_back(spec->chip_ports);
      n.switch_box.push_back(static_cast<int>(n.boxes.size()));
    }
    const int f = spec->front_per_leaf();
    for (int p = 0; p < spec->front_ports; ++p)
      b.front.push_back({b.chips[static_cast<size_t>(p / f)], p % f});
    n.boxes.push_back(std::move(b));
  }
  // Where a port of the topology's switch is now.
  const auto remap = [&](PortRef r) -> PortRef {
    if (r.sw < 0) return r;
    const int b = box[static_cast<size_t>(r.sw)];
    return b < 0 ? PortRef{plain[static_cast<size_t>(r.sw)], r.port}
                 : n.boxes[static_cast<size_t>(b)].front[static_cast<size_t>(r.port)];
  };
  for (const PortRef& h : t.host_port) n.host_port.push_back(remap(h));
  for (const Wire& w : t.wires) n.wires.push_back({remap(w.a), remap(w.b), w.box});
  for (size_t b = 0; b < n.boxes.size(); ++b) {
    const Box& x = n.boxes[b];
    const int f = x.spec.front_per_leaf(), m = x.spec.links_per_pair;
    if (x.spec.mesh())
      for (int l = 0; l < x.spec.leaves; ++l)
        for (int o = l + 1; o < x.spec.leaves; ++o)
          for (int j = 0; j < m; ++j)
            n.wires.push_back({{x.chips[static_cast<size_t>(l)], x.spec.mesh_port(l, o) + j},
                               {x.chips[static_cast<size_t>(o)], x.spec.mesh_port(o, l) + j},
                               static_cast<int>(b)});
    for (int l = 0; l < x.spec.leaves; ++l)
      for (int sp = 0; sp < x.spec.spines; ++sp)
        for (int j = 0; j < m; ++j)
          n.wires.push_back({{x.chips[static_cast<size_t>(l)], f + sp * m + j},
                             {x.chips[static_cast<size_t>(x.spec.leaves + sp)], l * m + j},
                             static_cast<int>(b)});
  }
  for (int s = 0; s < t.switches(); ++s)
    for (int dst = 0; dst < t.hosts; ++dst) {
      const std::vector<int>& g = t.route(s, dst);
      const int b = box[static_cast<size_t>(s)];
      if (b >= 0)
        route_box(n, n.boxes[static_cast<size_t>(b)], dst, g);
      else if (!g.empty())
        n.set_route(plain[static_cast<size_t>(s)], dst, g);
    }
  if (!t.switch_group.empty())
    for (int s = 0; s < t.switches(); ++s) {
      const int b = box[static_cast<size_t>(s)];
      const int copies = b < 0 ? 1 : n.boxes[static_cast<size_t>(b)].spec.chips();
      for (int c = 0; c < copies; ++c)
        n.switch_group.push_back(t.switch_group[static_cast<size_t>(s)]);
    }
  n.host_group = t.host_group;
  n.group_port = t.group_port;
  for (auto& row : n.group_port)
    for (auto& r : row) r = remap(r);
  n.rail_of_host = t.rail_of_host;
  n.unroutable_rule = t.unroutable_rule;
  n.tiers = t.tiers;
  n.max_switch_hops = longest_path(n);
  return n;
}

}  // namespace fabricsim::topo
