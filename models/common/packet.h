// The packet descriptor that crosses every port/link boundary in FabricSim.
//
// A packet is what an endpoint (traffic generator, trace replay, later the RDMA NIC) puts on a wire
// and what a device (the switch) receives on a port. It is a small value type: devices keep their
// own per-packet state (cells, queue links) in their own pools, indexed by the device.
#pragma once

#include <cstdint>

#include "models/common/units.h"

namespace fabricsim {

constexpr uint8_t kEcnEct0 = 1, kEcnCe = 3;
// In `ecn` (the IP TOS byte's ECN bits; this bit stands for a DSCP codepoint a switch remarks):
// the packet was trimmed to its header by a switch that would have dropped it
// (switch.trimming). A trimmed packet is no longer ECT: ECN marking leaves it alone.
constexpr uint8_t kTrimmed = 0x80;

struct Packet {
  // Unique per run, assigned by the source in injection order; a NIC's packets carry their
  // transport header here instead (unique per QP and transmission: models/nic/wire_header.h).
  // Its low byte is the packet's entropy (packet_entropy()) when a switch hashes it
  // (switch.routing.hash_fields with entropy: the UDP source port RoCEv2 and UEC NICs set per
  // QP or per packet); a NIC writes it there, a generator's packets have their id's low byte
  // there, so they spray per packet in that mode.
  uint64_t id = 0;
  int32_t src = 0;   // source endpoint (host) id
  int32_t dst = 0;   // destination endpoint id; devices map it to a port through a table
  uint8_t tc = 0;    // traffic class (0 = lowest priority; < 16)
  uint8_t ecn = 0;   // IP ECN field: 0 not ECN-capable, 1 ECT(0), 3 CE; | kTrimmed: trimmed
  int16_t via = -1;  // dragonfly valiant/ugal: intermediate group still to reach (-1: none)
  // Opaque to the network: what an RDMA NIC's packet carries beyond its routing fields (with
  // `id`, the transport header: models/nic/wire_header.h). 0 from other sources.
  uint32_t aux = 0;
  Bytes size;        // frame size on the wire, without preamble/IFG (link layer adds those)
  Time inject_time;  // time the first bit enters the first device's ingress port
};
// Five words: the switch keeps a packet's state in two cache lines (switch_core.h), and 8 more
// bytes here would make it three (docs/performance.md).
static_assert(sizeof(Packet) == 40, "Packet should stay five words");

// The 8-bit entropy of a packet: what a switch hashing `entropy` mixes into its ECMP pick.
inline uint8_t packet_entropy(const Packet& p) {
  return static_cast<uint8_t>(p.id);
}

// A link-level control frame: consumed by the receiving MAC, never buffered or forwarded.
struct ControlFrame {
  enum class Kind : uint8_t { kPause, kCredit };
  Kind kind = Kind::kPause;
  uint8_t enable = 0;            // pause: class-enable vector (bit p: quanta[p] applies)
  uint8_t vl = 0;                // credit: virtual lane
  uint16_t quanta[8] = {};       // pause: quanta per priority (0 = resume)
  uint16_t fctbs = 0, fccl = 0;  // credit: the sender's blocks sent, the receiver's credit limit
  uint32_t bytes = 0;            // on the wire, without preamble and gap
};

// Per-frame wire overhead of a MAC (models/link/wire_format.h derives it from the framing): a
// frame shorter than `min_frame` bytes is padded to it, `lead` bytes (Ethernet preamble + SFD)
// precede its first bit and `gap` bytes (inter-frame gap) follow its last. All zero: an ideal wire
// that carries frames back to back (the cell-slotted switch of the queueing literature).
struct FrameOverhead {
  uint32_t min_frame = 0;
  uint32_t lead = 0;
  uint32_t gap = 0;
  uint64_t frame_bytes(uint64_t size) const { return size < min_frame ? min_frame : size; }
  // Bytes of wire time a frame takes from the start of its preamble to the end of its gap.
  uint64_t wire_bytes(uint64_t size) const { return frame_bytes(size) + lead + gap; }
};

// A MAC's timing at one rate: the rate, and precomputed for it the preamble and the gap +
// preamble (from a frame's last bit to the next one's first bit).
struct MacTiming {
  BitRate rate;
  Time lead, gap;
  MacTiming() = default;
  MacTiming(BitRate r, const FrameOverhead& o)
      : rate(r),
        lead(r.serialization(Bytes(o.lead))),
        gap(r.serialization(Bytes(uint64_t{o.lead} + o.gap))) {}
};

}  // namespace fabricsim
