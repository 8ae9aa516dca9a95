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
      d->channel = std::make_unique<LinkChannel>(
          cfg, Rng::derive(seed, base + (d == &ab_ ? ".a_to_b" : ".b_to_a")));
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

bool LinkModule::Direction::arrives(const Packet& p, Time first_bit, Time) {
  ++n.frames;
  LinkFrame f;
  f.tag = p.id;
  f.bytes = static_cast<uint32_t>(p.size.count());
  f.lane = static_cast<uint8_t>(p.tc);
  if (!lost(f, first_bit)) return true;
  ++n.lost;
  n.lost_bytes += p.size.count();
  if (p.inject_time >= win_start && p.inject_time < win_end) ++n.win_lost;
  return false;
}

void LinkModule::Direction::transfer(const Packet& p, Time first_bit, Time last_bit) {
  if (arrives(p, first_bit, last_bit)) far->transfer(p, first_bit + latency, last_bit + latency);
}

void LinkModule::Direction::transfer_int(const Packet& p, const IntStack& tel, Time first_bit,
                                         Time last_bit) {
  if (arrives(p, first_bit, last_bit))
    far->transfer_int(p, tel, first_bit + latency, last_bit + latency);
}

void LinkModule::Direction::control(const ControlFrame& c, Time first_bit, Time last_bit) {
  ++n.control;
  LinkFrame f;
  f.bytes = c.bytes;
  f.kind = c.kind == ControlFrame::Kind::kPause ? FrameKind::kPause : FrameKind::kIbFlowControl;
  if (lost(f, first_bit)) {
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
