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
