// Link-level retry (LLR, UEC 1.0's link layer; the same idea as PCIe's data-link replay): the
// link, not the transport, recovers a frame an uncorrectable FEC codeword destroyed.
//
// Hardware: the sender keeps every frame in a replay buffer until the receiver acknowledges it;
// a receiver that gets a frame with a bad FCS sends a NACK (after `response`), and the sender
// replays from that frame on, in order (go-back-N on one hop). What it costs, per replay: the
// frame arrives response + the NACK's wire time + two link latencies + its own wire time late,
// and every frame behind it waits its turn behind the replay; the replay buffer must hold what
// the link carries over a frame's round trip (its wire time, two latencies, the response and the
// ACK's wire time). Parameters that matter: the link latency (cable, FEC, PCS, modules), the
// response and the frame loss rate. A replayed frame can be lost again (and is replayed again).
// Plain C++ (the LinkModule applies it to each direction); allocation-free once its ring has
// grown to the frames in flight.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::link {

struct LlrConfig : config::Configurable {
  bool enabled = false;
  Time response;          // the receiver's NACK / ACK turnaround
  int64_t ack_bytes = 0;  // an LLR control frame (ACK or NACK) on the wire

  void visit(config::Visitor& v) override;
  void validate(const config::Checker&) const override {}
};

class LinkRetry {
 public:
  LinkRetry(const LlrConfig& cfg, Time latency, Time ack_wire);

  // A frame whose last bit left the sender at `last_out`, taking `wire` of the wire, reaches the
  // receiver's MAC `latency` later; `lost` is the FEC's verdict on it, `lost_again()` the verdict
  // on each replay. Returns the time its delivery is put back by (0 for a frame neither replayed
  // nor behind a replay).
  template <class LostAgain>
  Time deliver(Time last_out, Time wire, uint32_t bytes, bool lost, LostAgain lost_again) {
    Time extra;
    if (lost) {
      do {
        extra += replay_;
        extra += wire;
        ++replays_;
      } while (lost_again());
      delay_min_ = replayed_frames_++ ? std::min(delay_min_, extra) : extra;
      delay_max_ = std::max(delay_max_, extra);
    }
    Time last_in = last_out + latency_ + extra;
    // In order: after the frame before it (a replay holds up the frames behind it).
    if (last_in < held_until_ + wire) {
      const Time wait = held_until_ + wire - last_in;
      extra += wait;
      last_in += wait;
      if (!lost) ++behind_;
    }
    held_until_ = last_in;
    hold(last_out - wire, last_in + hold_after_, bytes);
    return extra;
  }

  uint64_t replays() const { return replays_; }  // replays sent (a frame may need several)
  uint64_t replayed_frames() const { return replayed_frames_; }
  uint64_t frames_behind() const { return behind_; }  // frames held up behind a replay
  Time delay_min() const { return delay_min_; }       // of the replayed frames
  Time delay_max() const { return delay_max_; }
  uint64_t buffer_peak_bytes() const { return peak_; }  // the replay buffer's fullest
  // What the replay buffer must hold at line rate `bytes_per_s` for frames of `wire` time.
  Time hold_time(Time wire) const { return wire + latency_ + hold_after_; }

 private:
  void hold(Time start, Time release, uint32_t bytes);

  Time latency_, replay_, hold_after_;
  Time held_until_;
  struct Held {
    Time release;
    uint32_t bytes;
  };
  std::vector<Held> ring_;  // frames in the replay buffer, oldest first (release in order)
  size_t head_ = 0, count_ = 0;
  uint64_t held_ = 0, peak_ = 0;
  uint64_t replays_ = 0, replayed_frames_ = 0, behind_ = 0;
  Time delay_min_, delay_max_;
};

}  // namespace fabricsim::link
