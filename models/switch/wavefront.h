// Wrapped wavefront arbiter (Tamir & Chi, "Symmetric crossbar arbiters for VLSI communication
// switches", IEEE TPDS 1993).
//
// Hardware: an N x N array of arbiter cells, one per (input, output) crosspoint. A cell is granted
// when it has a request and its row (input) and column (output) have not been granted by an
// earlier cell; the "wrapped" array evaluates one wrapped diagonal per step, and the cells of a
// diagonal share no row or column so they decide in parallel. Parameters: ports N >= 1 (the
// factory's `iterations` is ignored: one pass always yields a maximal match).
//
// Diagonal d is the cells (i, (i + d) mod N), i = 0..N-1. A call processes diagonals p, p+1, ...,
// p+N-1 (mod N), where p is the priority diagonal; cell (i, j) is matched if requests[i][j] is set,
// j is in output_ready, and neither row i nor column j was matched on an earlier diagonal. p starts
// at 0 and advances by one (mod N) after every call, so every crosspoint gets top priority once
// every N slots.
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/voq_scheduler.h"

namespace fabricsim::sw {

class WavefrontScheduler final : public VoqScheduler {
 public:
  explicit WavefrontScheduler(int ports);

  const char* name() const override { return "wavefront"; }
  void schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                std::vector<int>& match) override;
  void reset() override { p_ = 0; }

  int ports() const { return n_; }
  // The diagonal the next call starts from.
  int priority_diagonal() const { return p_; }

 private:
  // W = words per port set when known at compile time (1: <= 64 ports, 2: <= 128), 0 otherwise.
  template <int W>
  void run(const std::vector<PortSet>& requests, const PortSet& output_ready,
           std::vector<int>& match);

  int n_;
  int nw_;  // 64-bit words per port set
  int p_ = 0;
  // Per-call scratch, sized once here so schedule() never allocates. Port sets are flat arrays of
  // nw_ words, one per port in `skew_` and `diag_`.
  std::vector<uint64_t> skew_;  // skew_[i] bit m = requests[i][(i + m) mod N]
  std::vector<uint64_t> diag_;  // diag_[d] bit i = requests[i][(i + d) mod N] (skew_ transposed)
  // free_cols_ is kept in the current diagonal d's frame: bit i = column (i + d) mod N is free.
  std::vector<uint64_t> free_rows_, free_cols_, cand_;
};

}  // namespace fabricsim::sw
