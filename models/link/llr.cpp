#include "models/link/llr.h"

namespace fabricsim::link {

void LlrConfig::visit(config::Visitor& v) {
  v.param("enabled", enabled, false,
          "Link-level retry (UEC 1.0): the link replays a frame an uncorrectable FEC codeword "
          "destroyed, in order, before the transport sees a loss (docs/link-layer.md).");
  v.param("response", response, Time::ns(100), Time(), Time::us(10),
          "The receiver's turnaround from a bad frame's last bit to its NACK (and from a good "
          "one's to its ACK): not public, sweep it [S].");
  v.param("ack_bytes", ack_bytes, 64, 8, 1518, "B",
          "Size of an LLR ACK or NACK frame: a minimum Ethernet frame [S].");
}

LinkRetry::LinkRetry(const LlrConfig& cfg, Time latency, Time ack_wire)
    : latency_(latency),
      // NACK: the response, its own wire time and the latency back; then the frame again.
      replay_(cfg.response + ack_wire + latency + latency),
      hold_after_(cfg.response + ack_wire + latency),
      ring_(16) {}

void LinkRetry::hold(Time start, Time release, uint32_t bytes) {
  while (count_ && ring_[head_].release <= start) {  // acknowledged before this frame started
    held_ -= ring_[head_].bytes;
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  if (count_ == ring_.size()) {  // grows to the frames in flight, then stays
    std::vector<Held> bigger(ring_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
    ring_.swap(bigger);
    head_ = 0;
  }
  ring_[(head_ + count_) % ring_.size()] = {release, bytes};
  ++count_;
  held_ += bytes;
  peak_ = std::max(peak_, held_);
}

}  // namespace fabricsim::link
