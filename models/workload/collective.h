// Collectives as message-level algorithms: each registered by name, each building the sends,
// receives and dependencies of one call into an ExecGraph (exec_graph.h).
//
// Not hardware: what NCCL (and MPI) run on the GPUs above the NICs. An algorithm sees its
// communicator as ranks 0..n-1 in the order given (the ring order; a job's rank numbers in
// `ranks`) and moves S bytes as nccl-tests counts them:
//   allreduce, reducescatter, allgather: S is the (input, output) buffer of each rank;
//   alltoall: S is each rank's send buffer, S/n to every rank (itself included, not sent);
//   alltoallv: `sizes` is the n x n matrix of bytes (row: from, column: to);
//   broadcast: S from the root to every rank.
// `channels` splits the data over that many parallel instances (NCCL's channels), each on its own
// connection (QP index) between two ranks; `chunk_bytes` > 0 cuts each step's data into slices of
// at most that many bytes, a slice moving on as soon as it has arrived (NCCL's pipelining).
// Reductions take no time here (NCCL fuses them into the copy).
//
// One file per algorithm registers it (FABRICSIM_REGISTER_COLLECTIVE), listed in
// models/workload/CMakeLists.txt.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "models/common/registry.h"
#include "models/workload/exec_graph.h"

namespace fabricsim::workload {

struct InNetworkPlan;  // innet_plan.h

struct CollectiveCall {
  std::string name;        // the span's name
  std::vector<int> ranks;  // the communicator: job ranks in algorithm (ring) order
  uint64_t bytes = 0;
  int channels = 1;
  uint64_t chunk_bytes = 0;     // 0: one message per step and channel
  int root = 0;                 // broadcast: an index into ranks
  std::vector<uint64_t> sizes;  // alltoallv: n x n bytes, row-major
  // allreduce_innet: the fabric's aggregation units (nullptr: none; the graph's ranks after the
  // job's are the units).
  const InNetworkPlan* innet = nullptr;
  // Per job rank, its scale-up domain (scale_up.h; null: no domains): what the hierarchical
  // algorithms split the communicator by and the rails' rings (rail_rings) follow.
  const std::vector<int>* domain = nullptr;
  // Whether the scale-up switch reduces and multicasts (scale_up.reduce): allreduce_nvls.
  bool scale_up_reduce = false;
};

// Per communicator rank, the graph nodes that must finish before it takes part (start) and that
// finish its part (done): how calls are chained into a program.
using RankNodes = std::vector<std::vector<uint32_t>>;

struct CollectiveEntry {
  std::string description;
  // nccl-tests' bus bandwidth factor for n ranks (busbw = S / time x factor).
  std::function<double(int n)> bus_factor;
  // Why it cannot run this call ("" if it can): e.g. n not a power of two.
  std::function<std::string(const CollectiveCall&)> refuse = [](const CollectiveCall&) {
    return std::string();
  };
  std::function<void(ExecGraph&, const CollectiveCall&, const RankNodes& start, RankNodes& done)>
      build;
};

class CollectiveRegistry {
 public:
  static const CollectiveRegistry& global();
  void add(const std::string& name, CollectiveEntry e) { entries_.add(name, std::move(e)); }
  const CollectiveEntry& at(const std::string& name) const { return entries_.at(name); }
  const CollectiveEntry* find(const std::string& name) const { return entries_.find(name); }
  const std::vector<std::string>& names() const { return entries_.names(); }

 private:
  Registry<CollectiveEntry> entries_{"collective"};
};

// In each algorithm's .cpp:  FABRICSIM_REGISTER_COLLECTIVE(allreduce_ring) { registry.add(...); }
#define FABRICSIM_REGISTER_COLLECTIVE(id) \
  void register_collective_##id(CollectiveRegistry& registry)

// Adds the call to g as one span: checks it (std::invalid_argument naming the call: ranks
// repeated or outside the job, fewer than 2 ranks, too few bytes for its ranks, channels and
// slices, an algorithm's own refusal) and builds it after `start` (empty: at once). Returns the
// done nodes per communicator rank.
RankNodes add_collective(ExecGraph& g, const std::string& algorithm, const CollectiveCall& c,
                         const RankNodes& start = {});

// The groups of a communicator of groups of `size` ranks `stride` apart over `ranks` ranks
// (size x stride must divide ranks, else std::invalid_argument saying so): group of base b and
// offset o is b + o, b + o + stride, ..., each in that (ring) order; groups in order of base, then
// offset. size 4 stride 1 over 8 ranks: {0 1 2 3} {4 5 6 7}; size 4 stride 2: {0 2 4 6} {1 3 5 7}.
std::vector<std::vector<int>> communicator_groups(int ranks, int size, int stride);

// --- for the algorithms -------------------------------------------------------------------------

// The product of counts, UINT64_MAX when it does not fit: how many nodes a call will add, for
// ExecGraph::require before it is built (a `chunk 1B` slices count can be 2^31).
uint64_t count_product(std::initializer_list<uint64_t> counts);

// `total` bytes cut into `parts` pieces as equal as can be (the first ones a byte larger).
uint64_t piece(uint64_t total, uint64_t parts, uint64_t i);

// A ring pass over the communicator on every channel: `steps` steps in which each rank i sends
// to rank i + 1 the block of step k (`block(k, i)` bytes of the call, before splitting over
// channels and slices) once it has received the block of step k - 1 from rank i - 1 (step 0:
// once `start` is done). Reduce-scatter, all-gather and all-reduce are such passes. Fills `done`
// with each rank's last receive and last send per channel and slice.
// `step_base` numbers the steps from there (a pass that follows another in one call).
// `rings` (null: every channel's ring is the communicator's order 0, 1, ..., n - 1): per channel
// x, the ring as a permutation of the communicator's positions; i above is then the index along
// channel x's ring (rank rings[x][i] sends to rings[x][i + 1]) and `done` stays per position.
void ring_pass(ExecGraph& g, const CollectiveCall& c, int steps,
               const std::function<uint64_t(int k, int i)>& block, const RankNodes& start,
               RankNodes& done, int step_base = 0,
               const std::vector<std::vector<int>>* rings = nullptr);

// The communicator's positions grouped by scale-up domain (CollectiveCall::domain), groups in
// order of first appearance, each in communicator order (a position's local rank is its index in
// its group). Empty, with the reason in `why`, without domains, for a rank without one, or when
// the groups' sizes differ: what the algorithms over domains refuse a call for.
std::vector<std::vector<int>> domain_groups(const CollectiveCall& c, std::string& why);

// Per channel x < `channels`, a ring over every position of the N groups of G (domain_groups)
// that keeps each group's positions consecutive and crosses between groups on one rail (local
// rank): group d is entered at local a_d = (x + s_d) mod G and left at local b_d = a_{d+1}, so
// the hop d -> d + 1 leaves and enters on local rank a_{d+1}; inside the group the ring goes a_d,
// then a_d + 1, a_d + 2, ... (mod G) leaving out b_d, then b_d. s_d = d mod 2, except s_{N-1} = 2
// when N is odd (adjacent groups never share an offset if G >= 3). Where a_{d+1} = a_d (G = 2
// and N odd, at the last group) the group is left at b_d = a_d + 1 instead: that one hop crosses
// rails (N = 1: the ring closes inside the group the same way). For fixed d both a_d and b_d
// are x plus a constant, so over G channels every local rank of every group is the exit of
// exactly one channel (its NIC sends one channel's cross-group traffic) and the entry of
// exactly one (it receives one).
std::vector<std::vector<int>> rail_rings(const std::vector<std::vector<int>>& groups, int channels);

// Every rank posts its sends at once (to i + 1 first, then i + 2, ...), each pair's bytes
// sizes[i * n + j] (0: nothing), split over the channels; receives posted at the start.
void all_to_all(ExecGraph& g, const CollectiveCall& c, const std::vector<uint64_t>& sizes,
                const RankNodes& start, RankNodes& done);

// Runs `step` (a sub-collective over the sub-call, its start nodes and its done nodes) on the
// communicator positions `who` with `bytes`, after `at` (per position of c), leaving each
// position's done nodes in `at`.
void on_positions(
    const CollectiveCall& c, const std::vector<int>& who, uint64_t bytes, RankNodes& at,
    const std::function<void(const CollectiveCall&, const RankNodes&, RankNodes&)>& step);

}  // namespace fabricsim::workload
