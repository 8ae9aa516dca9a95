#include "models/link/link_module.h"

#include <stdexcept>
#include <string>

namespace fabricsim::link {

LinkModule::LinkModule(sc_core::sc_module_name name, const LinkConfig& cfg, uint64_t seed,
                       Time window_start, Time window_end)
    : sc_core::sc_module(name),
      from_a("from_a"),
      from_b("from_b"),
      to_a("to_a"),
      to_b("to_b"),
      latency_(cfg.latency()) {
  const std::string base = this->basename();  // streams independent of where the fabric sits
  for (Direction* d : {&ab_, &ba_}) {
    d->latency = latency_;
    d->win_start = window_start;
    d->win_end = window_end;
    // Only a link that can lose frames needs the channel's codeword-stream bookkeeping (at a BER
    // of 0 the loss model never draws, so leaving it out changes nothing).
    if (!cfg.ideal() && cfg.phy.pre_fec_ber > 0) {
      const std::string dir = base + (d == &ab_ ? ".a_to_b" : ".b_to_a");
      d->channel = std::make_unique<LinkChannel>(cfg, Rng::derive(seed, dir));
      if (cfg.llr.enabled) {
        const Time ack_wire =
            d->channel->wire_time(static_cast<uint32_t>(cfg.llr.ack_bytes), Time());
        d->retry = std::make_unique<LinkRetry>(cfg.llr, latency_, ack_wire);
        d->replay_rng = Rng::derive(seed, dir + ".llr");
        d->n.llr = d->retry.get();
      }
    }
  }
  from_a.bind(ab_);
  from_b.bind(ba_);
}

void LinkModule::end_of_elaboration() {
  ab_.far = to_b.operator->();
  ba_.far = to_a.operator->();
}

bool LinkModule::Direction::lost(const LinkFrame& f, Time first_bit) {
  if (!channel) return false;
  // The channel serialises the frame from the start of its preamble (at the rate in force then:
  // a lane failure slows it), as the device did, and gives its loss verdict at once.
  const WireFormat& w = channel->format_at(first_bit);
  return channel->pass(f, first_bit - w.mac_rate().serialization(Bytes(w.overhead().lead))).lost;
}

Time LinkModule::Direction::replayed(const LinkFrame& f, Time first_bit, Time last_bit,
                                     bool is_lost) {
  // The replay's verdict at the frame's place in the codeword stream, as the channel draws it.
  const WireFormat& w = channel->format_at(first_bit);
  const uint32_t exposed = w.exposed_bytes(f.bytes);
  const uint64_t at = channel->stream_position();
  return retry->deliver(last_bit, w.wire_time(f.bytes), f.bytes, is_lost,
                        [&] { return channel->fec().sample_loss(at, exposed, replay_rng); });
}

bool LinkModule::Direction::arrives(const Packet& p, Time first_bit, Time last_bit, Time& delay) {
  ++n.frames;
  LinkFrame f;
  f.tag = p.id;
  f.bytes = static_cast<uint32_t>(p.size.count());
  f.lane = static_cast<uint8_t>(p.tc);
  const bool is_lost = lost(f, first_bit);
  if (retry) {
    delay = replayed(f, first_bit, last_bit, is_lost);
    return true;
  }
  if (!is_lost) return true;
  ++n.lost;
  n.lost_bytes += p.size.count();
  if (p.inject_time >= win_start && p.inject_time < win_end) ++n.win_lost;
  return false;
}

void LinkModule::Direction::transfer(const Packet& p, Time first_bit, Time last_bit) {
  Time d;
  if (arrives(p, first_bit, last_bit, d))
    far->transfer(p, first_bit + latency + d, last_bit + latency + d);
}

void LinkModule::Direction::transfer_int(const Packet& p, const IntStack& tel, Time first_bit,
                                         Time last_bit) {
  Time d;
  if (arrives(p, first_bit, last_bit, d))
    far->transfer_int(p, tel, first_bit + latency + d, last_bit + latency + d);
}

void LinkModule::Direction::control(const ControlFrame& c, Time first_bit, Time last_bit) {
  ++n.control;
  LinkFrame f;
  f.bytes = c.bytes;
  f.kind = c.kind == ControlFrame::Kind::kPause ? FrameKind::kPause : FrameKind::kIbFlowControl;
  const bool is_lost = lost(f, first_bit);
  if (retry) {
    const Time d = replayed(f, first_bit, last_bit, is_lost);
    far->control(c, first_bit + latency + d, last_bit + latency + d);
    return;
  }
  if (is_lost) {
    ++n.control_lost;
    return;
  }
  far->control(c, first_bit + latency, last_bit + latency);
}

void LinkModule::Counters::register_stats(stats::Registry& r, const std::string& prefix) const {
  r.counter(prefix + ".frames", &frames);
  r.counter(prefix + ".control_frames", &control);
  r.counter(prefix + ".lost", &lost);
  r.counter(prefix + ".lost_bytes", &lost_bytes);
  r.counter(prefix + ".lost_measured", &win_lost);
  r.counter(prefix + ".control_lost", &control_lost);
  if (!llr) return;
  const LinkRetry* l = llr;
  r.counter_fn(prefix + ".llr_replays", [l] { return l->replays(); });
  r.counter_fn(prefix + ".llr_replayed_frames", [l] { return l->replayed_frames(); });
  r.counter_fn(prefix + ".llr_frames_behind", [l] { return l->frames_behind(); });
  r.value_fn(prefix + ".llr_delay_min_ns", [l] { return l->delay_min().as_ns(); });
  r.value_fn(prefix + ".llr_delay_max_ns", [l] { return l->delay_max().as_ns(); });
  r.counter_fn(prefix + ".llr_buffer_peak_bytes", [l] { return l->buffer_peak_bytes(); });
}

void LinkModule::register_stats(stats::Registry& r, const std::string& prefix) const {
  // A link that cannot lose frames (BER 0, or ideal) hands on every frame: its counts are its
  // sender's (a switch port's tx_packets, a host's frames = the switch port's rx_packets), so it
  // registers nothing and a lossless fabric's counters stay half the size.
  if (!ab_.channel && !ba_.channel) return;
  ab_.n.register_stats(r, prefix + ".a_to_b");
  ba_.n.register_stats(r, prefix + ".b_to_a");
}

UnconnectedPort::UnconnectedPort(sc_core::sc_module_name name)
    : sc_core::sc_module(name), in("in") {
  in.bind(*this);
}

void UnconnectedPort::control(const ControlFrame&, Time, Time) {
  // Flow-control frames to a port with no peer go nowhere.
}

void UnconnectedPort::transfer(const Packet& p, Time, Time) {
  throw std::logic_error(std::string(name()) + ": packet " + std::to_string(p.id) +
                         " sent to a port with nothing attached");
}

}  // namespace fabricsim::link
