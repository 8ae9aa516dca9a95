#include "models/link/link.h"

#include <algorithm>

namespace fabricsim::link {

LinkChannel::LinkChannel(const LinkConfig& cfg, Rng rng, int64_t queue_frames)
    : healthy_(cfg.phy.wire_format()),
      degraded_(cfg.phy.degraded_wire_format()),
      failure_(cfg.phy.lane_failure()),
      fail_time_(cfg.phy.fail_time),
      fec_(cfg.phy.fec_type(), cfg.phy.pre_fec_ber, healthy_.codeword_mac_bytes()),
      rng_(rng),
      latency_(cfg.one_way_latency()) {
  // Room for the transmit queue plus every frame that can be on the cable or in the PHY pipeline:
  // at most one per minimum wire time (at the healthy, faster rate) over the latency.
  const Time min_wire = healthy_.wire_time(healthy_.framing() == Framing::kEthernet ? 64 : 1);
  const int64_t on_wire = latency_ / min_wire + 2;
  ring_.resize(static_cast<size_t>(queue_frames + on_wire));
}

Time LinkChannel::send(const LinkFrame& f, Time now) {
  if (count_ == ring_.size()) {
    ++queue_full_;
    return Time::max();
  }
  Slot& s = ring_[(head_ + count_) % ring_.size()];
  ++count_;
  s.d = transmit(f, now);
  return s.d.arrival;
}

Delivery LinkChannel::pass(const LinkFrame& f, Time now) {
  const Delivery d = transmit(f, now);
  ++(d.lost ? lost_ : received_)[static_cast<int>(f.kind)];
  return d;
}

Delivery LinkChannel::transmit(const LinkFrame& f, Time now) {
  const Time start = std::max(now, free_at_);
  const WireFormat& w = format_at(start);
  // Idle time on the wire advances the FEC codeword stream too (idle blocks are encoded).
  if (start > free_at_) {
    const unsigned __int128 gap = static_cast<unsigned __int128>((start - free_at_).as_fs()) *
                                  w.mac_rate().as_bps() / 8000000000000000ull;
    stream_pos_ += static_cast<uint64_t>(gap);
  }
  const uint32_t wire = w.wire_bytes(f.bytes);
  const uint32_t exposed = w.exposed_bytes(f.bytes);
  const Time occupied = w.mac_rate().serialization(Bytes(wire));
  const Time last_bit = start + w.mac_rate().serialization(Bytes(exposed));

  Delivery d;
  d.frame = f;
  d.first_bit = start + latency_;
  d.arrival = last_bit + latency_;
  d.lost = fec_.sample_loss(stream_pos_, exposed, rng_);

  stream_pos_ += wire;
  free_at_ = start + occupied;
  ++sent_[static_cast<int>(f.kind)];
  return d;
}

Time LinkChannel::next_arrival() const {
  return count_ ? ring_[head_].d.arrival : Time::max();
}

bool LinkChannel::receive(Time now, Delivery& out) {
  if (!count_ || ring_[head_].d.arrival > now) return false;
  out = ring_[head_].d;
  head_ = (head_ + 1) % ring_.size();
  --count_;
  ++(out.lost ? lost_ : received_)[static_cast<int>(out.frame.kind)];
  return true;
}

Link::Link(const LinkConfig& cfg, uint64_t seed, const std::string& name, int64_t queue_frames)
    : cfg_(cfg),
      ab_(cfg, Rng::derive(seed, name + ".dir0"), queue_frames),
      ba_(cfg, Rng::derive(seed, name + ".dir1"), queue_frames) {}

LinkFrame Link::ib_fc_frame(uint8_t vl, uint16_t fctbs, uint16_t fccl) const {
  LinkFrame f;
  f.kind = FrameKind::kIbFlowControl;
  f.lane = vl;
  // The configured size includes the 2 delimiter bytes that IB framing adds on the wire.
  f.bytes = static_cast<uint32_t>(cfg_.ib_fc_packet_bytes) - WireFormat::kIbDelimiters;
  f.ctrl[0] = fctbs;
  f.ctrl[1] = fccl;
  return f;
}

LinkFrame Link::pause_frame(uint8_t enable_mask, const uint16_t quanta[8]) {
  LinkFrame f;
  f.kind = FrameKind::kPause;
  f.bytes = 64;  // 802.1Qbb PFC frame: a minimum-size MAC control frame [R]
  f.lane = enable_mask;
  for (int i = 0; i < 8; ++i) f.ctrl[i] = quanta[i];
  return f;
}

}  // namespace fabricsim::link
