// A point-to-point link between two ports (switch-switch or switch-endpoint): two independent
// directions, each a MAC transmitter serialising frames back to back at the MAC rate, a cable and
// the receiving PHY.
//
// Hardware and timing: a frame handed to a direction starts when the wire is free
// (start = max(now, free_at)), occupies wire_time(bytes) of the wire (frame, preamble/SFD, IFG or
// IB delimiters at the MAC rate after transcoding + FEC; see wire_format.h) and its last bit
// reaches the far MAC one_way_latency = cable propagation + FEC + PCS latency after it left. Frames
// are sent in hand-over order: the caller arbitrates (e.g. PFC/FC frames first) by handing frames
// over only when the wire is free (free_at() <= now); frames handed over earlier wait in the
// transmit queue. Control frames cost wire time like data: a PFC frame is a 64 B minimum frame, an
// IB flow-control packet LinkConfig::ib_fc_packet_bytes (8 B). Bit errors (pre-FEC BER) make frames
// lost per FecErrorModel, at their position in the FEC codeword stream; lost frames are still
// delivered to the caller, flagged, so that receivers can count them. A lane failure switches the
// direction to the degraded rate for frames starting at or after the failure time (retraining
// downtime and frames in flight at the failure are not modelled).
// Event-driven and allocation-free per frame: a fixed ring of frames per direction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/rng.h"
#include "models/common/units.h"
#include "models/link/fec_error_model.h"
#include "models/link/phy_config.h"
#include "models/link/wire_format.h"

namespace fabricsim::link {

enum class FrameKind : uint8_t { kData = 0, kIbFlowControl = 1, kPause = 2 };
constexpr int kFrameKinds = 3;

// What travels on the wire. `tag` is the caller's handle (packet id or pool index).
struct LinkFrame {
  uint64_t tag = 0;
  uint32_t bytes = 0;  // Ethernet: DA..FCS; IB: LRH..VCRC (data) or the FC packet (control)
  FrameKind kind = FrameKind::kData;
  uint8_t lane = 0;       // VL (IB) or priority (Ethernet); PFC: the class-enable vector
  uint16_t ctrl[8] = {};  // IB FC: [0] FCTBS, [1] FCCL; PFC: pause quanta per priority
};

struct Delivery {
  LinkFrame frame;
  Time first_bit;     // first bit at the receiving MAC (cut-through can start here)
  Time arrival;       // last bit at the receiving MAC
  bool lost = false;  // failed the FCS (uncorrectable FEC codeword): the receiver drops it
};

// One direction of a link.
class LinkChannel {
 public:
  // `queue_frames`: the transmit queue's capacity for send() (pass() does not queue).
  LinkChannel(const LinkConfig& cfg, Rng rng, int64_t queue_frames = 64);

  // Hands a frame to the transmitter at `now` (non-decreasing across calls). Returns its arrival
  // time (last bit) at the far end, or Time::max() if the queue is full (frame not taken).
  Time send(const LinkFrame& f, Time now);
  // Pops the next frame whose last bit has arrived by `now` (in order). False if none.
  bool receive(Time now, Delivery& out);
  // send() and receive() in one, for a caller that hands the frame to the far end at once (with
  // its loss verdict) instead of waiting for its arrival: no queueing, counted as received or
  // lost now.
  Delivery pass(const LinkFrame& f, Time now);

  Time free_at() const { return free_at_; }    // when the transmitter can start another frame
  Time next_arrival() const;                   // Time::max() if nothing is in flight
  size_t in_flight() const { return count_; }  // handed over but not yet received
  size_t capacity() const { return ring_.size(); }
  // Wire format in force for a frame starting at `t` (degraded after a lane failure).
  const WireFormat& format_at(Time t) const {
    return (failure_ && t >= fail_time_) ? degraded_ : healthy_;
  }
  Time wire_time(uint32_t bytes, Time t) const { return format_at(t).wire_time(bytes); }
  const FecErrorModel& fec() const { return fec_; }
  Time latency() const { return latency_; }
  // MAC-stream bytes (frames, framing and idles) encoded up to free_at(): fixes FEC alignment.
  uint64_t stream_position() const { return stream_pos_; }

  // Counters (by FrameKind).
  uint64_t frames_sent(FrameKind k) const { return sent_[static_cast<int>(k)]; }
  uint64_t frames_lost(FrameKind k) const { return lost_[static_cast<int>(k)]; }
  uint64_t frames_received(FrameKind k) const { return received_[static_cast<int>(k)]; }
  uint64_t queue_full() const { return queue_full_; }  // send() refusals

 private:
  // Puts the frame on the wire at max(now, free_at()): timing, FEC verdict, counters.
  Delivery transmit(const LinkFrame& f, Time now);
  struct Slot {
    Delivery d;
  };
  WireFormat healthy_, degraded_;
  bool failure_ = false;
  Time fail_time_;
  FecErrorModel fec_;
  Rng rng_;
  Time latency_;
  std::vector<Slot> ring_;
  size_t head_ = 0, count_ = 0;
  Time free_at_;
  uint64_t stream_pos_ = 0;  // MAC-stream byte position at free_at_ (for codeword alignment)
  std::array<uint64_t, kFrameKinds> sent_{}, lost_{}, received_{};
  uint64_t queue_full_ = 0;
};

// Both directions: end 0 -> end 1 is dir(0), end 1 -> end 0 is dir(1).
class Link {
 public:
  // `name` and `seed` derive the two directions' random streams (Rng::derive).
  Link(const LinkConfig& cfg, uint64_t seed, const std::string& name, int64_t queue_frames = 64);
  LinkChannel& from(int end) { return end == 0 ? ab_ : ba_; }
  const LinkChannel& from(int end) const { return end == 0 ? ab_ : ba_; }
  const LinkConfig& config() const { return cfg_; }
  // Ready-made control frames with their wire size.
  LinkFrame ib_fc_frame(uint8_t vl, uint16_t fctbs, uint16_t fccl) const;
  static LinkFrame pause_frame(uint8_t enable_mask, const uint16_t quanta[8]);

 private:
  LinkConfig cfg_;
  LinkChannel ab_, ba_;
};

}  // namespace fabricsim::link
