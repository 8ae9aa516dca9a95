// A switch chip's zero-load latency: when a frame alone in the chip may start leaving it.
//
// Hardware: the cut-through core of switch_core.h as docs/architecture.md ("What each cycle of
// the core does") describes it, with nothing else in the chip: a frame's cells arrive at port
// rate and each becomes eligible on the first clock edge after its last byte, plus the ingress
// pipeline; a crossbar chip matches it (iterations x cycles_per_iteration cycles, at most one
// matching a crossbar slot of cell time / speedup, or one a cycle when pipelined), it reaches the
// egress crossbar + egress cycles later, and the egress starts the frame once its remaining
// cells can no longer underrun the wire (egress.start no_underrun) and no earlier than the cycle
// that holds its last crossing. Parameters that matter: core_clock, cell_size, the pipeline's
// cycles, architecture, scheduler iterations, cycles_per_iteration, pipelined, speedup.
//
// What the NICs' idle-fabric flow completion time uses (models/nic/idle_fabric.h), a closed form
// rather than a run. Exact (to the femtosecond, for cut_through with no_underrun: what the
// shipped chips do, and what testbenches/cli/chip_latency_test.py checks the core against);
// for other egress.start or forwarding settings an estimate (exact() says which).
#pragma once

#include <cstdint>

#include "models/common/units.h"
#include "models/switch/switch_config.h"

namespace fabricsim::sw {

class ZeroLoadLatency {
 public:
  // `rate`: the ports' rate (the frame comes in and goes out at it).
  ZeroLoadLatency(const SwitchConfig& cfg, BitRate rate);

  // The first frame bit's earliest time out of the egress (on an ideal link its first bit, on a
  // real one the start of its preamble), for a frame of `bytes` whose first bit came in at t0.
  Time first_bit(Time t0, uint64_t bytes) const { return first_bit(t0, bytes, rate_, rate_, 0); }
  // The same for a frame that comes in at `in` and leaves at `out`, its processing `lag` cycles
  // late (an admission slot waited for: switch.ingress); the crossbar's slots stay those of the
  // constructor's rate. What switch.model packet starts its frames at (packet_core.h).
  Time first_bit(Time t0, uint64_t bytes, BitRate in, BitRate out, int64_t lag) const;
  // Whether first_bit is the core's time exactly (else an estimate).
  bool exact() const { return exact_; }

 private:
  int64_t period_;           // fs
  uint64_t cell_;            // bytes
  int64_t ingress_, after_;  // cycles: ingress pipeline; crossbar + egress
  int64_t matching_;         // cycles of a matching; -1: no crossbar (shared memory)
  bool pipelined_;
  int64_t speedup_milli_;  // crossbar speedup x 1000
  enum class Start : uint8_t { kNoUnderrun, kFirstCell, kLastCell } start_;
  bool exact_;
  BitRate rate_;
};

}  // namespace fabricsim::sw
