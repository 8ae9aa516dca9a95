// The fabric's threads (sim.threads, sim.partition) and run-ahead: which switches each worker
// runs, the windows' lookahead from the links' latency, and the horizon the kernel may run to.
// Split from fabric.cpp by job; see docs/architecture.md, "Threads".
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "models/common/cpu_budget.h"
#include "models/common/error.h"
#include "models/sim/fabric.h"

namespace fabricsim::sim {

void Fabric::set_threads() {
  // Threads (docs/architecture.md, "Threads"): the hosts and NICs and some of the switches on
  // the main thread (side 0), the other switches on P - 1 workers. Every wire between two sides
  // has a latency the run-ahead windows already respect: what crosses it inside a window takes
  // effect after the window. MPI ranks ("MPI") are the same sides in processes of their own.
  const bool mpi = g_mpi_world.size > 1;
  const int64_t asked = mpi ? g_mpi_world.size : cfg_.sim.threads;
  const std::string what =
      mpi ? fmt::format("MPI with {} ranks", asked) : fmt::format("sim.threads: {}", asked);
  if (asked < 2) return;
  if (mpi && cfg_.sim.threads > 1)
    throw InputError(fmt::format(
        "sim.threads: {} under MPI ({} ranks): each rank runs one side of the fabric on one "
        "thread; run with sim.threads: 1 under mpirun, or with threads in one process",
        cfg_.sim.threads, asked));
  if (switch_schedulers_.size() != 1)
    throw InputError(
        fmt::format("{} needs every switch on one clock; this fabric's switch kinds have {} "
                    "core clocks (switch.core_clock / switch_kinds[].core_clock)",
                    what, switch_schedulers_.size()));
  if (lookahead_cycles() < 2)
    throw InputError(
        fmt::format("{} needs the switches' run-ahead: sim.lookahead true and links with latency "
                    "(link.model ideal has none)",
                    what));
  const int sides =
      mpi ? mpi_sides(asked) : static_cast<int>(std::min<int64_t>(asked, switch_count() + 1));
  // A worker needs a switch of its own: more threads than switches + 1 run as that many.
  if (sides < asked)
    std::cerr << fmt::format(
        "fabricsim: warning: sim.threads: {} runs as {}: this fabric has {} switch{} (one "
        "worker thread per switch at most, beside the main thread)\n",
        asked, sides, switch_count(), switch_count() == 1 ? "" : "es");
  sides_ = sides;
  const std::vector<int> side = partition(sides);
  for (int s = 0; s < switch_count(); ++s) switches_[s]->set_side(side[s]);
  for (int h = 0; h < hosts(); ++h)
    switches_[topology_.host_port[h].sw]->set_remote_port(topology_.host_port[h].port);
  const bool steal = takes_switches();  // (DeviceScheduler::set_stealing)
  std::function<void()> start, end;
  if (cfg_.stats.flow_events > 0) {
    // The switches add their spans to a log per side (stealing: per thread, whichever switch it
    // runs), put in place when a window ends.
    switch_spans_.assign(static_cast<size_t>(sides), stats::SpanLog(UINT64_MAX));
    for (int s = 0; s < switch_count(); ++s)
      switches_[s]->core().set_span_sink(
          steal ? stats::SpanSink{nullptr, s, true}
                : stats::SpanSink{&switch_spans_[switches_[s]->side()], s, false});
    start = [this] { span_mark_ = spans_.records().size(); };
    end = [this] { put_switch_spans(span_mark_); };
  }
  std::vector<WindowWorker*> workers;
  for (int s = 1; s < sides; ++s) {
    if (!mpi) workers_.push_back(std::make_unique<WindowWorker>());
    workers.push_back(mpi ? nullptr : workers_.back().get());
  }
  DeviceScheduler& d = *switch_schedulers_[0];
  d.set_parallel(std::move(workers), std::move(start), std::move(end));
  hosts_->set_catch_up([&d](Time t) { d.sync(t); });
  if (steal) {
    d.set_stealing(true);
    if (!switch_spans_.empty()) {  // each thread's log, once
      stats::t_thread_log = &switch_spans_[0];
      for (int s = 1; s < sides; ++s) {
        stats::SpanLog* log = &switch_spans_[static_cast<size_t>(s)];
        workers_[static_cast<size_t>(s - 1)]->start([log] { stats::t_thread_log = log; });
        workers_[static_cast<size_t>(s - 1)]->wait();
      }
    }
  }
  if (mpi) set_mpi(side);
}

bool Fabric::takes_switches() const {
  if (g_mpi_world.size > 1) return false;  // (under MPI a side is a process)
  if (cfg_.sim.rebalance == "auto") return nics_ != nullptr && packet_fabric();
  return cfg_.sim.rebalance == "true";
}

bool Fabric::packet_fabric() const {
  const int n = switch_count();
  bool all = n > 0;
  for (int s = 0; s < n; ++s) all = all && chips_[s]->packet_model();
  return all;
}

std::vector<int> Fabric::partition(int sides) const {
  const std::vector<double>& given = cfg_.sim.partition;
  if (!given.empty()) {  // by hand: so many consecutive switches a side
    double sum = 0;
    bool whole = true;
    for (double x : given) {
      sum += x;
      whole = whole && x == std::floor(x);
    }
    if (static_cast<int>(given.size()) != sides || sum != switch_count() || !whole)
      throw InputError(fmt::format(
          "sim.partition: {} entries summing to {}: this run has {} sides and {} switches (one "
          "entry a side, a whole number of switches each, summing to the switches)",
          given.size(), sum, sides, switch_count()));
    std::vector<int> side;
    for (int s = 0; s < sides; ++s)
      for (int i = 0; i < static_cast<int>(given[static_cast<size_t>(s)]); ++i) side.push_back(s);
    return side;
  }
  // By a rough cost: a switch's connected ports (each a hop its packets take), a host with a
  // NIC 1.2 of those, a traffic generator's host 0.5 (the 64-NIC all-to-all spends 55% in its
  // NICs, 45% in the chip). Each side holds consecutive switch ids: the topologies number their
  // switches pod by pod (group by group, rail by rail; the cores or spines last), so a side
  // holds whole pods but at its ends, and the hosts are handed the switches' frames in the
  // order one thread hands them (DeviceScheduler::deliver_to). The main thread takes the hosts,
  // then switches while it holds at most total / P (it also runs the kernel); each worker then
  // takes its share of what is left, at least one switch each. In a fabric of packet-model
  // switches (switch.model packet: a hop ~0.2x the cycle model's CPU) a NIC host weighs 3.3
  // ports: perf's samples per thread on the k = 8 fat tree's all-to-all put 128 NIC hosts (and
  // the kernel) at 53 switches of 8 ports (docs/performance.md, "The packet model"); a traffic
  // generator's host stays at 0.5 (the same measurement on a generator fabric split evenly).
  const int n = switch_count();
  std::vector<double> cost(static_cast<size_t>(n), 0.0);
  for (int h = 0; h < hosts(); ++h) cost[topology_.host_port[h].sw] += 1;
  for (const auto& w : topology_.wires) {
    cost[w.a.sw] += 1;
    cost[w.b.sw] += 1;
  }
  // With sim.rebalance (not under MPI) any thread runs any switch: the split only says which
  // thread delivers the calls made to a side's switches at a window's end (all of them, then),
  // so it evens out the switches' ports without the hosts.
  const double nic_host = packet_fabric() ? 3.3 : 1.2;
  double acc = takes_switches() ? 0.0 : hosts() * (nics_ ? nic_host : 0.5), total = acc;
  for (double c : cost) total += c;
  std::vector<int> side(static_cast<size_t>(n), sides - 1);
  int s = 0;
  double left = total, target = total / sides;
  for (int i = 0; i < n; ++i) {
    // Stay on side s while within its share (side 0: at most it; a worker: the nearest), and
    // while every later side can still have a switch.
    const bool fits = s == 0 ? acc + cost[i] <= target : acc + cost[i] / 2 <= target;
    const bool must_move = n - i <= sides - 1 - s;
    const bool may_stay = s > 0 && acc == 0;  // a worker's first switch
    if (s < sides - 1 && (must_move || (!fits && !may_stay))) {
      left -= acc;
      ++s;
      acc = 0;
      target = left / (sides - s);
    }
    side[i] = s;
    acc += cost[i];
  }
  return side;
}

void Fabric::put_switch_spans(size_t at) {
  // Each side's log holds its switches' spans in switch order: merged by device, they are in the
  // order one thread adds them, and they go where it adds them. (Stealing: each thread's log
  // holds the spans of the switches it ran, in another order; flow_events.csv is sorted, and a
  // log past its limit keeps the same records whatever the order: SpanLog::records.)
  for (size_t s = 1; s < switch_spans_.size(); ++s)
    switch_spans_[0].merge_by_device(switch_spans_[s]);
  spans_.splice(at, switch_spans_[0]);
}

void Fabric::sync() {
  for (auto& d : switch_schedulers_) d->sync();
}

int Fabric::main_thread_switches() const {
  int n = 0;
  for (const auto& sw : switches_) n += sw->side() == 0 || sides_ == 1;
  return n;
}

std::vector<int> Fabric::side_switches() const {
  std::vector<int> n(static_cast<size_t>(sides_), 0);
  for (const auto& sw : switches_) ++n[sides_ == 1 ? 0 : static_cast<size_t>(sw->side())];
  return n;
}

const DeviceScheduler* Fabric::threaded_scheduler() const {
  // Threads need every switch on one clock (set_threads): one scheduler has the workers.
  for (const auto& d : switch_schedulers_)
    if (d->sides() > 1) return d.get();
  return nullptr;
}

std::vector<uint64_t> Fabric::side_runs() const {
  const DeviceScheduler* d = threaded_scheduler();
  return d ? d->side_runs() : std::vector<uint64_t>{};
}

uint64_t Fabric::worker_windows() const {
  uint64_t n = 0;
  for (const auto& d : switch_schedulers_) n += d->worker_windows();
  return n;
}

double Fabric::main_wait_s() const {
  double s = 0;
  for (const auto& d : switch_schedulers_) s += d->main_wait_s();
  return s;
}

std::vector<double> Fabric::worker_wait_s() const {
  const DeviceScheduler* d = threaded_scheduler();
  return d ? d->worker_wait_s() : std::vector<double>{};
}

std::vector<double> Fabric::worker_idle_s() const {
  const DeviceScheduler* d = threaded_scheduler();
  return d ? d->worker_idle_s() : std::vector<double>{};
}

void Fabric::flush_spans(Time now) {
  if (spans_flushed_ || cfg_.stats.flow_events == 0) return;
  spans_flushed_ = true;
  for (int s = 0; s < switch_count(); ++s)
    if (switch_here(s)) switches_[s]->core().flow_control().flush_spans(now);
  if (remote_) remote_->take_spans(switch_spans_);
  if (sides_ > 1) put_switch_spans(spans_.records().size());
  for (int h = 0; h < hosts(); ++h)
    if (auto* fc = hosts_->host(h).flow_control()) fc->flush_spans(now);
}

void Fabric::set_lookahead() {
  // Every hand-over between switches takes effect at least one link latency after the cycle
  // that makes it (a frame's first bit reaches the far end a latency after it leaves, and its
  // first cell later still), except that a switch hands a data frame over as its last bit leaves:
  // the frames on switch-to-switch wires bound the window too (their first bit plus the latency).
  // Hosts hand over as the first bit leaves, and do not run ahead.
  if (!cfg_.sim.lookahead || cfg_.link.ideal()) return;
  Time latency = cfg_.link.min_latency();
  for (size_t b = 0; b < topology_.boxes.size(); ++b)  // a box's internal links may be shorter
    latency = std::min(latency, box_link(static_cast<int>(b)).latency());
  for (const auto& t : topology_.wires) {
    switches_[t.a.sw]->core().watch_handover(t.a.port);
    switches_[t.b.sw]->core().watch_handover(t.b.port);
  }
  for (auto& d : switch_schedulers_) {
    d->set_lookahead(latency / d->period());
    if (!topology_.wires.empty())
      d->set_bound([this, latency] {
        Time oldest = Time::max();
        for (int s = 0; s < switch_count(); ++s)
          if (switch_here(s))
            oldest = std::min(oldest, switches_[s]->core().oldest_watched_frame());
        if (remote_) oldest = std::min(oldest, remote_->oldest_watched_frame());
        return oldest == Time::max() ? oldest : oldest + latency;
      });
  }
}

void Fabric::set_horizon(Time t) {
  horizon_ = t;
  for (auto& d : switch_schedulers_) d->set_horizon(t);
}

void Fabric::set_host_windows() {
  // With the switches' run-ahead (its lookahead bounds the windows), in one process (MPI's
  // hosts are held to the switches' windows: Fabric::set_mpi).
  if (!cfg_.sim.host_windows || !hosts_ || g_mpi_world.size > 1 || switch_schedulers_.empty() ||
      lookahead_cycles() < 2)
    return;
  hosts_->set_window_bound([this](Time t) { return host_window_end(t); });
}

Time Fabric::host_window_end(Time t) const {
  // A switch hands a host a frame as its last bit leaves, in a window that starts no earlier
  // than the one in flight (or, none in flight, than `t`: the kernel's next), and the frame
  // arrives a link latency later, a lookahead at least. What a host sends from `t` on reaches a
  // switch a lookahead later, after every window run so far.
  Time end = horizon_;
  for (const auto& d : switch_schedulers_) {
    const Time from = d->window_in_flight() ? std::min(t, d->period() * d->cycle()) : t;
    end = std::min(end, from + d->period() * d->lookahead());
  }
  return end;
}

int64_t Fabric::lookahead_cycles() const {
  int64_t w = INT64_MAX;
  for (const auto& d : switch_schedulers_) w = std::min(w, d->lookahead());
  return w == INT64_MAX ? 1 : w;
}

}  // namespace fabricsim::sim
