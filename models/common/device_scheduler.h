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
// only through links whose latency is known, so a partition for parallel simulation would be a set
// of devices with schedulers of its own (docs/architecture.md).
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include <systemc>

#include "models/common/event_wheel.h"
#include "models/common/packet_port.h"
#include "models/common/port_mailbox.h"
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

  // Two threads (sim.threads: 2; needs run-ahead). The devices are split in two sides
  // (set_side): in each window those of side 1 run on `worker` while the main thread runs those
  // of side 0 and then the kernel's other processes (the hosts, side 0 too) up to the window's
  // end, where the window is joined. A call made inside a window from one side to a device of
  // the other goes to mail(the receiver's side) and is delivered at the join, in call order: it
  // takes effect a link latency later, after the window (docs/architecture.md, "Two threads").
  // `on_start` and `on_end` run on the main thread around every run of devices (the fabric's
  // span logs).
  void set_parallel(WindowWorker* worker, std::function<void()> on_start,
                    std::function<void()> on_end);
  // Device `id` runs on the main thread (0) or the worker (1, the default).
  void set_side(int id, int side) { side_[static_cast<size_t>(id)] = static_cast<uint8_t>(side); }
  // The side of the calling thread: 1 on the worker, 0 elsewhere.
  static int thread_side() { return t_side_; }
  PortMailbox& mail(int side) { return mail_[side]; }
  // Joins the window on the worker if it ends at or before `t` (the rest is about to run at t).
  void sync(Time t) {
    if (in_flight_ && t >= period_ * window_end_) join();
  }
  // Joins the window on the worker, if one runs (the runner between sc_start calls).
  void sync() {
    if (in_flight_) join();
  }
  bool window_in_flight() const { return in_flight_; }
  // Whether the calling thread is running this scheduler's devices (inside run(), or a window on
  // the worker); cycle() is then the cycle they were woken in (the kernel's time is not theirs).
  bool running_here() const { return t_running_ == this; }
  int64_t cycle() const { return now_; }
  // Windows run on the worker so far (perf.json's worker_windows).
  uint64_t worker_windows() const { return worker_windows_; }

 private:
  struct Far {
    int64_t cycle;
    int id;
    bool operator>(const Far& o) const { return cycle != o.cycle ? cycle > o.cycle : id > o.id; }
  };
  void run();
  // Runs every device due before `end` through its cycles there, in id order (a window).
  void run_window(int64_t end);
  // Two threads: runs the window's devices of `side` (share_), on the calling thread.
  void run_share(int side, int64_t end);
  void join();
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
  // Two threads.
  WindowWorker* worker_ = nullptr;
  std::function<void()> on_start_, on_end_;
  bool in_flight_ = false;  // a window runs on the worker (main thread's view)
  uint64_t worker_windows_ = 0;
  std::vector<uint8_t> side_;  // per device
  std::vector<Far> share_[2];  // the window's devices of each side and their cycles
  std::vector<Far> asked_[2];  // schedule() calls of each side inside the window
  PortMailbox mail_[2];        // calls to each side from the other inside the window
  static thread_local const DeviceScheduler* t_running_;
  static thread_local int t_side_;
  // Shorter windows run on the main thread: a hand-over costs more than they hold (a drain of a
  // run whose sim.duration is short steps sc_start by duration / 200, and a window ends there).
  static constexpr int64_t kMinWorkerWindow = 32;
};

}  // namespace fabricsim
