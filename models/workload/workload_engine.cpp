#include "models/workload/workload_engine.h"

#include <cmath>
#include <stdexcept>

namespace fabricsim::workload {

WorkloadEngine::WorkloadEngine(const ExecGraph& g, MessageNetwork& net,
                               std::vector<double> slowdown)
    : g_(g), net_(net), slowdown_(std::move(slowdown)) {
  const size_t n = g.size();
  if (slowdown_.empty()) slowdown_.assign(static_cast<size_t>(g.ranks()), 1.0);
  if (static_cast<int>(slowdown_.size()) != g.ranks())
    throw std::invalid_argument("WorkloadEngine: a slowdown per rank");
  waiting_.assign(n, 0);
  succ_begin_.assign(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const Node& x = g.node(i);
    waiting_[i] = x.dep_end - x.dep_begin;
    for (uint32_t d = x.dep_begin; d < x.dep_end; ++d) ++succ_begin_[g.deps()[d] + 1];
  }
  for (size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(g.deps().size());
  std::vector<uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (uint32_t i = 0; i < n; ++i) {
    const Node& x = g.node(i);
    for (uint32_t d = x.dep_begin; d < x.dep_end; ++d) succ_[fill[g.deps()[d]]++] = i;
  }
  start_.assign(n, Time::max());
  end_.assign(n, Time::max());
  gpu_queue_.resize(static_cast<size_t>(g.ranks()));
  gpu_busy_.assign(static_cast<size_t>(g.ranks()), false);
}

void WorkloadEngine::start(Time now) {
  for (uint32_t i = 0; i < g_.size(); ++i)
    if (waiting_[i] == 0 && start_[i] == Time::max()) to_start_.push(i);
  start_ready(now);
}

void WorkloadEngine::start_ready(Time now) {
  while (!to_start_.empty()) {
    const uint32_t i = to_start_.top();
    to_start_.pop();
    ready(i, now);
  }
}

void WorkloadEngine::ready(uint32_t i, Time now) {
  start_[i] = now;
  const Node& x = g_.node(i);
  switch (x.kind) {
    case NodeKind::kCompute:
      gpu_queue_[x.rank].push(i);
      if (!gpu_busy_[x.rank]) next_compute(x.rank, now);
      break;
    case NodeKind::kSend:
      net_.post(i, x.rank, x.peer, x.bytes, x.channel, now);
      break;
    case NodeKind::kRecv:
      if (end_[i] != Time::max()) finish(i, now);  // it came before it was posted
      break;
  }
}

void WorkloadEngine::next_compute(int rank, Time now) {
  auto& q = gpu_queue_[rank];
  if (q.empty()) {
    gpu_busy_[rank] = false;
    return;
  }
  const uint32_t i = q.front();
  q.pop();
  gpu_busy_[rank] = true;
  computing_.push({now + gpu_time(i, now), i});
}

Time WorkloadEngine::gpu_time(uint32_t i, Time now) const {
  const Node x = g_.node(i);
  const double d = static_cast<double>(x.duration.as_fs()) * slowdown_[x.rank];
  // Past the clock's range (1000 s computes, one after another, a 1000x straggler) the node
  // ends at Time::max(): never, within any run, rather than at a wrapped time.
  const double room = static_cast<double>((Time::max() - now).as_fs());
  return d < room ? Time::fs(std::llround(d)) : Time::max() - now;
}

// Not kept: recomputed as next_compute computed it. A node that ended ran within the clock's
// range (one past it would end at Time::max(), never), so its time is the rounded product, the
// same whatever `now` gpu_time is given below its end.
Time WorkloadEngine::ran(uint32_t i) const {
  if (g_.node(i).kind != NodeKind::kCompute || ended(i) == Time::max()) return Time();
  return gpu_time(i, Time());
}

void WorkloadEngine::run(Time now) {
  while (!computing_.empty() && computing_.top().t <= now) {
    const Done d = computing_.top();
    computing_.pop();
    const int rank = g_.node(d.node).rank;
    finish(d.node, d.t);
    start_ready(d.t);
    next_compute(rank, d.t);
  }
}

void WorkloadEngine::on_sent(uint32_t token, Time t) {
  finish(token, t);
  start_ready(t);
}

void WorkloadEngine::on_delivered(uint32_t token, Time t) {
  const uint32_t r = g_.match(token);
  end_[r] = t;  // its delivery, until it starts (ended() hides it)
  if (start_[r] != Time::max()) finish(r, t);
  start_ready(t);
}

void WorkloadEngine::finish(uint32_t i, Time now) {
  end_[i] = now;
  ++finished_;
  for (uint32_t k = succ_begin_[i]; k < succ_begin_[i + 1]; ++k)
    if (--waiting_[succ_[k]] == 0) to_start_.push(succ_[k]);
}

std::vector<uint32_t> WorkloadEngine::stuck(size_t max) const {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < g_.size() && v.size() < max; ++i)
    if (ended(i) == Time::max()) v.push_back(i);
  return v;
}

}  // namespace fabricsim::workload
