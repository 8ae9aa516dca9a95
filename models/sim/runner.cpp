#include "models/sim/runner.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iterator>

#include <fmt/format.h>

#include "models/common/stop_signal.h"

namespace fabricsim::sim {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_saved[std::size(kStopSignals)];  // the handlers an InterruptGuard replaced
// The first stop signal received, or 0: shared with the phases before the run (stop_signal.h).
volatile std::sig_atomic_t& g_interrupted = g_stop_signal;
void on_stop_signal(int sig) {
  if (!g_interrupted) g_interrupted = sig;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupted = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &sa, &g_saved[i]);
}

InterruptGuard::~InterruptGuard() {
  // Once a signal has stopped the run, the process is on its way to exit 1 with its results
  // written: the handler stays, so that a second Ctrl-C during the teardown cannot turn that
  // into a death by SIGINT (exit 130).
  if (g_interrupted) return;
  for (size_t i = 0; i < std::size(kStopSignals); ++i)
    sigaction(kStopSignals[i], &g_saved[i], nullptr);
}

int InterruptGuard::signal_received() {
  return g_interrupted;
}

namespace {

// A workload's progress, for the progress line: calls finished of all, and its messages as the
// NICs count them. Each call is looked at from its last node back, so a finished job costs a
// pass over its nodes, an unfinished call one look; the line is drawn a few times a second at
// most.
struct JobProgress {
  size_t calls = 0, calls_done = 0;
  uint64_t messages = 0;  // the job's, posted or not
  nic::NicArray::Progress nics;
};
JobProgress job_progress(const Fabric& fabric) {
  JobProgress p;
  const workload::NicDriver& w = *fabric.workload();
  for (const workload::Span& s : w.graph().spans()) {
    ++p.calls;
    bool done = true;
    for (uint32_t i = s.last; i-- > s.first && done;) done = w.engine().ended(i) != Time::max();
    p.calls_done += done;
  }
  if (const nic::NicArray* n = fabric.nics()) {
    p.nics = n->progress();
    p.messages = n->total_messages();
  }
  return p;
}

}  // namespace

RunOutcome run_phases(Fabric& fabric, const RunOptions& opt,
                      std::chrono::steady_clock::time_point wall0) {
  const SimConfig& sim = fabric.config().sim;
  const bool tty = opt.progress && isatty(fileno(stderr));
  const Time limit = sim.duration + sim.drain_limit;
  const Time chunk = Time::fs(std::max<int64_t>(sim.duration.as_fs() / 200, 1));
  auto now = [] { return from_sc(sc_core::sc_time_stamp()); };
  // sc_start slices: start short (a large fabric may take seconds per simulated microsecond) and
  // grow while they stay under kSliceWall of wall time.
  constexpr double kSliceWall = 0.2;     // seconds
  constexpr double kLogLineWall = 60.0;  // seconds between progress lines when not on a terminal
  constexpr Time kMaxSlice = Time::us(1000000);
  Time slice = Time::ns(10);
  const Time interval = fabric.progress_interval();  // Time(): no liveness samples
  Time next_sample = interval > Time() ? now() + interval : Time::max();
  // On a terminal, one line rewritten in place; otherwise (a log, a batch job) a line a minute of
  // wall time, so that an hours-long run shows where it is. In the drain the work still left
  // (packets in flight, and a workload's packets or messages) says more than the time does.
  double last_line = 0;
  auto progress = [&](const char* phase) {
    if (!opt.progress) return;
    const double el =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (!tty && el - last_line < kLogLineWall) return;
    last_line = el;
    const double frac = std::min(1.0, now().as_s() / sim.duration.as_s());
    const char* lead = tty ? "\r" : "";
    const char* end = tty ? "   " : "\n";
    if (fabric.workload()) {
      // A job's length is its calls', not sim.duration's (often 1 us): say how far the calls got,
      // their messages, and the payload that has reached the receivers of what was posted (a
      // direct all-to-all completes nothing until near its end).
      const JobProgress j = job_progress(fabric);
      fmt::print(stderr,
                 "{}[fabricsim] workload {}  calls {}/{}  messages {}/{}{}  {:.3f} of {:.3f} GB "
                 "arrived  {:.0f}s{}",
                 lead, now().str(), j.calls_done, j.calls, j.nics.completed, j.messages,
                 j.nics.failed ? fmt::format(" ({} failed)", j.nics.failed) : "",
                 static_cast<double>(j.nics.payload_arrived) * 1e-9,
                 static_cast<double>(j.nics.bytes_posted) * 1e-9, el, end);
    } else if (frac < 1.0) {
      const double eta = frac > 0 ? el * (1 - frac) / frac : 0;
      std::fprintf(stderr, "%s[fabricsim] %s %s / %s  %5.1f%%  ETA %.0fs%s", lead, phase,
                   now().str().c_str(), sim.duration.str().c_str(), frac * 100, eta, end);
    } else {
      // The window's packets (what the drain waits for) and the whole fabric's: after the
      // window a NIC workload's packets are not measured, yet they are the work going on.
      const Fabric::Totals t = fabric.totals();
      std::fprintf(stderr,
                   "%s[fabricsim] %s %s (limit %s)  in flight %llu (window %llu)  delivered %llu  "
                   "workload left %llu  %.0fs%s",
                   lead, phase, now().str().c_str(), limit.str().c_str(),
                   static_cast<unsigned long long>(t.in_flight),
                   static_cast<unsigned long long>(t.win_in_flight),
                   static_cast<unsigned long long>(t.delivered),
                   static_cast<unsigned long long>(fabric.workload_left()), el, end);
    }
    std::fflush(stderr);
  };

  // Runs the simulation for `d` in several sc_start calls, which changes nothing in the
  // simulation (between calls every cycle before the present has run everywhere):
  //  - slices paced by wall time, so that an interrupt is seen within about kSliceWall whatever
  //    the run's length (one sc_start of a long run's chunk took minutes): a slice that took
  //    less than half of it doubles (at most), one that took more halves;
  //  - cuts at every multiple of the progress interval, where the switches sample their ports'
  //    progress (the liveness checks: deterministic instants, whatever the pacing);
  //  - steps of at most max_step with after_step() after each (the occupancy writer).
  auto run_for = [&](Time d) {
    if (d == Time()) {  // runs the pending delta cycles only
      fabric.set_horizon(now());
      sc_core::sc_start(to_sc(d));
      fabric.sync();
      if (opt.after_step) opt.after_step(now());
      return;
    }
    const Time end = now() + d;
    while (now() < end && !g_interrupted) {
      const Time t = now();
      Time step = std::min({end - t, slice, opt.max_step});
      if (interval > Time()) step = std::min(step, next_sample - t);
      // Switches run ahead up to the next instant whose state is read (not to the end of a
      // slice, which wall time paces: results do not depend on it).
      fabric.set_horizon(interval > Time() ? std::min(end, next_sample) : end);
      const auto w0 = std::chrono::steady_clock::now();
      sc_core::sc_start(to_sc(step));
      fabric.sync();  // (two threads: the switches' window in flight joined before reading)
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      if (opt.after_step) opt.after_step(now());
      if (interval > Time() && now() >= next_sample) {
        fabric.sample_progress(now());
        next_sample = next_sample + interval;
      }
      if (now() == t) break;
      if (wall > kSliceWall)
        slice = Time::fs(std::max<int64_t>(slice.as_fs() / 2, 1000));
      else if (wall < kSliceWall / 2 && step == slice && slice < kMaxSlice)
        slice = slice * 2;
    }
  };

  bool window_open = false;
  while (now() < sim.duration && !g_interrupted) {
    const Time stop = window_open ? sim.duration : sim.warmup;
    run_for(std::min(chunk, stop - now()));
    if (!window_open && now() >= sim.warmup) {
      fabric.open_window();
      window_open = true;
    }
    progress("run");
  }
  fabric.open_window();  // (no-op once open; interrupted before the window opened otherwise)
  // Drain: traffic keeps flowing (so measured packets see the same load) until every packet that
  // was injected inside the window has left or been dropped, and every packet of a finite
  // workload (a trace) has been sent, or the drain limit is reached. A collective workload's run
  // is mostly drain (its sim.duration a formality, often 1 us): it looks every microsecond at
  // least, not every duration / 200 (5 ns), which stopped the kernel and cut the switches'
  // run-ahead windows to a few cycles.
  const Time drain_chunk = fabric.workload() ? std::max(chunk, Time::us(1)) : chunk;
  while ((fabric.measured_in_flight() > 0 || fabric.workload_left() > 0) && now() < limit &&
         !g_interrupted) {
    // The loop's test cannot pass before drain_not_before: the grid's steps up to it go in one
    // (the run still stops at the first step of the grid at which it passes; a message list's
    // drain took 5 ns steps to its end, each cutting the switches' run-ahead windows short).
    Time step = drain_chunk;
    const int64_t ahead = (fabric.drain_not_before(now()) - now()).as_fs() - 1;
    if (ahead > 2 * drain_chunk.as_fs()) step = drain_chunk * (ahead / drain_chunk.as_fs());
    run_for(std::min(step, limit - now()));
    progress("drain");
  }
  fabric.stop_traffic();
  if (tty) std::fprintf(stderr, "\n");
  return {now(), g_interrupted != 0};
}

}  // namespace fabricsim::sim
