// The stop signal (SIGINT, SIGTERM, SIGHUP) a run has been asked to stop by, readable anywhere:
// sim::InterruptGuard's handler sets it, the runner stops at its next step, and work done before
// the run starts (reading a workload, building its graph) looks at it too, so that an interrupt
// is honoured within a second in every phase, not only once the simulation runs.
#pragma once

#include <csignal>
#include <stdexcept>
#include <string>

namespace fabricsim {

// The first stop signal received while an InterruptGuard holds them, or 0. (Written only by the
// signal handler and the guard; a sig_atomic_t, as a handler may write.)
inline volatile std::sig_atomic_t g_stop_signal = 0;

// What a phase before the run throws when it sees the signal: the run ends without results
// (exit 1, as an interrupted run), at once rather than after the phase.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Interrupted when a stop signal has come. `during`: what was being done ("building the
// workload's graph"). Cheap: call it every few thousand items of a long loop.
inline void check_stop(const char* during) {
  if (g_stop_signal)
    throw Interrupted(std::string("interrupted (signal ") + std::to_string(g_stop_signal) +
                      ") while " + during);
}

}  // namespace fabricsim
