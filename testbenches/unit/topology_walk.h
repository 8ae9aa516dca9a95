// Test helper for the topology tests: a packet's path through a Topology's forwarding tables.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "models/topology/topology.h"

namespace fabricsim::topo::testing {

// Follows the tables from src's switch to dst; returns the switches visited (or empty if a route
// is missing, leads to a port with nothing attached or to the wrong host, or loops).
inline std::vector<int> walk(const Topology& t, int src, int dst) {
  std::map<std::pair<int, int>, PortRef> peer;
  for (const auto& w : t.wires) {
    peer[{w.a.sw, w.a.port}] = w.b;
    peer[{w.b.sw, w.b.port}] = w.a;
  }
  std::map<std::pair<int, int>, int> host_at;
  for (int h = 0; h < t.hosts; ++h) host_at[{t.host_port[h].sw, t.host_port[h].port}] = h;
  Packet p;
  p.src = src;
  p.dst = dst;
  std::vector<int> path;
  int sw = t.host_port[src].sw;
  while (static_cast<int>(path.size()) <= t.switches()) {
    path.push_back(sw);
    const int port = t.tables[sw].lookup(p);
    if (port < 0) return {};
    if (auto h = host_at.find({sw, port}); h != host_at.end())
      return h->second == dst ? path : std::vector<int>{};
    auto next = peer.find({sw, port});
    if (next == peer.end()) return {};
    sw = next->second.sw;
  }
  return {};  // a loop
}

}  // namespace fabricsim::topo::testing
