#include "models/workload/exec_graph.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "models/common/stop_signal.h"

namespace fabricsim::workload {

namespace {
constexpr uint32_t kStopCheckMask = 0xffff;  // a look at the stop signal every 65,536 nodes
}

GraphLimits& graph_limits() {
  static GraphLimits limits;
  return limits;
}

ExecGraph::ExecGraph(int ranks) : ranks_(ranks) {
  if (ranks > kMaxGraphRanks)
    throw std::invalid_argument(
        fmt::format("{} ranks: more than a workload's graph holds ({})", ranks, kMaxGraphRanks));
}

void ExecGraph::require(uint64_t nodes, const std::string& what) const {
  const uint64_t max = graph_limits().nodes;
  if (nodes_.size() <= max && nodes <= max - nodes_.size()) return;
  const std::string before =
      nodes_.empty() ? "" : fmt::format(" (with the graph's {} before them)", nodes_.size());
  throw std::invalid_argument(fmt::format(
      "{} needs {} nodes{}: more than a workload's graph may hold ({} nodes, about {} B each in "
      "a run; docs/trace-format.md, \"Limits of the input files\")",
      what, nodes, before, max, kGraphBytesPerNode));
}

uint32_t ExecGraph::add(Node n, const std::vector<uint32_t>& deps) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  if ((id & kStopCheckMask) == 0) check_stop("building the workload's graph");
  const GraphLimits& lim = graph_limits();
  if (nodes_.size() >= lim.nodes)
    throw std::invalid_argument(
        fmt::format("node {}: more than a workload's graph may hold ({} nodes; docs/"
                    "trace-format.md, \"Limits of the input files\")",
                    id, lim.nodes));
  if (deps_.size() > lim.deps || deps.size() > lim.deps - deps_.size())
    throw std::invalid_argument(
        fmt::format("node {}: more dependencies than a workload's graph may hold ({} in all; "
                    "docs/trace-format.md, \"Limits of the input files\")",
                    id, lim.deps));
  if (n.rank < 0 || n.rank >= ranks_)
    throw std::invalid_argument(
        fmt::format("node {}: rank {} outside the job's {} ranks", id, n.rank, ranks_));
  if (n.kind != NodeKind::kCompute && (n.peer < 0 || n.peer >= ranks_ || n.peer == n.rank))
    throw std::invalid_argument(
        fmt::format("node {}: peer rank {} is not another rank of the "
                    "job's {}",
                    id, n.peer, ranks_));
  if (n.kind != NodeKind::kCompute && n.bytes == 0)
    throw std::invalid_argument(fmt::format("node {}: a message of 0 bytes", id));
  // IBA's largest message (exec_graph.h): sizes stay within what message files take.
  if (n.kind != NodeKind::kCompute && n.bytes > kMaxWorkloadBytes)
    throw std::invalid_argument(fmt::format(
        "node {}: a message of {} B, larger than the largest, {} B (2 GiB, IBA's largest "
        "message): more ranks, channels or a chunk cut the data smaller",
        id, n.bytes, kMaxWorkloadBytes));
  for (uint32_t d : deps)
    if (d >= id)
      throw std::invalid_argument(
          fmt::format("node {}: depends on node {}, which is not an earlier node", id, d));
  Packed p;
  p.rank = static_cast<uint32_t>(n.rank);
  p.kind = static_cast<uint32_t>(n.kind);
  p.tag_class = class_;
  p.peer = n.kind == NodeKind::kCompute ? -1 : n.peer;
  p.value = n.kind == NodeKind::kCompute ? static_cast<uint32_t>(durations_.size())
                                         : static_cast<uint32_t>(n.bytes);
  p.dep_begin = static_cast<uint32_t>(deps_.size());
  p.span = open_span_;
  p.channel = n.channel;
  p.step = open_span_ == kNoSpan ? 0 : step_;
  if (n.kind == NodeKind::kCompute) durations_.push_back(n.duration);
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  if (n.tag != 0) tags_.emplace_back(id, n.tag);
  nodes_.push_back(p);
  return id;
}

Node ExecGraph::node(uint32_t i) const {
  const Packed& p = nodes_[i];
  Node n;
  n.rank = static_cast<int32_t>(p.rank);
  n.kind = static_cast<NodeKind>(p.kind);
  n.tag_class = static_cast<uint8_t>(p.tag_class);
  n.step = p.step;
  n.peer = p.peer;
  n.channel = p.channel;
  n.tag = tag_of(i);
  if (n.kind == NodeKind::kCompute)
    n.duration = durations_[p.value];
  else
    n.bytes = p.value;
  n.span = p.span;
  n.dep_begin = p.dep_begin;
  n.dep_end = dep_end(i);
  return n;
}

uint32_t ExecGraph::tag_of(uint32_t i) const {
  if (tags_.empty()) return 0;
  const auto it = std::lower_bound(tags_.begin(), tags_.end(), std::make_pair(i, uint32_t{0}));
  return it != tags_.end() && it->first == i ? it->second : 0;
}

uint8_t ExecGraph::set_class(const std::string& name) {
  const auto it = std::find(classes_.begin(), classes_.end(), name);
  if (it != classes_.end()) return class_ = static_cast<uint8_t>(it - classes_.begin());
  if (classes_.size() >= kMaxClasses)
    throw std::invalid_argument(fmt::format("more than {} communicator tags", kMaxClasses - 1));
  classes_.push_back(name);
  return class_ = static_cast<uint8_t>(classes_.size() - 1);
}

uint32_t ExecGraph::add_compute(int rank, Time duration, const std::vector<uint32_t>& deps) {
  Node n;
  n.rank = rank;
  n.kind = NodeKind::kCompute;
  n.duration = duration;
  return add(n, deps);
}

namespace {
Node message_node(NodeKind kind, int rank, int peer, uint64_t bytes, int channel, uint32_t tag) {
  Node n;
  n.rank = rank;
  n.kind = kind;
  n.peer = peer;
  n.bytes = bytes;
  n.channel = static_cast<uint16_t>(channel);
  n.tag = tag;
  return n;
}
}  // namespace

uint32_t ExecGraph::add_send(int rank, int peer, uint64_t bytes, int channel,
                             const std::vector<uint32_t>& deps, uint32_t tag) {
  return add(message_node(NodeKind::kSend, rank, peer, bytes, channel, tag), deps);
}

uint32_t ExecGraph::add_recv(int rank, int peer, uint64_t bytes, int channel,
                             const std::vector<uint32_t>& deps, uint32_t tag) {
  return add(message_node(NodeKind::kRecv, rank, peer, bytes, channel, tag), deps);
}

void ExecGraph::set_name(uint32_t node, std::string_view name) {
  if (node >= nodes_.size() || (!named_.empty() && node <= named_.back()))
    throw std::invalid_argument(fmt::format(
        "node {}: named out of order (or not a node of the graph's {})", node, nodes_.size()));
  if (name.empty()) return;
  named_.push_back(node);
  names_.append(name);
  name_end_.push_back(names_.size());
}

std::string_view ExecGraph::name(uint32_t node) const {
  const auto it = std::lower_bound(named_.begin(), named_.end(), node);
  if (it == named_.end() || *it != node) return {};
  const auto k = static_cast<size_t>(it - named_.begin());
  const size_t begin = k == 0 ? 0 : name_end_[k - 1];
  return std::string_view(names_).substr(begin, name_end_[k] - begin);
}

uint32_t ExecGraph::begin_span(const std::string& name, const std::string& algorithm, int ranks,
                               uint64_t bytes, double bus_factor) {
  if (open_span_ != kNoSpan) throw std::logic_error("begin_span: a span is open");
  Span s{name, algorithm, ranks, bytes, bus_factor, static_cast<uint32_t>(nodes_.size()), 0};
  spans_.push_back(s);
  open_span_ = static_cast<uint32_t>(spans_.size() - 1);
  step_ = 0;
  return open_span_;
}

void ExecGraph::end_span() {
  if (open_span_ == kNoSpan) throw std::logic_error("end_span: no span is open");
  spans_[open_span_].last = static_cast<uint32_t>(nodes_.size());
  open_span_ = kNoSpan;
}

void ExecGraph::finalize() {
  if (open_span_ != kNoSpan) end_span();
  match_.assign(nodes_.size(), kNoNode);
  // (src, dst, channel, tag) -> the sends and the receives, in node order.
  std::map<std::tuple<int, int, int, uint32_t>,
           std::pair<std::vector<uint32_t>, std::vector<uint32_t>>>
      by_pair;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if ((i & kStopCheckMask) == 0) check_stop("matching the workload's messages");
    const Node n = node(i);
    if (n.kind == NodeKind::kSend) by_pair[{n.rank, n.peer, n.channel, n.tag}].first.push_back(i);
    if (n.kind == NodeKind::kRecv) by_pair[{n.peer, n.rank, n.channel, n.tag}].second.push_back(i);
  }
  for (const auto& [key, v] : by_pair) {
    const auto& [sends, recvs] = v;
    for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
      if (k >= recvs.size())
        throw std::invalid_argument(describe(sends[k]) + ": a send no receive matches");
      if (k >= sends.size())
        throw std::invalid_argument(describe(recvs[k]) + ": a receive no send matches");
      if (nodes_[sends[k]].value != nodes_[recvs[k]].value)
        throw std::invalid_argument(fmt::format("{}: its receive, {}, expects {} B",
                                                describe(sends[k]), describe(recvs[k]),
                                                nodes_[recvs[k]].value));
      match_[sends[k]] = recvs[k];
      match_[recvs[k]] = sends[k];
    }
  }
  check_cycles();
}

// Kahn's algorithm over the dependencies and the send -> receive edges: a node left waiting is
// on a cycle or behind one; walking back from it over what it still waits for finds the cycle.
void ExecGraph::check_cycles() const {
  const auto n = static_cast<uint32_t>(nodes_.size());
  std::vector<uint32_t> waiting(n), succ_begin(n + 1, 0), succ(deps_.size());
  for (uint32_t i = 0; i < n; ++i) {
    const Node x = node(i);
    waiting[i] = x.dep_end - x.dep_begin + (x.kind == NodeKind::kRecv ? 1 : 0);
    for (uint32_t d = x.dep_begin; d < x.dep_end; ++d) ++succ_begin[deps_[d] + 1];
  }
  for (uint32_t i = 0; i < n; ++i) succ_begin[i + 1] += succ_begin[i];
  {
    std::vector<uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t d = nodes_[i].dep_begin; d < dep_end(i); ++d) succ[fill[deps_[d]]++] = i;
  }
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push_back(i);
  uint64_t done = 0;
  while (!ready.empty()) {
    const uint32_t i = ready.back();
    ready.pop_back();
    if ((++done & kStopCheckMask) == 0) check_stop("checking the workload's graph for cycles");
    for (uint32_t k = succ_begin[i]; k < succ_begin[i + 1]; ++k)
      if (--waiting[succ[k]] == 0) ready.push_back(succ[k]);
    if (nodes_[i].kind == static_cast<uint32_t>(NodeKind::kSend) && --waiting[match_[i]] == 0)
      ready.push_back(match_[i]);
  }
  if (done == n) return;
  // What a waiting node waits for: its matched send (a receive), else a waiting dependency.
  auto blocker = [&](uint32_t i) {
    const Node x = node(i);
    if (x.kind == NodeKind::kRecv && waiting[match_[i]] > 0) return match_[i];
    for (uint32_t d = x.dep_begin; d < x.dep_end; ++d)
      if (waiting[deps_[d]] > 0) return deps_[d];
    return kNoNode;  // (not reached: a waiting node waits for a waiting one)
  };
  uint32_t at = 0;
  while (waiting[at] == 0) ++at;
  std::vector<uint32_t> path;
  std::vector<uint32_t> seen(n, kNoNode);  // position on the path
  while (at != kNoNode && seen[at] == kNoNode) {
    seen[at] = static_cast<uint32_t>(path.size());
    path.push_back(at);
    at = blocker(at);
  }
  if (at == kNoNode) throw std::logic_error("check_cycles: a waiting node waits for none");
  std::vector<uint32_t> cycle(path.begin() + seen[at], path.end());
  std::string text;
  constexpr size_t kShown = 6;
  for (size_t k = 0; k < cycle.size() && k < kShown; ++k)
    text += (k ? ", which waits for " : "") + describe(cycle[k]);
  if (cycle.size() > kShown) text += fmt::format(", ... ({} nodes in all)", cycle.size());
  throw CycleError(fmt::format("a dependency cycle across ranks, which no run can finish: {}, "
                               "which waits for the first",
                               text),
                   std::move(cycle));
}

std::string ExecGraph::describe(uint32_t i) const {
  const Node n = node(i);
  const std::string tag = n.tag ? fmt::format(", tag {}", n.tag) : std::string();
  switch (n.kind) {
    case NodeKind::kCompute:
      return fmt::format("node {} (rank {}, compute {})", i, n.rank, n.duration.str());
    case NodeKind::kSend:
      return fmt::format("node {} (rank {}, send to rank {}, {} B, channel {}{})", i, n.rank,
                         n.peer, n.bytes, n.channel, tag);
    case NodeKind::kRecv:
      break;
  }
  return fmt::format("node {} (rank {}, receive from rank {}, {} B, channel {}{})", i, n.rank,
                     n.peer, n.bytes, n.channel, tag);
}

}  // namespace fabricsim::workload
