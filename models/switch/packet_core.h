// The packet-level switch model (switch.model packet): when a packet may start leaving the chip.
//
// Hardware abstracted: the chip of switch_core.h without its cells. SwitchCore keeps everything
// a packet meets as a whole - the ingress ports and admission slots, the shared buffer's
// accounts (its cells reserved at admission), routing and load balancing, the egress class
// queues and their arbitration, the MAC, PFC and credits, ECN, trimming and INT - and replaces
// the cell-by-cell path between admission and egress (cell writes, ingress queues, the crossbar
// or the shared memory's banks, the egress pipeline) by this closed form: a packet joins its
// egress queue at the instant a lone packet could start its frame in the cycle model
// (models/switch/zero_load.h: each cell eligible on the first clock edge after its last byte
// plus the ingress pipeline, at the egress crossbar + egress cycles later, and the frame started
// once no later cell can underrun the wire). Exact at zero load; under load the differences are
// the cycle model's internal contention, which this model does not have: crossbar matching and
// head-of-line blocking, buffer bank conflicts, cell-by-cell allocation (docs/architecture.md,
// "The packet model"). The switch is woken at packet events only (admission, egress join, the
// frame's end), never per cell.
#pragma once

#include <cstdint>

#include "models/common/packet.h"
#include "models/common/units.h"
#include "models/switch/switch_config.h"
#include "models/switch/zero_load.h"

namespace fabricsim::sw {

class PacketTiming {
 public:
  PacketTiming(const SwitchConfig& cfg, const FrameOverhead& overhead);

  // The earliest first bit out of the egress (before its preamble) of a frame of `bytes` whose
  // first bit came in at `t0` at rate `in`, to leave at rate `out` (the port's fastest: the
  // wire needs each cell soonest at it), its processing `lag` cycles late (an admission slot
  // waited for). The cycle model's no_underrun start; all_cells and store_and_forward: with the
  // last cell at the egress; first_cell as no_underrun (a packet-level frame cannot stall).
  Time ready(Time t0, uint64_t bytes, BitRate in, BitRate out, int64_t lag) const;

 private:
  ZeroLoadLatency crossbar_form_;  // voq, input_fifo: the crossbar's matching and slots
  FrameOverhead overhead_;
  bool crossbar_, cut_through_, whole_;
  int64_t period_;           // fs
  int64_t ingress_, after_;  // cycles: ingress pipeline; crossbar + egress
  uint64_t cell_;            // bytes
};

}  // namespace fabricsim::sw
