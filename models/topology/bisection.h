// Bisection bandwidth of a built topology (`fabricsim check` prints it): the smallest total
// capacity of the links, hosts' own links included, that a cut must sever to split the hosts into
// two halves.
//
// The exact minimum over every halving is NP-hard in general; this takes the halvings that the
// kinds' numbering makes the worst (hosts numbered by leaf, pod, group or server, so the first
// half by number, and the first half by group, fill whole leaves, pods or groups) and, for each,
// the minimum cut between its halves as a maximum flow (Dinic's algorithm) on the netlist:
// switches as nodes, each wire an undirected edge of its port speed, each switch joined to the
// source and the sink by its hosts of either half. The result is the smallest of those cuts: an
// upper bound on the true bisection, equal to it for the symmetric kinds (single, line,
// leaf_spine, fat_tree, dragonfly; unit tests hold it to their closed forms, docs/topologies.md).
// Cost: O(switches + wires) memory; each Dinic phase is a breadth-first search and a blocking
// flow, O(wires) for these layered networks, and a Clos or a tree needs a handful of phases
// (`phases` counts them), so the time grows with the netlist (a k = 64 fat tree: 131,072 wires).
// Plain C++, no kernel.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "models/topology/topology.h"

namespace fabricsim::topo {

struct Bisection {
  uint64_t bps = 0;       // the smallest cut found, bits/s (0 with fewer than 2 hosts)
  uint64_t full_bps = 0;  // hosts/2 x their links' speed: what a non-blocking fabric gives
  std::string split;      // the halving that gave it: "by host number" or "by group"
  int phases = 0;         // Dinic phases, over every halving tried
};

// `switch_port_bps[s]`: the speed of switch s's ports (a wire runs at the slower of its ends', a
// host's link at its switch's).
Bisection bisection(const Topology& t, const std::vector<uint64_t>& switch_port_bps);

// The maximum flow (= minimum cut) from node `source` to node `sink` of an undirected network of
// `nodes` nodes: edges (a, b, capacity). For tests and bisection(); `phases` gets Dinic's phases.
uint64_t max_flow(int nodes, const std::vector<std::tuple<int, int, uint64_t>>& edges, int source,
                  int sink, int* phases = nullptr);

}  // namespace fabricsim::topo
