// In-network reduction as the workload layer sees the fabric: which aggregation unit (a switch's
// SHARP-like Aggregation Node, models/topology/aggregation_nodes.h) each job rank hangs under, the
// units' tree, and each communicator's reduction tree over it (allreduce_innet).
//
// Not hardware: the map NCCL's SHARP plugin gets from the Aggregation Manager. The units are
// ranks of the graph after the job's (unit a is rank job_ranks + a), each on its own endpoint.
// Plain data and functions: tests build plans by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::workload {

struct InNetworkPlan {
  int job_ranks = 0;              // the job's ranks 0..job_ranks-1
  std::vector<int> leaf_of_rank;  // per job rank: the unit of its host's switch (-1: none)
  std::vector<int> parent;        // per unit: the unit above it (-1: a root)
  std::vector<std::string> name;  // per unit: its switch's name
  std::vector<uint64_t> buffer;   // per unit: its aggregation buffer, bytes
  int units() const { return static_cast<int>(parent.size()); }
  int rank_of_unit(int a) const { return job_ranks + a; }
};

// One communicator's tree: nodes 0..n-1 are the call's ranks (in its order), n.. the units it
// uses. Units with one child are left out (the data passes their switch without a reduction),
// and so is a chain of them above the topmost unit with two or more children (the root).
struct ReductionTree {
  std::vector<int> rank;                   // per node: its graph rank
  std::vector<int> unit;                   // per node: its unit (-1: a job rank)
  std::vector<int> parent;                 // per node: its parent node (-1: the root)
  std::vector<std::vector<int>> children;  // per node, in node order
  int root = -1;
  // Nodes children-first (every node after its children), the order of the reduction.
  std::vector<int> up_order() const;
  // Levels of units from the deepest rank to the root (1: one unit above every rank).
  int depth() const;
};

// The tree of `ranks` (job ranks) on `plan`; std::invalid_argument saying why when a rank's
// switch has no unit or the ranks' units have no common root.
ReductionTree reduction_tree(const InNetworkPlan& plan, const std::vector<int>& ranks);

}  // namespace fabricsim::workload
