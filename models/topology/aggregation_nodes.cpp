#include "models/topology/aggregation_nodes.h"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>

namespace fabricsim::topo {

namespace {

// Per switch: (neighbour, local port) for every wire.
std::vector<std::vector<std::pair<int, int>>> adjacency(const Topology& t) {
  std::vector<std::vector<std::pair<int, int>>> adj(static_cast<size_t>(t.switches()));
  for (const Wire& w : t.wires) {
    adj[w.a.sw].push_back({w.b.sw, w.a.port});
    adj[w.b.sw].push_back({w.a.sw, w.b.port});
  }
  for (auto& a : adj) std::sort(a.begin(), a.end());
  return adj;
}

// Switch hops from `from` to every switch (-1: unreachable).
std::vector<int> distances(const std::vector<std::vector<std::pair<int, int>>>& adj, int from) {
  std::vector<int> d(adj.size(), -1);
  std::deque<int> q{from};
  d[from] = 0;
  while (!q.empty()) {
    const int u = q.front();
    q.pop_front();
    for (const auto& [v, port] : adj[u])
      if (d[v] < 0) {
        d[v] = d[u] + 1;
        q.push_back(v);
      }
  }
  return d;
}

}  // namespace

void add_aggregation_nodes(Topology& t, const std::vector<bool>& at) {
  if (!t.rail_of_host.empty() || !t.group_port.empty())
    throw std::invalid_argument(
        "switch.aggregation: this topology routes by rails or dragonfly groups; aggregation "
        "units are supported on trees (single, line, leaf_spine, fat_tree, rail_optimized)");
  const int n = t.switches();
  std::vector<std::vector<bool>> used(static_cast<size_t>(n));
  for (int s = 0; s < n; ++s) used[s].assign(static_cast<size_t>(t.switch_ports[s]), false);
  for (const PortRef& p : t.host_port) used[p.sw][p.port] = true;
  for (const Wire& w : t.wires) {
    used[w.a.sw][w.a.port] = true;
    used[w.b.sw][w.b.port] = true;
  }
  const auto adj = adjacency(t);
  t.aggregation_host.assign(static_cast<size_t>(n), -1);
  for (int s = 0; s < n; ++s) {
    if (!at[s]) continue;
    int port = t.switch_ports[s] - 1;
    while (port >= 0 && used[s][port]) --port;
    if (port < 0)
      throw std::invalid_argument("switch.aggregation: switch " + t.switch_names[s] +
                                  " has no spare port for its " + "aggregation unit (all " +
                                  std::to_string(t.switch_ports[s]) +
                                  " ports hold hosts or links): give its chip more ports");
    const int h = t.add_unit_host({s, port});
    t.aggregation_host[s] = h;
    // Minimal routes to the unit: towards every neighbour one hop nearer.
    const std::vector<int> d = distances(adj, s);
    for (int u = 0; u < n; ++u) {
      if (u == s) {
        t.set_route(u, h, {port});
        continue;
      }
      if (d[u] < 0) continue;
      std::vector<int> ports;
      for (const auto& [v, p] : adj[u])
        if (d[v] == d[u] - 1) ports.push_back(p);
      std::sort(ports.begin(), ports.end());
      t.set_route(u, h, ports);
    }
  }
}

std::vector<int> aggregation_parents(const Topology& t) {
  const int n = t.switches();
  std::vector<int> parent(static_cast<size_t>(n), -1);
  if (t.aggregation_host.empty()) return parent;
  int root = -1;
  for (int s = 0; s < n; ++s)
    if (t.aggregation_host[s] >= 0 && (root < 0 || t.switch_tier[s] > t.switch_tier[root]))
      root = s;
  if (root < 0) return parent;
  // Breadth-first from the root, neighbours in increasing order: the first to reach a switch is
  // its lowest-numbered neighbour one hop nearer.
  const auto adj = adjacency(t);
  std::vector<int> up(static_cast<size_t>(n), -1);
  std::vector<bool> seen(static_cast<size_t>(n), false);
  std::deque<int> q{root};
  seen[root] = true;
  while (!q.empty()) {
    const int u = q.front();
    q.pop_front();
    for (const auto& [v, port] : adj[u])
      if (!seen[v]) {
        seen[v] = true;
        up[v] = u;
        q.push_back(v);
      }
  }
  for (int s = 0; s < n; ++s) {
    if (s == root || t.aggregation_host[s] < 0) continue;
    int a = up[s];
    while (a >= 0 && t.aggregation_host[a] < 0) a = up[a];
    parent[s] = a;
  }
  return parent;
}

}  // namespace fabricsim::topo
