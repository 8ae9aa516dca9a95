#include "models/workload/workload_results.h"

#include <algorithm>
#include <map>

namespace fabricsim::workload {

double CollectiveResult::algbw_GBps() const {
  if (!finished || end <= start) return 0;
  return static_cast<double>(bytes) / time().as_s() * 1e-9;
}

std::vector<CollectiveResult> collective_results(const ExecGraph& g, const WorkloadEngine& e) {
  std::vector<CollectiveResult> out;
  out.reserve(g.spans().size());
  for (const Span& s : g.spans()) {
    CollectiveResult r;
    r.name = s.name;
    r.algorithm = s.algorithm;
    r.ranks = s.ranks;
    r.bytes = s.bytes;
    r.bus_factor = s.bus_factor;
    r.first_node = s.first;
    r.last_node = s.last;
    r.tag_class = s.first < s.last ? g.node(s.first).tag_class : 0;
    r.finished = true;
    Time slowest = Time();
    for (uint32_t i = s.first; i < s.last; ++i) {
      if (e.ended(i) == Time::max()) {
        r.finished = false;
        continue;
      }
      r.start = std::min(r.start, e.started(i));
      if (e.ended(i) >= slowest) {
        slowest = e.ended(i);
        r.slowest_rank = g.node(i).rank;
      }
    }
    r.end = slowest;
    if (r.start == Time::max()) r.start = Time();
    out.push_back(r);
  }
  return out;
}

std::vector<StepResult> step_results(const ExecGraph& g, const WorkloadEngine& e) {
  std::vector<StepResult> out;
  std::map<uint16_t, StepResult> steps;
  for (uint32_t s = 0; s < g.spans().size(); ++s) {
    steps.clear();
    for (uint32_t i = g.spans()[s].first; i < g.spans()[s].last; ++i) {
      const Node& x = g.node(i);
      auto [it, added] =
          steps.try_emplace(x.step, StepResult{s, x.step, Time::max(), Time(), 0, 0, true});
      StepResult& r = it->second;
      if (e.ended(i) == Time::max()) {
        r.finished = false;
      } else {
        // A step starts with its first send (receives are posted ahead, at the call's start).
        if (x.kind != NodeKind::kRecv) r.start = std::min(r.start, e.started(i));
        r.end = std::max(r.end, e.ended(i));
      }
      if (x.kind == NodeKind::kSend) {
        ++r.messages;
        r.bytes += x.bytes;
      }
    }
    for (auto& [k, r] : steps) {
      if (r.start == Time::max()) r.start = Time();
      out.push_back(r);
    }
  }
  return out;
}

std::vector<RankSpan> rank_spans(const ExecGraph& g, const WorkloadEngine& e) {
  std::vector<RankSpan> out;
  for (uint32_t i = 0; i < g.size(); ++i)
    if (g.node(i).kind == NodeKind::kCompute && e.ended(i) != Time::max())
      out.push_back({g.node(i).rank, true, i, e.ended(i) - e.ran(i), e.ended(i)});
  std::map<int32_t, RankSpan> part;  // this call's, by rank
  for (uint32_t s = 0; s < g.spans().size(); ++s) {
    part.clear();
    for (uint32_t i = g.spans()[s].first; i < g.spans()[s].last; ++i) {
      if (e.ended(i) == Time::max()) continue;
      const int32_t r = g.node(i).rank;
      auto [it, added] = part.try_emplace(r, RankSpan{r, false, s, e.started(i), e.ended(i)});
      if (!added) {
        it->second.start = std::min(it->second.start, e.started(i));
        it->second.end = std::max(it->second.end, e.ended(i));
      }
    }
    for (const auto& [r, x] : part) out.push_back(x);
  }
  std::sort(out.begin(), out.end(), [](const RankSpan& a, const RankSpan& b) {
    return a.start != b.start ? a.start < b.start : a.rank < b.rank;
  });
  return out;
}

JobResult job_result(const ExecGraph& g, const WorkloadEngine& e) {
  JobResult j;
  std::vector<uint32_t> bounds = g.iterations();
  if (bounds.empty() || bounds.front() != 0) bounds.insert(bounds.begin(), 0);
  bounds.push_back(static_cast<uint32_t>(g.size()));
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    JobResult::Iteration it;
    it.start = Time::max();
    it.finished = true;
    for (uint32_t i = bounds[k]; i < bounds[k + 1]; ++i) {
      if (e.ended(i) == Time::max()) {
        it.finished = false;
        continue;
      }
      it.start = std::min(it.start, e.started(i));
      it.end = std::max(it.end, e.ended(i));
    }
    if (it.start == Time::max()) it.start = Time();
    j.iterations.push_back(it);
  }
  const auto n = static_cast<size_t>(g.ranks());
  std::vector<Time> first(n, Time::max()), last(n);
  j.compute.assign(n, Time());
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (e.ended(i) == Time::max()) continue;
    const auto r = static_cast<size_t>(g.node(i).rank);
    first[r] = std::min(first[r], e.started(i));
    last[r] = std::max(last[r], e.ended(i));
    // A compute node's own time on the GPU (it may have waited for the GPU after it started).
    if (g.node(i).kind == NodeKind::kCompute) j.compute[r] += e.ran(i);
  }
  j.busy.assign(n, Time());
  for (size_t r = 0; r < n; ++r)
    if (first[r] != Time::max()) j.busy[r] = last[r] - first[r];
  return j;
}

}  // namespace fabricsim::workload

namespace fabricsim::workload {

namespace {

// Shares each rank's exposed time among the classes of the communication in progress.
void share_exposed(const ExecGraph& g, const WorkloadEngine& e, ClassResult& out) {
  const size_t nc = g.classes().size();
  struct Edge {
    Time t;
    int8_t compute;  // +1 / -1 when the GPU starts / stops computing, 0 for communication
    int8_t delta;    // communication: +1 / -1
    uint8_t cls;
  };
  // Rank by rank (the nodes of each in a CSR, 4 B a node), so that only one rank's edges are held
  // at a time: all ranks' at once were 32 B a message node (2 GB for a 4,096-rank ring).
  const auto nr = static_cast<size_t>(g.ranks());
  std::vector<uint32_t> begin(nr + 1, 0), order(g.size());
  for (uint32_t i = 0; i < g.size(); ++i) ++begin[static_cast<size_t>(g.node(i).rank) + 1];
  for (size_t r = 0; r < nr; ++r) begin[r + 1] += begin[r];
  {
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (uint32_t i = 0; i < g.size(); ++i) order[fill[static_cast<size_t>(g.node(i).rank)]++] = i;
  }
  std::vector<Edge> v;
  std::vector<int> active(nc);
  for (size_t r = 0; r < nr; ++r) {
    v.clear();
    // A rank's program runs from its first node's start: a node that starts and ends at once (a
    // receive of a message already there) adds no edge but may be the first.
    Time first = Time::max();
    for (uint32_t k = begin[r]; k < begin[r + 1]; ++k) {
      const uint32_t i = order[k];
      if (e.ended(i) == Time::max()) continue;
      const Node x = g.node(i);
      first = std::min(first, e.started(i));
      if (x.kind == NodeKind::kCompute) {
        v.push_back({e.ended(i) - e.ran(i), 1, 0, 0});
        v.push_back({e.ended(i), -1, 0, 0});
      } else if (e.ended(i) > e.started(i)) {
        v.push_back({e.started(i), 0, 1, x.tag_class});
        v.push_back({e.ended(i), 0, -1, x.tag_class});
      }
    }
    if (v.empty()) continue;
    std::sort(v.begin(), v.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
    std::fill(active.begin(), active.end(), 0);
    int computing = 0;
    Time t = std::min(v.front().t, first);
    for (const Edge& x : v) {
      if (x.t > t && computing == 0) {
        int n = 0;
        for (size_t c = 1; c < nc; ++c) n += active[c] > 0;
        const Time d = x.t - t;
        if (n == 0) {
          out.exposed[0][r] += d;
        } else {
          // Evenly: the remainder (femtoseconds) to the first class, so the parts sum exactly.
          const Time share = Time::fs(d.as_fs() / n);
          bool first_class = true;
          for (size_t c = 1; c < nc; ++c)
            if (active[c] > 0) {
              out.exposed[c][r] += first_class ? d - share * (n - 1) : share;
              first_class = false;
            }
        }
      }
      t = std::max(t, x.t);
      computing += x.compute;
      active[x.cls] += x.delta;
    }
  }
}

// The node that held node i up (kNoNode: none, it started the run).
uint32_t holder(const ExecGraph& g, const WorkloadEngine& e, uint32_t i,
                const std::vector<uint32_t>& send_of, const std::vector<uint32_t>& gpu_prev) {
  const Node& x = g.node(i);
  if (x.kind == NodeKind::kRecv && e.ended(i) > e.started(i)) return send_of[i];
  if (x.kind == NodeKind::kCompute && e.ended(i) - e.ran(i) > e.started(i)) return gpu_prev[i];
  uint32_t best = kNoNode;
  for (uint32_t k = x.dep_begin; k < x.dep_end; ++k) {
    const uint32_t d = g.deps()[k];
    if (best == kNoNode || e.ended(d) > e.ended(best)) best = d;
  }
  return best;
}

void critical_path(const ExecGraph& g, const WorkloadEngine& e, ClassResult& out) {
  uint32_t last = kNoNode;
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (e.ended(i) == Time::max()) return;  // an unfinished run has no path
    if (last == kNoNode || e.ended(i) > e.ended(last)) last = i;
  }
  if (last == kNoNode) return;
  std::vector<uint32_t> send_of(g.size(), kNoNode), gpu_prev(g.size(), kNoNode);
  std::vector<std::vector<uint32_t>> gpu(static_cast<size_t>(g.ranks()));
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (g.node(i).kind == NodeKind::kSend) send_of[g.match(i)] = i;
    if (g.node(i).kind == NodeKind::kCompute) gpu[static_cast<size_t>(g.node(i).rank)].push_back(i);
  }
  for (auto& v : gpu) {
    std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return e.ended(a) < e.ended(b); });
    for (size_t k = 1; k < v.size(); ++k) gpu_prev[v[k]] = v[k - 1];
  }
  // Each node on the path: its own segment [from, its end], then the gap back to its holder's
  // end (0 when it started as the holder finished). Every step goes to a node that ended no
  // later; the bound only guards against a tie of zero-time nodes leading back.
  uint64_t steps = 0;
  for (uint32_t i = last; i != kNoNode && steps++ <= g.size();) {
    const Node& x = g.node(i);
    uint32_t h = holder(g, e, i, send_of, gpu_prev);
    Time from = x.kind == NodeKind::kCompute ? e.ended(i) - e.ran(i) : e.started(i);
    if (x.kind == NodeKind::kRecv && h != kNoNode && h == send_of[i]) {
      // It waited for its message: from its send's start, and on from what held the send.
      from = e.started(h);
      h = holder(g, e, h, send_of, gpu_prev);
      ++out.path_nodes;
    }
    ++out.path_nodes;
    if (x.kind == NodeKind::kCompute)
      out.path_compute += e.ended(i) - from;
    else
      out.path_comm[x.tag_class] += e.ended(i) - from;
    if (h != kNoNode && e.ended(h) < from) out.path_gap += from - e.ended(h);
    if (h == kNoNode) out.path_length = e.ended(last) - from;
    i = h;
  }
}

}  // namespace

ClassResult class_result(const ExecGraph& g, const WorkloadEngine& e) {
  ClassResult out;
  const size_t nc = g.classes().size(), nr = static_cast<size_t>(g.ranks());
  out.exposed.assign(nc, std::vector<Time>(nr));
  out.sent.assign(nc, std::vector<uint64_t>(nr));
  out.path_comm.assign(nc, Time());
  for (uint32_t i = 0; i < g.size(); ++i)
    if (g.node(i).kind == NodeKind::kSend)
      out.sent[g.node(i).tag_class][static_cast<size_t>(g.node(i).rank)] += g.node(i).bytes;
  share_exposed(g, e, out);
  critical_path(g, e, out);
  return out;
}

}  // namespace fabricsim::workload
