// The iSLIP reference model (sw::IslipScheduler, models/switch/islip.h) with the cycle timing of
// rtl/islip_sched.sv, so that the harness can compare the two pin for pin every cycle: a start
// taken at an edge (when not busy) computes the matching there (pointers move at that edge); done
// is high for one cycle after `iterations` edges, when match shows the new matching, held until
// the next one; busy covers the cycles in between. Reset clears pointers and outputs.
#pragma once

#include <cstddef>  // before port_set.h, which uses size_t
#include <vector>

#include "models/common/port_set.h"
#include "models/switch/islip.h"
#include "rtl/islip_rtl.h"

namespace fabricsim::cosim {

class IslipCycleModel {
 public:
  IslipCycleModel(int ports, int iterations);

  // The outputs in the current cycle (before its edge).
  const rtl::IslipPins& pins() const { return pins_; }
  // The edge: start is taken when not busy; requests/out_ready are read only then. Returns true
  // when a matching started.
  bool edge(bool start, const std::vector<PortSet>& requests, const PortSet& out_ready);
  void reset();

  // The matching just started (valid after an edge that returned true), and what a single
  // iteration would have matched (for coverage).
  const std::vector<int>& pending() const { return pending_; }
  int first_iteration_size() const { return first_size_; }
  int ports() const { return n_; }
  int iterations() const { return k_; }

 private:
  void refresh_pointers();

  int n_, k_;
  sw::IslipScheduler sched_;
  sw::IslipScheduler single_;  // one iteration, same pointer history (pointers move in it 1 only)
  std::vector<int> pending_, single_match_;
  int remaining_ = 0;
  int first_size_ = 0;
  rtl::IslipPins pins_;
};

}  // namespace fabricsim::cosim
