// One SystemC process that wakes the clocked devices of a clock domain, each in the cycles it has
// work.
//
// Not hardware: the simulation kernel of a partition of the fabric. A switch that has work in
// some cycle used to set its own timed sc_event and run as its own SC_METHOD; with the 80 switches
// of a k = 8 fat tree busy in most cycles, the kernel's timed-event queue and process dispatch
// cost more than many cycles' work. Here the devices of one clock (one period) share a calendar
// of cycles, each cycle a set of device ids (PortCalendar: a bit per device), and the one process
// runs, in each cycle, every device due then in id order (deterministic), then sets its own event
// for the next busy cycle. The devices share no state through it: each still talks to the others
// only through links whose latency is known, which is what lets sim.threads run its devices in
// several partitions at once (set_parallel; docs/architecture.md, "Threads").
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include <systemc>

#include "models/common/event_wheel.h"
#include "models/common/packet_port.h"
#include "models/common/port_mailbox.h"
#include "models/common/remote_side.h"
#include "models/common/window_worker.h"

namespace fabricsim {

class DeviceScheduler : public sc_core::sc_module {
 public:
  static constexpr int64_t kNone = INT64_MAX;

  // A device run by the scheduler: wake(c) is called at the start of cycle c, a cycle it asked for.
  class Client {
   public:
    virtual ~Client() = default;
    virtual void wake(int64_t cycle) = 0;
    // Run-ahead: run cycle `cycle` (one it asked for) and every later cycle it has work in
    // before `end`, then ask for its next one (schedule) as wake does. Nothing another device
    // does inside the window can reach it before `end`, so the device may loop over its own
    // cycles without the scheduler's calendar in between (one set and one take per window
    // instead of per cycle: the per-cycle cost of a lightly loaded switch).
    virtual void run_window(int64_t cycle, int64_t end) {
      (void)end;
      wake(cycle);
    }
    // A hint, while the device before it in a window runs: ask the CPU for the state its window
    // will read first (its records were written a window or more ago, and a whole device's run
    // is time enough for the misses to land). Changes nothing.
    virtual void prefetch_window() {}
  };

  SC_HAS_PROCESS(DeviceScheduler);
  // Cycle c of the domain starts at c x period.
  DeviceScheduler(sc_core::sc_module_name name, Time period);

  Time period() const { return period_; }
  // Registers a device (before the simulation starts); returns its id for schedule().
  int add(Client* c);
  // Device `id` has work in `cycle` (not before the cycle in progress or the next to start): it
  // replaces the device's request if that was for a later cycle.
  void schedule(int id, int64_t cycle);

  // Run-ahead. Every hand-over between devices takes effect at least `cycles` cycles after the
  // cycle that makes it (the links' lookahead, Fabric::lookahead_cycles), so a device's cycles
  // [c, c + cycles) depend on nothing the others do in those cycles: the scheduler woken at cycle
  // c runs each device due in that window through all its cycles there before the next device
  // (in id order), instead of every device cycle by cycle. The devices' state then stays in the
  // CPU's caches for a window instead of a cycle. Windows end before the horizon (the end of
  // the runner's current step), so that what is read between sc_start calls has run exactly
  // to the present; no horizon set (a user's own sc_main): no run-ahead.
  void set_lookahead(int64_t cycles);
  int64_t lookahead() const { return lookahead_; }
  // Windows hold only cycles that start before `t`.
  void set_horizon(Time t);
  // A hand-over already under way may take effect earlier than a window's lookahead (a frame on
  // a wire since before the window, handed over as its last bit leaves): `bound` tells, when a
  // window starts, the earliest time any such hand-over takes effect (Time::max(): none), and
  // the window holds only cycles that start before it.
  void set_bound(std::function<Time()> bound) { bound_ = std::move(bound); }

  // Threads (sim.threads: P; needs run-ahead). The devices are split in P sides (set_side): in
  // each window those of side s >= 1 run on workers[s - 1] while the main thread runs those of
  // side 0 and then the kernel's other processes (the hosts, side 0 too) up to the window's end,
  // where the window is joined. A call made inside a window from side a to a device of side b
  // goes to mail_to(b) on a's thread, a box only that thread writes, and is delivered at the
  // join by b's thread, from sender side 0, 1, ... in turn and in call order within each: it
  // takes effect a link latency later, after the window (docs/architecture.md, "Threads").
  // `on_start` and `on_end` run on the main thread around every run of devices (the fabric's
  // span logs).
  void set_parallel(std::vector<WindowWorker*> workers, std::function<void()> on_start,
                    std::function<void()> on_end);
  // Threads: the window's devices go to whichever thread is free instead of to their sides'
  // (sim.rebalance): the workers take them one by one from a list in id order as the window
  // starts, and the main thread, once the kernel has run the hosts to the window's end, takes
  // what is left before it waits. Every call to a device made inside a window then waits in a
  // mailbox (stealing()), delivered at the join by the thread of the device's side as before.
  // Not with MPI.
  void set_stealing(bool on) { steal_ = on; }
  bool stealing() const { return steal_; }
  // MPI: side `side` runs in another process (its worker, if any, is not used). Every window
  // then runs the parallel way, however short (the side's devices are not here to run).
  void set_remote(int side, RemoteSide* remote);
  // MPI, a call held for a side that another process runs, made outside a window (a host's):
  // delivered there at once, and what it asked of the calendar applied, as a direct call would.
  void deliver_now(int side);
  // MPI, in the process that runs side `side`: runs its devices `devices` through the window
  // before `end` (now: the scheduler's cycle), or delivers the calls held for it (mail_box(side,
  // 0)) with `now` and `window_end` as the scheduler's; what they post and ask is left in the
  // boxes and asked(side) for the caller to send back.
  void serve_window(int side, int64_t now, int64_t end,
                    const std::vector<ScheduledDevice>& devices);
  void serve_delivery(int side, int64_t now, int64_t window_end);
  PortMailbox& mail_box(int to, int from) {
    return mail_[static_cast<size_t>(to) * static_cast<size_t>(sides_) + static_cast<size_t>(from)]
        .v;
  }
  std::vector<ScheduledDevice>& asked(int side) { return asked_[static_cast<size_t>(side)].v; }
  // Calls that crossed from one side to another so far (perf.json's cross_side_calls).
  uint64_t cross_side_calls() const { return cross_calls_; }
  int sides() const { return sides_; }
  // Device `id` runs on side `side` (0: the main thread); the default is side 1.
  void set_side(int id, int side) { side_[static_cast<size_t>(id)] = static_cast<uint8_t>(side); }
  // The side of the calling thread: s on workers[s - 1], 0 elsewhere.
  static int thread_side() { return t_side_; }
  // The calling thread's box for calls to side `to` inside a window.
  PortMailbox& mail_to(int to) {
    return mail_[static_cast<size_t>(to) * static_cast<size_t>(sides_) +
                 static_cast<size_t>(t_side_)]
        .v;
  }
  // Joins the window on the workers if it ends at or before `t` (the rest is about to run at t).
  void sync(Time t) {
    if (in_flight_ && t >= period_ * window_end_) join();
  }
  // Joins the window on the workers, if one runs (the runner between sc_start calls), and
  // delivers the calls held for other processes' sides (MPI: deliver_now).
  void sync() {
    if (in_flight_) join();
    if (held_) deliver_held();
  }
  bool window_in_flight() const { return in_flight_; }
  // Whether the calling thread is running this scheduler's devices (inside run(), or a window on
  // a worker); cycle() is then the cycle they were woken in (the kernel's time is not theirs).
  bool running_here() const { return t_running_ == this; }
  int64_t cycle() const { return now_; }
  // Windows run on the workers so far (perf.json's worker_windows).
  uint64_t worker_windows() const { return worker_windows_; }
  // Threads: the devices' windows each thread ran (perf.json's side_runs), side 0's first.
  std::vector<uint64_t> side_runs() const {
    std::vector<uint64_t> n;
    for (const auto& r : runs_) n.push_back(r.v);
    return n;
  }
  // The sides' balance (perf.json's main_wait_s, worker_wait_s), in wall seconds: at each
  // window's end, the main thread's wait for the workers to finish the window's devices and
  // then their deliveries, and each worker's wait, from finishing its devices, for the main
  // thread to reach the window's end (its devices and the hosts' work up to then); 0 for a side
  // another process runs.
  double main_wait_s() const { return main_wait_s_; }
  const std::vector<double>& worker_wait_s() const { return worker_wait_s_; }
  // Each worker's wall time without a job (perf.json's worker_idle_s): its wait above, and
  // while the main thread alone delivers, or runs the kernel between windows.
  std::vector<double> worker_idle_s() const {
    std::vector<double> s;
    for (const WindowWorker* w : workers_) s.push_back(w ? w->idle_s() : 0.0);
    return s;
  }

 private:
  // What one thread writes in a window, on cache lines of its own.
  template <class T>
  struct alignas(64) Own {
    T v;
  };
  using Far = ScheduledDevice;
  void run();
  // Runs every device due before `end` through its cycles there, in id order (a window).
  void run_window(int64_t end);
  // Threads: runs the window's devices of `side` (share_), on the calling thread.
  void run_share(int side);
  // Threads, stealing: runs devices of share_[0] (every side's) taken from next_ until none is
  // left, as the thread of side `side`.
  void run_taken(int side);
  // Threads: delivers the calls held for `side` (every sender's box), on the calling thread.
  void deliver_to(int side);
  void join();
  // Waits for every worker started; rethrows the first exception one threw once all are done.
  void wait_all();
  // Waits for the remote sides started (their results into the boxes and asked_).
  void wait_remote();
  // MPI: sends side `side` the calls held for it, with the cycle a direct call would read, and
  // applies what they asked of the calendar; deliver_held() does so for every side that has some.
  void deliver_to_remote(int side, int64_t cycle);
  void deliver_held();
  // Counts the calls held across sides (cross_side_calls).
  void count_cross_calls();
  // Sets the wake-up for the first cycle at or after `from` that a device asked for.
  void plan(int64_t from);

  Time period_;
  std::vector<Client*> clients_;
  std::vector<int64_t> due_;  // per device: the cycle it asked for, or kNone
  PortCalendar near_{1};      // cycles within PortCalendar::kSlots of now_
  std::priority_queue<Far, std::vector<Far>, std::greater<Far>> far_;  // the rest (may be stale)
  int64_t now_ = 0;         // the cycle being or last processed
  int64_t lookahead_ = 1;   // cycles per window
  int64_t horizon_ = 0;     // the first cycle no window may hold (0: run no cycle ahead)
  int64_t window_end_ = 0;  // the window in progress: cycles before it
  int current_ = 0;         // the device running in it
  bool rescan_ = false;     // a device made a lower id due inside the window
  std::function<Time()> bound_;
  int64_t pending_ = kNone;  // the cycle wake_ is set for
  bool running_ = false;
  sc_core::sc_event wake_;
  // Threads.
  std::vector<WindowWorker*> workers_;  // side s on workers_[s - 1] (null: remote)
  std::vector<RemoteSide*> remote_;     // per side: another process runs it (MPI), or null
  std::vector<uint8_t> remote_busy_;    // per side: started and not yet waited for
  int64_t min_window_ = kMinWorkerWindow;
  bool held_ = false;       // MPI: hosts' calls held for the run at this instant
  int64_t held_cycle_ = 0;  // the cycle they read
  uint64_t cross_calls_ = 0;
  int sides_ = 1;
  std::function<void()> on_start_, on_end_;
  bool in_flight_ = false;                   // a window runs on the workers (main thread's view)
  bool steal_ = false;                       // set_stealing
  alignas(64) std::atomic<size_t> next_{0};  // stealing: the next device of share_[0] to take
  char next_pad_[64 - sizeof(std::atomic<size_t>)];
  uint64_t worker_windows_ = 0;
  double main_wait_s_ = 0;
  std::vector<double> worker_wait_s_;         // per worker
  std::vector<uint8_t> side_;                 // per device
  std::vector<std::vector<Far>> share_;       // the window's devices of each side and their cycles
  std::vector<Own<std::vector<Far>>> asked_;  // schedule() calls of each side in the window
  std::vector<Own<uint64_t>> runs_;           // side_runs
  std::vector<Own<PortMailbox>> mail_;        // [to * sides_ + from]: calls held in the window
  static thread_local const DeviceScheduler* t_running_;
  static thread_local int t_side_;
  // Shorter windows run on the main thread: a hand-over costs more than they hold (a drain of a
  // run whose sim.duration is short steps sc_start by duration / 200, and a window ends there).
  static constexpr int64_t kMinWorkerWindow = 32;
};

}  // namespace fabricsim
