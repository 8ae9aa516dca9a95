// The MAC of one port, as every device has it: a switch port and a host's NIC port alike.
//
// Hardware: the MAC/PCS transmit path and the receive path's timing. On the wire every frame is
// padded to the minimum frame, preceded by its preamble/SFD and followed by the inter-frame gap
// (FrameOverhead, from the link's framing: models/link/wire_format.h), at the port's line rate;
// a lane failure lowers that rate from one instant on (frames starting after it are slower).
// The transmitter puts frames on the wire back to back: a frame's first bit follows its preamble
// and the previous frame's gap. At a frame boundary it sends a due link-level control frame first
// (PFC PAUSE, an IB flow-control packet), then picks the next data frame's class among those flow
// control lets go (mac_select_class). Devices keep their queues; the MAC keeps the wire.
//
// Parameters that matter: the port's rate (and after a lane failure), the framing overhead.
// Every step is inline: it is on every frame's path.
#pragma once

#include <algorithm>
#include <cstdint>

#include "models/common/packet.h"
#include "models/common/units.h"
#include "models/link/flow_control.h"

namespace fabricsim::link {

class Mac {
 public:
  Mac() = default;
  // Frames starting at or after `change_at` go at `rate_after` (a lane failure); Time::max():
  // never.
  Mac(BitRate rate, BitRate rate_after, Time change_at, const FrameOverhead& overhead)
      : before_(rate, overhead),
        change_at_(change_at),
        overhead_(overhead),
        after_(rate_after, overhead) {}

  // The timing in force for a frame (or the part of one) at `t`.
  const MacTiming& timing(Time t) const { return t >= change_at_ ? after_ : before_; }
  BitRate rate(Time t) const { return timing(t).rate; }
  const FrameOverhead& overhead() const { return overhead_; }
  // Whether the rate changes during the run (a lane failure).
  bool rate_changes() const { return change_at_ != Time::max(); }
  // The slowest rate the port ever runs at.
  BitRate slowest_rate() const {
    return before_.rate.as_bps() < after_.rate.as_bps() ? before_.rate : after_.rate;
  }

  // --- transmit ---
  // The earliest first bit of the next frame: the previous one's last bit plus its gap and the
  // next preamble (Time() before the first frame).
  Time wire_free() const { return wire_free_; }
  // The first bit of a frame the MAC has ready at `ready`: after its preamble, and not before the
  // previous frame's gap has passed.
  Time first_bit(Time ready) const { return std::max(wire_free_, ready + timing(ready).lead); }
  // The last bit of a frame of `bytes` (padded to the minimum) whose first bit is `first`.
  Time last_bit(Time first, uint64_t bytes) const {
    return first + timing(first).rate.serialization(Bytes(overhead_.frame_bytes(bytes)));
  }
  // The frame whose last bit is `last` is done: the next may start after the gap.
  void end_frame(Time last) { wire_free_ = last + timing(last).gap; }
  // A frame of `bytes` ready at `now` goes at once if the wire is idle by the end of its
  // preamble: then its first and last bit are set, the wire is taken, and it returns true. The
  // one test and three additions of every frame that finds its wire free (a port at a fixed rate).
  bool start_if_idle(Time now, uint64_t bytes, Time& first, Time& last) {
    const MacTiming& m = change_at_ == Time::max() ? before_ : timing(now);
    first = now + m.lead;
    if (wire_free_ > first) return false;
    if (change_at_ != Time::max()) {  // the rate may differ by the last bit
      last = last_bit(first, bytes);
      end_frame(last);
      return true;
    }
    last = first + m.rate.serialization(Bytes(overhead_.frame_bytes(bytes)));
    wire_free_ = last + m.gap;
    return true;
  }
  // While a frame (or its gap) is on the wire, the next preamble cannot start before this.
  Time next_start(Time now) const { return wire_free_ - timing(now).lead; }
  bool mid_frame(Time now) const { return next_start(now) > now; }

 private:
  // What a frame on a port at a fixed rate reads first, together; after_ only after a failure.
  MacTiming before_;
  Time wire_free_;
  Time change_at_ = Time::max();
  FrameOverhead overhead_;
  MacTiming after_;
};

// The class a MAC sends next at a frame boundary, among those with a frame waiting, under the
// port's link-level flow control: with IB credits the VL arbitration of `fc` chooses among the
// VLs whose head frame has its credit; otherwise the device's own policy `pick(blocked)` chooses
// among the classes not paused (PFC: a paused priority counts as empty). `heads()` gives the
// size of each class's head frame (0 when empty), called only by those that weigh them: the
// credit arbiter here, and `pick` if it does (strict priority needs only which classes wait,
// and reading the head frames is a cache miss per look). Returns the class, or -1 if none may go.
template <class Heads, class Pick>
int mac_select_class(FlowControl* fc, int port, Time now, int classes, Heads&& heads, Pick&& pick) {
  if (fc && fc->credit()) return fc->select_class(port, now, heads(), classes);
  return pick(fc ? fc->paused(port, now) : uint32_t{0});
}

}  // namespace fabricsim::link
