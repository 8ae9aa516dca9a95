// What a run of the ranks' programs measured, per collective call (span) of the graph: its
// completion time, algorithm and bus bandwidth as nccl-tests defines them, and its slowest rank.
//
// Not hardware: results. A call starts when its first node starts (its first rank reached it)
// and ends when its last node finishes; a rank's part ends with its last node of the call.
// algbw = S / time, busbw = algbw x the algorithm's bus factor (2(n-1)/n for all-reduce, (n-1)/n
// for reduce-scatter, all-gather and all-to-all, 1 for broadcast).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/units.h"
#include "models/workload/exec_graph.h"
#include "models/workload/workload_engine.h"

namespace fabricsim::workload {

struct CollectiveResult {
  std::string name, algorithm;
  int32_t ranks = 0;
  uint64_t bytes = 0;
  double bus_factor = 1;
  bool finished = false;
  Time start = Time::max(), end;
  int32_t slowest_rank = -1;               // the rank whose part ended last
  uint8_t tag_class = 0;                   // its communicator's tag (ExecGraph::classes())
  uint32_t first_node = 0, last_node = 0;  // its nodes [first, last): its messages' ids
  Time time() const { return end - start; }
  double algbw_GBps() const;  // GB/s (10^9 bytes a second); 0 if not finished
  double busbw_GBps() const { return algbw_GBps() * bus_factor; }
};

std::vector<CollectiveResult> collective_results(const ExecGraph& g, const WorkloadEngine& e);

// The job's timing: each iteration's span (its first node's start to its last node's finish),
// and per rank the time its program ran (first start to last finish), the time its GPU computed
// and the rest: communication it waited for, not hidden behind compute ("exposed").
struct JobResult {
  struct Iteration {
    Time start, end;
    bool finished = false;
  };
  std::vector<Iteration> iterations;
  std::vector<Time> busy, compute;  // per rank
  Time exposed(size_t rank) const { return busy[rank] - compute[rank]; }
};
JobResult job_result(const ExecGraph& g, const WorkloadEngine& e);

// Each step of each collective call (steps.csv): its first send's start to its last node's
// finish (receives are posted ahead, at the call's start), its messages and bytes.
struct StepResult {
  uint32_t call;
  uint16_t step;
  Time start, end;
  uint64_t messages = 0, bytes = 0;
  bool finished = true;
};
std::vector<StepResult> step_results(const ExecGraph& g, const WorkloadEngine& e);

// What each rank did when, for the timeline (ranks.csv): its compute nodes while they held the
// GPU, and its part of each collective call (its first node's start to its last node's finish).
struct RankSpan {
  int32_t rank;
  bool compute;
  uint32_t call;  // the span (collective) index; compute: the node index
  Time start, end;
};
std::vector<RankSpan> rank_spans(const ExecGraph& g, const WorkloadEngine& e);

// Communication by the parallelism it serves (ExecGraph::classes(): a text workload's
// communicator tags), when the workload names any. Per rank, the time its program ran and its GPU
// did not compute (JobResult::exposed) is shared among the classes of the communication nodes it
// had in progress at that moment (evenly when several were; a receive is in progress from its
// start to its message's delivery): class 0 ("") takes the time with no tagged communication in
// progress (untagged calls, a wait for the GPU). So per rank the parts sum to its exposed time.
// The critical path runs back from the last node to finish, through the node that held each one
// up: a receive's matched send when it waited for its message, a compute's previous compute on
// its GPU when it waited for the GPU, else its dependency that finished last; its length, the
// first node's start to the last's finish, is split into compute, communication by class (a send
// from its start, a waited-for receive's time) and the gaps between them.
struct ClassResult {
  std::vector<std::vector<Time>> exposed;   // [class][rank]
  std::vector<std::vector<uint64_t>> sent;  // [class][rank]: bytes the rank sent
  Time path_length, path_compute, path_gap;
  std::vector<Time> path_comm;  // [class]
  uint64_t path_nodes = 0;
};
ClassResult class_result(const ExecGraph& g, const WorkloadEngine& e);

}  // namespace fabricsim::workload
