#include "models/workload/exec_graph.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace fabricsim::workload {

uint32_t ExecGraph::add(Node n, const std::vector<uint32_t>& deps) {
  const auto id = static_cast<uint32_t>(nodes_.size());
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
  n.dep_begin = static_cast<uint32_t>(deps_.size());
  for (uint32_t d : deps) {
    if (d >= id)
      throw std::invalid_argument(
          fmt::format("node {}: depends on node {}, which is not an earlier node", id, d));
    deps_.push_back(d);
  }
  n.dep_end = static_cast<uint32_t>(deps_.size());
  n.span = open_span_;
  n.step = open_span_ == kNoSpan ? 0 : step_;
  nodes_.push_back(n);
  return id;
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
    const Node& n = nodes_[i];
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
      if (nodes_[sends[k]].bytes != nodes_[recvs[k]].bytes)
        throw std::invalid_argument(fmt::format("{}: its receive, {}, expects {} B",
                                                describe(sends[k]), describe(recvs[k]),
                                                nodes_[recvs[k]].bytes));
      match_[sends[k]] = recvs[k];
      match_[recvs[k]] = sends[k];
    }
  }
}

std::string ExecGraph::describe(uint32_t i) const {
  const Node& n = nodes_[i];
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
