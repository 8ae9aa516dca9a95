#include "models/switch/zero_load.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::sw {

namespace {
int64_t ceil_div(__int128 a, __int128 b) {
  return static_cast<int64_t>((a + b - 1) / b);
}
}  // namespace

ZeroLoadLatency::ZeroLoadLatency(const SwitchConfig& cfg, BitRate rate)
    : period_(cfg.cycle().as_fs()),
      cell_(cfg.cell_size.count()),
      ingress_(cfg.ingress_cycles),
      after_(cfg.crossbar_cycles + cfg.egress_cycles),
      matching_(cfg.arch() == Architecture::kSharedMemory
                    ? -1
                    : cfg.iterations * cfg.cycles_per_iteration),
      pipelined_(cfg.pipelined),
      speedup_milli_(std::max<int64_t>(1, std::llround(cfg.speedup * 1000))),
      rate_(rate) {
  // store_and_forward and all_cells start a frame with its last cell there; first_cell with its
  // first (ignoring the stalls an underrun then adds: an estimate).
  start_ = !cfg.cut_through() || cfg.egress_start == "all_cells" ? Start::kLastCell
           : cfg.egress_start == "first_cell"                    ? Start::kFirstCell
                                                                 : Start::kNoUnderrun;
  exact_ = start_ == Start::kNoUnderrun;
}

Time ZeroLoadLatency::first_bit(Time t0, uint64_t bytes, BitRate in, BitRate out,
                                int64_t lag) const {
  const uint64_t cells = std::max<uint64_t>(1, (bytes + cell_ - 1) / cell_);
  const int64_t cell_fs = rate_.serialization(Bytes(cell_)).as_fs();
  // Crossing times are kept x speedup_milli_ so that the slot (cell time / speedup) is whole.
  const __int128 den = speedup_milli_, slot = __int128{cell_fs} * 1000;
  const __int128 pd = __int128{period_} * den;
  __int128 match = -1;
  int64_t first_x = 0, last_x = 0, ready = INT64_MIN;
  for (uint64_t k = 0; k < cells; ++k) {
    const uint64_t upto = std::min((k + 1) * cell_, bytes);
    const int64_t eligible =
        ceil_div((t0 + in.serialization(Bytes(upto))).as_fs(), period_) + ingress_ + lag;
    const __int128 at = __int128{eligible} * pd;
    if (match < 0 || matching_ < 0) {
      match = at;  // (shared memory: no crossbar slots either)
    } else if (pipelined_) {
      // A matching a slot: a slot that passed less than a cycle ago still counts (the next one
      // follows it), an older one is idle time (the next starts at once).
      match += slot;
      if (match + pd <= at) match = at;
    } else {
      match = std::max(at, match + slot);
    }
    // On the first clock edge at or after the slot, and not before the cell is eligible.
    const int64_t x = std::max(eligible, ceil_div(match, pd)) + std::max<int64_t>(0, matching_);
    if (k == 0) first_x = x;
    last_x = x;
    // The frame may start once cell k, at the egress, is there by the time the wire needs it.
    ready = std::max(ready, (x + after_) * period_ - out.serialization(Bytes(k * cell_)).as_fs());
  }
  switch (start_) {
    case Start::kNoUnderrun:
      return Time::fs(std::max(ready, std::max(first_x + after_, last_x) * period_));
    case Start::kFirstCell:
      return Time::fs((first_x + after_) * period_);
    case Start::kLastCell:
      break;
  }
  return Time::fs((last_x + after_) * period_);
}

}  // namespace fabricsim::sw
