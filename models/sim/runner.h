// The runner: drives an elaborated Fabric through a run's phases with sc_start, as `fabricsim run`
// does: warm-up, measurement window, then drain (traffic keeps flowing until every packet
// injected in the window has left or been dropped, at most sim.drain_limit after the window, as
// BookSim does), stopping early and cleanly on an interrupt.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "models/common/units.h"
#include "models/sim/fabric.h"

namespace fabricsim::sim {

struct RunOptions {
  bool progress = false;  // progress line on stderr (when it is a terminal)
  // The run's output directory: run_simulation streams occupancy.csv into it during the run
  // (empty: no occupancy.csv). run_phases does not read it.
  std::string out_dir;
  // Called between sc_start calls with the simulated time reached, when every cycle before it
  // has run (the occupancy writer), at least every `max_step` of simulated time: a longer stretch
  // is cut into several sc_start calls, which changes nothing in the simulation.
  std::function<void(Time)> after_step;
  Time max_step = Time::max();
};

// While one exists, SIGINT, SIGTERM and SIGHUP (Ctrl-C, `kill`, `timeout`, a closed terminal) do
// not kill the process: they ask the run to stop at its next step, and the runner returns with
// RunOutcome::interrupted. Hold it until the partial results are written, so that a second signal
// while they are being written cannot leave them half done. Once a signal came, its destructor
// leaves the handlers in place (a later signal cannot kill the process on its way to exit 1).
// The phases before the run see the signal too (models/common/stop_signal.h).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // The first signal received since the guard was made (0: none).
  static int signal_received();
};

struct RunOutcome {
  Time end_time;             // simulated time when the run stopped
  bool interrupted = false;  // a stop signal cut it short
};

// Runs `fabric` until the end of its drain (or an interrupt). `wall0`: when the run started, for
// the progress line's ETA. May be called once per process (SystemC allows one elaboration).
RunOutcome run_phases(Fabric& fabric, const RunOptions& opt,
                      std::chrono::steady_clock::time_point wall0);

}  // namespace fabricsim::sim
