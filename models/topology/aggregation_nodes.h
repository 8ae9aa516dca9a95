// In-network reduction's places in the fabric: each switch whose chip aggregates
// (switch.aggregation) gets an aggregation unit, an endpoint of its own, and the units form the
// reduction tree allreduce_innet runs on (models/workload/innet_plan.h).
//
// Hardware: a SHARP Aggregation Node sits inside the switch ASIC and terminates reliable
// connections from its children (hosts, or the units of the switches below). Here the unit is a
// host on the chip's highest spare port, whose rate is the unit's reduce throughput, so its
// traffic crosses the real links and queues. Routes to it are minimal (shortest switch hops,
// ECMP over every equal-cost port), found on the switch graph, whatever the topology's kind.
#pragma once

#include <vector>

#include "models/topology/topology.h"

namespace fabricsim::topo {

// Adds a unit on every switch s with at[s] (t.aggregation_host set; the hosts from
// t.job_hosts() on). std::invalid_argument naming the switch when it has no spare port (no host,
// no wire on it), or when the topology routes by rails or dragonfly groups (not supported).
void add_aggregation_nodes(Topology& t, const std::vector<bool>& at);

// The reduction tree over the units: per switch, the switch whose unit is its parent (-1: the
// root, or no unit). The root is the first switch of the highest tier that has a unit; the tree
// is the breadth-first tree of the switch graph from it (a switch's parent: its lowest-numbered
// neighbour one hop nearer the root), with switches without a unit skipped over.
std::vector<int> aggregation_parents(const Topology& t);

}  // namespace fabricsim::topo
