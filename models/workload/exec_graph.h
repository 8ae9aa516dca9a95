// A workload as an execution graph: per rank (GPU), compute, send and receive nodes with the
// dependencies between them, the form collectives are generated in (collective.h) and traces are
// imported to (Chakra's execution traces are graphs of the same three kinds).
//
// Not hardware: the program each rank runs, above its NIC. A send is a message the rank's NIC
// posts to a peer rank's NIC (an RDMA WRITE of `bytes` on connection `channel` between the two); a
// receive completes when the matching message has been delivered into the rank's memory; a
// compute node keeps the rank's GPU busy for its duration (a rank runs one compute node at a
// time). A node may start once every node it depends on has finished.
//
// Matching: the k-th send from rank a to rank b on channel c (in node order) is received by the
// k-th receive at b from a on c, whatever order they are posted in at run time (the messages
// carry their identity as NCCL's and MPI's carry tags). A send and a receive may also carry a
// `tag` (0 unless given): the k-th per (src, dst, channel, tag), so that point-to-point messages a
// trace names by tag match each other however they interleave with a collective's messages on
// the same connection (tag 0). Nodes depend only on nodes added before
// them, so the dependencies alone are acyclic by construction (a trace importer orders its nodes
// first and names the ones on a cycle); but a receive also waits for its matched send, and that
// edge can close a cycle across ranks (each rank's send waits on its own receive): finalize finds
// such a cycle and refuses the graph (CycleError), which would otherwise deadlock.
//
// Collective spans: the nodes of one collective call (its algorithm, communicator, bytes and the
// nccl-tests bus factor) so that results can report its completion time and bandwidths.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/common/units.h"

namespace fabricsim::workload {

enum class NodeKind : uint8_t { kCompute, kSend, kRecv };

// The largest message, 2^31 B (2 GiB), as for a message file's line and traffic.message_size:
// IBA's largest message [R], and what keeps a READ's PSNs (one per response packet, 2^23 at MTU
// 256) within half the 24-bit PSN space (models/traffic/synthetic.h). A text workload's
// `sendrecv` BYTES and `chunk`, a Chakra send's or receive's comm_size, and every message of a
// graph (ExecGraph::add), whatever the call it belongs to, are held to it. (Not a matter of
// cost: a NIC cuts a message into packets as it sends it, posting one is O(1).)
constexpr uint64_t kMaxWorkloadBytes = uint64_t{1} << 31;
// The largest call: a collective's S or an alltoallv's bytes per rank (a text workload's
// `collective` and `alltoallv` BYTES, a Chakra COMM_COLL_NODE's comm_size), 64 GiB as
// workload.bytes; its algorithm cuts it into messages, each at most kMaxWorkloadBytes. Both are
// checked as the file is read, before any node is built; docs/trace-format.md, "Limits of the
// input files", lists every limit.
constexpr uint64_t kMaxCallBytes = uint64_t{64} << 30;

// The largest graph: its nodes and its dependencies (the total length of the nodes' lists). A
// run holds at most about kGraphBytesPerNode per node (measured: 56 B a node as the run starts,
// the graph's 24 B record, its match and the engine's times and counts; the NICs then keep ~180 B
// for each message posted, half the nodes) and kGraphBytesPerDep per dependency, so the limits
// bound the workload layer's memory at about 10 GB whatever a file asks for (`chunk 1B`,
// `iterations 1000000`); 2^26 holds a ring all-reduce over 4,096 ranks (8,190 steps, 67,092,480
// nodes). Readers check what a call or an iteration will add before building it
// (ExecGraph::require); add() refuses a node past them. Each an std::invalid_argument.
constexpr uint64_t kMaxGraphNodes = uint64_t{1} << 26;  // 67,108,864
constexpr uint64_t kMaxGraphDeps = uint64_t{1} << 27;   // 134,217,728
constexpr uint64_t kGraphBytesPerNode = 150;
// Chakra traces stay at 2^24 nodes in the job's files (and joining points standing for at most as
// many): a node parsed holds ~470 B while the traces are read (docs/trace-format.md).
constexpr uint64_t kMaxTraceNodes = uint64_t{1} << 24;
constexpr uint64_t kGraphBytesPerDep = 8;

// The limits in force: kMaxGraphNodes and kMaxGraphDeps, lowered only by tests and fuzz targets
// (whose memory budget is smaller than a run's). Process-wide.
struct GraphLimits {
  uint64_t nodes = kMaxGraphNodes;
  uint64_t deps = kMaxGraphDeps;
};
GraphLimits& graph_limits();

// A job's ranks, as a node's record holds them (24 bits; a text workload's are at most 2^20, a
// collective's at most the hosts).
constexpr int kMaxGraphRanks = 1 << 24;

constexpr uint32_t kNoSpan = UINT32_MAX;
constexpr uint32_t kNoNode = UINT32_MAX;

// A node as the graph's readers see it (ExecGraph::node builds it from the graph's packed record).
struct Node {
  int32_t rank = 0;
  NodeKind kind = NodeKind::kCompute;
  uint8_t tag_class = 0;  // the parallelism it serves (ExecGraph::set_class); 0: none
  uint16_t step = 0;      // the algorithm's step within its collective call (ExecGraph::set_step)
  int32_t peer = -1;      // send: the destination rank; receive: the source rank
  uint16_t channel = 0;   // the connection between the two ranks (a QP index)
  uint32_t tag = 0;       // send, receive: matched within a tag
  uint64_t bytes = 0;     // send, receive
  Time duration;          // compute
  uint32_t span = kNoSpan;
  uint32_t dep_begin = 0, dep_end = 0;  // into ExecGraph::deps()
};

// One collective call: what results report it by.
struct Span {
  std::string name;              // e.g. "allreduce#3" or the trace's node name
  std::string algorithm;         // registered collective name
  int32_t ranks = 0;             // communicator size n
  uint64_t bytes = 0;            // S as nccl-tests counts it (per rank buffer)
  double bus_factor = 1;         // busbw = S / time x bus_factor
  uint32_t first = 0, last = 0;  // its nodes: [first, last)
};

// finalize's refusal of a cycle through matched messages: the nodes on it, each waiting for the
// next (a receive for its send, any node for a dependency), the last for the first.
class CycleError : public std::invalid_argument {
 public:
  CycleError(const std::string& what, std::vector<uint32_t> nodes)
      : std::invalid_argument(what), nodes_(std::move(nodes)) {}
  const std::vector<uint32_t>& nodes() const { return nodes_; }

 private:
  std::vector<uint32_t> nodes_;
};

class ExecGraph {
 public:
  // At most kMaxGraphRanks ranks (std::invalid_argument otherwise).
  explicit ExecGraph(int ranks);

  int ranks() const { return ranks_; }
  // Each returns the new node's index. `deps`: earlier nodes (std::invalid_argument otherwise).
  uint32_t add_compute(int rank, Time duration, const std::vector<uint32_t>& deps = {});
  uint32_t add_send(int rank, int peer, uint64_t bytes, int channel,
                    const std::vector<uint32_t>& deps = {}, uint32_t tag = 0);
  uint32_t add_recv(int rank, int peer, uint64_t bytes, int channel,
                    const std::vector<uint32_t>& deps = {}, uint32_t tag = 0);

  // A node's name, as results show it (ranks.csv): a trace's name for it (a Chakra COMP_NODE's).
  // Names are given in node order, each node at most once (std::invalid_argument otherwise), and
  // held in one string (most nodes have none: a collective's messages are named by their span).
  void set_name(uint32_t node, std::string_view name);
  // Its name, or "" when it has none.
  std::string_view name(uint32_t node) const;

  // The step of the algorithm the next nodes belong to (a ring's step k, a halving-doubling
  // exchange, ...): results report each step's time (steps.csv). 0 when a span opens.
  void set_step(int k) { step_ = static_cast<uint16_t>(k); }

  // The parallelism (a text workload communicator's `tag`: tp, dp, pp, ep, ...) the next nodes
  // serve, for results that split exposed communication by it ("": none, class 0). At most
  // kMaxClasses - 1 names (std::invalid_argument past that). Returns the class's number.
  static constexpr size_t kMaxClasses = 64;
  uint8_t set_class(const std::string& name);
  // The class names, class 0 ("") first.
  const std::vector<std::string>& classes() const { return classes_; }

  // Spans: open one, add its nodes, close it.
  uint32_t begin_span(const std::string& name, const std::string& algorithm, int ranks,
                      uint64_t bytes, double bus_factor);
  void end_span();

  // Iterations (a training step each): nodes added from here on belong to the next one. Results
  // report each iteration's time; a graph without marks is one iteration.
  void begin_iteration() { iterations_.push_back(static_cast<uint32_t>(nodes_.size())); }
  // The first node of each iteration.
  const std::vector<uint32_t>& iterations() const { return iterations_; }

  // Refuses (std::invalid_argument naming the limit and `what`) `nodes` more nodes when the graph
  // could not hold them: what a reader or an algorithm calls before building (or allocating
  // for) a call or an iteration it has counted.
  void require(uint64_t nodes, const std::string& what) const;

  // Pairs every send with its receive (the k-th of each (src, dst, channel, tag)), and checks that
  // both say the same bytes; a send without a receive or the reverse is an error naming the
  // node (std::invalid_argument). Then refuses a cycle through matched messages (CycleError),
  // which no run could finish. Call once, after the last node.
  void finalize();
  // The receive a send is matched with (after finalize).
  uint32_t match(uint32_t send) const { return match_[send]; }

  size_t size() const { return nodes_.size(); }
  // Node i, built from its packed record (a value: the graph keeps no Node).
  Node node(uint32_t i) const;
  // The nodes in order, as values: `for (const Node& x : g.nodes())`, `g.nodes()[i]`.
  class NodeRange {
   public:
    class iterator {
     public:
      iterator(const ExecGraph* g, uint32_t i) : g_(g), i_(i) {}
      Node operator*() const { return g_->node(i_); }
      iterator& operator++() {
        ++i_;
        return *this;
      }
      bool operator!=(const iterator& o) const { return i_ != o.i_; }
      bool operator==(const iterator& o) const { return i_ == o.i_; }

     private:
      const ExecGraph* g_;
      uint32_t i_;
    };
    explicit NodeRange(const ExecGraph* g) : g_(g) {}
    iterator begin() const { return {g_, 0}; }
    iterator end() const { return {g_, static_cast<uint32_t>(g_->size())}; }
    size_t size() const { return g_->size(); }
    Node operator[](size_t i) const { return g_->node(static_cast<uint32_t>(i)); }

   private:
    const ExecGraph* g_;
  };
  NodeRange nodes() const { return NodeRange(this); }
  const std::vector<uint32_t>& deps() const { return deps_; }
  const std::vector<Span>& spans() const { return spans_; }
  // "node 17 (rank 3, send to rank 4, 1024 B, channel 0)"
  std::string describe(uint32_t i) const;

 private:
  // What the graph keeps of a node, 24 B (a 4,096-rank ring all-reduce has 67 M of them): a
  // message's bytes (at most 2^31) where a compute node's index into durations_ is; its
  // dependencies end where the next node's begin; a tag (rare: traces' point-to-point messages)
  // in tags_.
  struct Packed {
    uint32_t rank : 24;
    uint32_t kind : 2;
    uint32_t tag_class : 6;  // < kMaxClasses
    int32_t peer = -1;
    uint32_t value = 0;
    uint32_t dep_begin = 0;
    uint32_t span = kNoSpan;
    uint16_t channel = 0;
    uint16_t step = 0;
  };
  static_assert(sizeof(Packed) <= 24, "a node's size bounds a workload's memory");
  static_assert(kMaxClasses <= 64 && kMaxWorkloadBytes <= UINT32_MAX, "what a record holds");

  uint32_t add(Node n, const std::vector<uint32_t>& deps);
  uint32_t dep_end(uint32_t i) const {
    return i + 1 < nodes_.size() ? nodes_[i + 1].dep_begin : static_cast<uint32_t>(deps_.size());
  }
  uint32_t tag_of(uint32_t i) const;
  void check_cycles() const;
  int ranks_;
  std::vector<Packed> nodes_;
  std::vector<std::pair<uint32_t, uint32_t>> tags_;  // (node, tag) of the nodes whose tag is not 0
  std::vector<Time> durations_;                      // the compute nodes', in node order
  std::vector<uint32_t> deps_;
  std::vector<Span> spans_;
  uint32_t open_span_ = kNoSpan;
  uint16_t step_ = 0;
  uint8_t class_ = 0;
  std::vector<std::string> classes_{""};
  std::vector<uint32_t> match_;
  std::vector<uint32_t> iterations_;
  std::vector<uint32_t> named_;   // the nodes with a name, increasing
  std::vector<size_t> name_end_;  // where each one's name ends in names_ (starts: the previous)
  std::string names_;
};

}  // namespace fabricsim::workload
