// The ranks' programs running: an ExecGraph (exec_graph.h) executed against a network of NICs.
//
// Not hardware: the software on the GPUs (NCCL's proxy threads, a training step's kernels) as
// the NICs see it. A node starts when the last node it depends on finishes: a compute node then
// waits for its rank's GPU (one compute node at a time per rank, in the order they became ready)
// and holds it for its duration times the rank's slowdown (a straggler's factor); a send posts
// its message to the network and finishes when the network says it completed (the send
// completion, after the receiver's acknowledgement); a receive finishes when its message has
// been delivered into the rank's memory, or when it starts if the message was delivered before
// (an unexpected message, kept until its receive is posted). Nodes that become ready at the same
// time start in node order (a rank posts its steps in program order, as NCCL does).
//
// Plain C++, driven with explicit times: the network calls on_sent and on_delivered as messages
// progress, and the driver runs the engine at next_event() for compute nodes. Devices see only
// their own messages: the engine is the ranks' side of the NIC interface.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "models/common/units.h"
#include "models/workload/exec_graph.h"

namespace fabricsim::workload {

// Where the ranks' messages go: a NIC per rank (models/nic/), or an ideal network.
class MessageNetwork {
 public:
  virtual ~MessageNetwork() = default;
  // Send node `token`'s message: `bytes` from rank src to rank dst on connection `channel`,
  // posted at `now`.
  virtual void post(uint32_t token, int src, int dst, uint64_t bytes, int channel, Time now) = 0;
};

class WorkloadEngine {
 public:
  // `slowdown`: per rank, its compute nodes' duration factor (empty: 1 for every rank). The
  // graph must be finalized.
  WorkloadEngine(const ExecGraph& g, MessageNetwork& net, std::vector<double> slowdown = {});

  // Starts every node without dependencies at `now`.
  void start(Time now);
  // The message of send node `token`: its send completed / it was delivered at `t` (= now).
  void on_sent(uint32_t token, Time t);
  void on_delivered(uint32_t token, Time t);
  // When a compute node next finishes (Time::max(): none running).
  Time next_event() const { return computing_.empty() ? Time::max() : computing_.top().t; }
  // Finishes the compute nodes due at `now` (and starts what follows).
  void run(Time now);

  bool finished() const { return finished_ == g_.size(); }
  uint64_t unfinished() const { return g_.size() - finished_; }
  // Per node: when it started (its dependencies done) and finished; Time::max() if it did not.
  Time started(uint32_t i) const { return start_[i]; }
  Time ended(uint32_t i) const { return start_[i] == Time::max() ? Time::max() : end_[i]; }
  // A compute node's time on its GPU (its duration times the rank's slowdown), once it ran.
  Time ran(uint32_t i) const;
  // The lowest node not started yet (size() once all have): a send posts its message as it
  // starts, so no message of a lower id is posted from now on. Amortised O(1) a node.
  uint32_t first_unstarted() const {
    while (first_unstarted_ < start_.size() && start_[first_unstarted_] != Time::max())
      ++first_unstarted_;
    return first_unstarted_;
  }
  // A node that had not started at the end (the first few), for messages.
  std::vector<uint32_t> stuck(size_t max) const;

 private:
  void ready(uint32_t i, Time now);
  void finish(uint32_t i, Time now);
  void start_ready(Time now);  // starts the nodes made ready, lowest index first
  void next_compute(int rank, Time now);

  const ExecGraph& g_;
  MessageNetwork& net_;
  std::vector<double> slowdown_;
  std::vector<uint32_t> waiting_;            // per node: dependencies not yet finished
  std::vector<uint32_t> succ_begin_, succ_;  // successors, CSR
  // Per node: when it started and ended (Time::max(): not yet). A receive whose message came
  // before it started holds the delivery in end_ until it starts (ended() says Time::max()
  // while it has not started): 16 B a node, with nothing else per node but the counts below.
  std::vector<Time> start_, end_;
  // A compute node's time on the GPU: its duration x the rank's slowdown (next_compute).
  Time gpu_time(uint32_t i, Time now) const;
  // Nodes whose dependencies just finished, to start (a min-heap by node index).
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> to_start_;
  // Per rank: compute nodes ready and waiting for the GPU; whether it is busy.
  std::vector<std::queue<uint32_t>> gpu_queue_;
  std::vector<bool> gpu_busy_;
  struct Done {
    Time t;
    uint32_t node;
    bool operator>(const Done& o) const { return t != o.t ? t > o.t : node > o.node; }
  };
  std::priority_queue<Done, std::vector<Done>, std::greater<>> computing_;
  uint64_t finished_ = 0;
  mutable uint32_t first_unstarted_ = 0;  // (first_unstarted: every node below it started)
};

}  // namespace fabricsim::workload
