// In-band network telemetry (INT) as HPCC uses it: a stack of per-hop records that each switch
// egress port pushes onto the data packets that carry an INT header, and that the receiving NIC
// reflects to the sender in its ACK (Li et al., "HPCC: High Precision Congestion Control",
// SIGCOMM 2019, sections 3 and 4).
//
// Hardware: a switch port's INT push at dequeue (switch.int): the time, the port's transmitted
// bytes, its queue length and its line rate. On the wire a hop is 8 B and the header 2 B more
// (so 42 B for the 5 hops HPCC allows: the NIC counts them in the frame's size); the model keeps
// each field whole (no 24-bit timestamps or 128 B byte units), so nothing here depends on
// rounding. A frame carries its stack beside the Packet (FrameSink::transfer_int), never inside
// it: the Packet stays five words for every other packet.
#pragma once

#include <cstdint>

#include "models/common/units.h"

namespace fabricsim {

struct IntHop {
  uint64_t ts_ps = 0;      // when the packet started to leave the port (picoseconds)
  uint64_t tx_bytes = 0;   // bytes the port had sent before it (whole run, wrapping)
  uint32_t qlen = 0;       // bytes queued at the port (all classes), the packet not counted
  uint32_t rate_mbps = 0;  // the port's line rate
};

struct IntStack {
  static constexpr int kMaxHops = 5;  // HPCC's limit: a path of more hops is not stamped further
  // Bytes on the wire: 8 per hop slot and 2 of header, sized for kMaxHops by the sender.
  static constexpr uint32_t kWireBytes = 2 + 8 * kMaxHops;
  uint8_t hops = 0;
  IntHop hop[kMaxHops];
  // A switch port's push; a stack already full is left as it is.
  void push(Time ts, uint64_t tx_bytes, uint64_t qlen, BitRate rate) {
    if (hops >= kMaxHops) return;
    IntHop& h = hop[hops++];
    h.ts_ps = static_cast<uint64_t>(ts.as_fs() / 1000);
    h.tx_bytes = tx_bytes;
    h.qlen = static_cast<uint32_t>(qlen > UINT32_MAX ? UINT32_MAX : qlen);
    h.rate_mbps = static_cast<uint32_t>(rate.as_bps() / 1000000);
  }
};

}  // namespace fabricsim
