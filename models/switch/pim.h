// Parallel iterative matching, PIM (Anderson, Owicki, Saxe, Thacker, "High-speed switch
// scheduling for local-area networks", ACM TOCS 1993).
//
// Hardware: per-output and per-input random arbiters (an LFSR feeding a "k-th set bit" selector);
// k request/grant/accept iterations per slot. Parameters: ports N >= 1, iterations k >= 1, and the
// caller's Rng (must outlive the scheduler). No state of its own: reset() does nothing, so
// replaying a sequence also needs the caller's Rng reseeded.
//
// One iteration, over the inputs and outputs still unmatched in this slot:
//   request: input i requests every output j with requests[i][j] set and j in output_ready;
//   grant:   each output with n requesting inputs grants the one of rank rng.below(n) among them
//            in increasing index order;
//   accept:  each input with n grants accepts the one of rank rng.below(n) in increasing order.
// Random draw order (fixed, so a seeded run is reproducible and an RTL model fed the same numbers
// matches): per iteration, first the outputs in increasing index order, then the inputs in
// increasing index order; rng.below() is called only when n >= 2 (a lone candidate is taken
// without a draw). Iterating stops early once an iteration makes no grant (no further draws).
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/voq_scheduler.h"

namespace fabricsim::sw {

class PimScheduler final : public VoqScheduler {
 public:
  PimScheduler(int ports, int iterations, Rng& rng);

  const char* name() const override { return "pim"; }
  void schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                std::vector<int>& match) override;
  void reset() override {}

  int ports() const { return n_; }
  int iterations() const { return k_; }

 private:
  // W = words per port set when known at compile time (1: <= 64 ports, 2: <= 128), 0 otherwise.
  template <int W>
  void run(const std::vector<PortSet>& requests, const PortSet& output_ready,
           std::vector<int>& match);

  int n_;
  int nw_;  // 64-bit words per port set
  int k_;
  Rng& rng_;
  // Per-call scratch, sized once here so schedule() never allocates. Port sets are flat arrays of
  // nw_ words; `cols_` and `grants_` hold one such set per port.
  std::vector<uint64_t> cols_;    // cols_[j]: inputs requesting output j (requests transposed)
  std::vector<uint64_t> grants_;  // grants_[i]: outputs granting input i this iteration
  std::vector<uint64_t> granted_, free_in_, free_out_, accepted_, cand_;
};

}  // namespace fabricsim::sw
