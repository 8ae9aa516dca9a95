#include "models/switch/packet_core.h"

#include <algorithm>

namespace fabricsim::sw {

namespace {
int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
}  // namespace

PacketTiming::PacketTiming(const SwitchConfig& cfg, const FrameOverhead& overhead)
    : crossbar_form_(cfg, cfg.port_speed),
      overhead_(overhead),
      crossbar_(cfg.arch() == Architecture::kVoq || cfg.arch() == Architecture::kInputFifo),
      cut_through_(cfg.cut_through()),
      whole_(cfg.egress_start == "all_cells"),
      period_(cfg.cycle().as_fs()),
      ingress_(cfg.ingress_cycles),
      after_(cfg.crossbar_cycles + cfg.egress_cycles),
      cell_(cfg.cell_size.count()) {}

Time PacketTiming::ready(Time t0, uint64_t bytes, BitRate in, BitRate out, int64_t lag) const {
  const int64_t p = period_, t = t0.as_fs(), pre = ingress_ + lag;
  if (!cut_through_) {
    // Store-and-forward: every cell is eligible with the frame's last byte (as the cycle model's
    // ready_bytes counts it), and the frame starts once they are all at the egress.
    const int64_t e =
        ceil_div(t + in.serialization(Bytes(overhead_.frame_bytes(bytes))).as_fs(), p);
    return Time::fs((e + pre + after_) * p);
  }
  if (crossbar_) return crossbar_form_.first_bit(t0, bytes, in, out, lag);
  // Output queueing and shared memory: cell k crosses in the cycle it is eligible,
  // e_k = ceil((t0 + ser_in(its last byte)) / P) + pre, is at the egress after_ cycles later, and
  // the wire needs it ser_out(k cells) after the frame's first bit; the frame starts at the latest
  // of those bounds, and not before the last cell crossed.
  const uint64_t cells = std::max<uint64_t>(1, (bytes + cell_ - 1) / cell_);
  const int64_t e_last = ceil_div(t + in.serialization(Bytes(bytes)).as_fs(), p) + pre;
  if (whole_) return Time::fs((e_last + after_) * p);
  int64_t best = std::max(
      (e_last + after_) * p - out.serialization(Bytes((cells - 1) * cell_)).as_fs(), e_last * p);
  if (cells == 1) return Time::fs(best);
  const uint64_t fi = in.fs_per_byte();
  if (fi != 0 && fi == out.fs_per_byte()) {
    // One whole rate in and out (the usual case): the bound of full cell k is
    // a0 + gap_k + (pre + after_) P, with a0 = t0 + ser(one cell) and gap_k the rounding up of
    // a0 + k ser(cell) to its clock edge, so only the largest gap matters; each gap follows
    // from the previous by a subtraction (no division per cell).
    const auto s = static_cast<int64_t>(cell_ * fi);
    const int64_t a0 = t + s, step = s % p;
    int64_t gap = (p - a0 % p) % p, most = gap;
    for (uint64_t k = 1; k + 1 < cells; ++k) {
      gap -= step;
      if (gap < 0) gap += p;
      most = std::max(most, gap);
    }
    return Time::fs(std::max(best, a0 + most + (pre + after_) * p));
  }
  for (uint64_t k = 0; k + 1 < cells; ++k) {
    const int64_t e = ceil_div(t + in.serialization(Bytes((k + 1) * cell_)).as_fs(), p) + pre;
    best = std::max(best, (e + after_) * p - out.serialization(Bytes(k * cell_)).as_fs());
  }
  return Time::fs(best);
}

}  // namespace fabricsim::sw
