// The threads' split that follows the work (sim.rebalance): how many consecutive switches each
// side runs, moved between neighbouring sides as their waits at window ends say one side sets
// the pace.
//
// Not hardware: the parallel run's load balance (docs/architecture.md, "Threads"). A split fixed
// at the start cannot fit a run whose work moves between the sides: in the 1,024-rank
// all-to-all the NICs (the main thread's) set the pace until PFC holds the buffers, then the
// switches do, and the main thread waited 615 s of the call's 2,344 s for the worker while the
// worker waited 82 s (docs/performance.md, "thirteenth pass"). Results do not depend on the
// split (every split gives the same files), so moving switches between windows changes only
// the speed. Plain C++, no clock of its own: the caller measures a stretch of windows and says
// how long it took and how long each side waited in it.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim {

class SplitBalancer {
 public:
  // `counts`: switches per side, side 0 (the main thread, which also runs the hosts) first.
  explicit SplitBalancer(std::vector<int> counts);

  // One stretch: its wall seconds and each side's wall seconds of waiting at window ends in it
  // (side 0: for the workers; a worker: for the main thread). For each pair of neighbouring
  // sides whose waits differ by more than kDeadband of the stretch, switches at their border
  // move to the one that waited more: about a quarter of what would even the two out at the
  // cost per switch seen on the pair's worker (half of the gap, damped by half: the waits of a
  // stretch are noisy), at least one and at most an eighth of the giver's. A worker keeps one
  // switch at least; side 0 may give all of its own. Returns whether the split changed.
  bool look(double wall_s, const std::vector<double>& waits);

  const std::vector<int>& counts() const { return counts_; }
  // Switches moved so far (each counted once per move).
  uint64_t moves() const { return moves_; }
  // The share of a stretch two sides' waits may differ by without a move.
  static constexpr double kDeadband = 0.04;

 private:
  std::vector<int> counts_;
  uint64_t moves_ = 0;
};

}  // namespace fabricsim
