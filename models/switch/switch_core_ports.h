// What the switch core shows its ports: the sink of departing frames, the MAC-side configuration
// (framing, flow control, breakout rates) and the per-port counters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/packet.h"
#include "models/common/stats.h"
#include "models/common/telemetry.h"
#include "models/link/flow_control.h"
#include "models/link/mac.h"

namespace fabricsim::sw {

// Receives packets as their last bit leaves an egress port.
class DepartureSink {
 public:
  virtual ~DepartureSink() = default;
  virtual void on_departure(int port, const Packet& p, Time first_bit, Time last_bit) = 0;
  // A packet with an INT header, with its stack (this switch's hop on top when it stamps).
  virtual void on_departure_int(int port, const Packet& p, const IntStack& tel, Time first_bit,
                                Time last_bit) {
    (void)tel;
    on_departure(port, p, first_bit, last_bit);
  }
  // A link-level control frame (PFC pause, IB flow-control packet) leaving `port`.
  virtual void on_control(int port, const ControlFrame& f, Time first_bit, Time last_bit) = 0;
};

// The MAC side of every port: framing overhead and link-level flow control.
struct MacConfig {
  FrameOverhead overhead;
  const link::FlowControlConfig* flow_control = nullptr;  // null: none
  Bytes headroom_per_pg;                // PFC headroom per (port, priority), sized for the links
  uint32_t fc_frame_bytes = 6;          // IB flow-control packet without framing
  link::CreditUnitFactory credit_unit;  // IB credit counters (null: the model)
  // Breakout: the MAC rate of each port (empty: every port at switch.port_speed).
  std::vector<BitRate> port_rates;
  // Frames starting at or after `rates_change_at` use `port_rates_after` (a lane failure; empty:
  // no change).
  std::vector<BitRate> port_rates_after;
  Time rates_change_at = Time::max();
};

// Per-port counters. `win_*` count only inside the measurement window.
struct PortCounters {
  uint64_t rx_packets = 0, rx_bytes = 0;
  uint64_t tx_packets = 0, tx_bytes = 0;
  uint64_t drops = 0, drop_bytes = 0;  // at this ingress port
  uint64_t win_drops = 0;
  stats::WindowBytes win_rx_bytes, win_tx_bytes;  // on the wire inside the window
  // Cut-through underruns at this egress: a frame already on the wire whose next cell was not
  // there in time (the crossbar served other inputs first), and how long the wire waited for it.
  // A real MAC cannot pause mid-frame; the count says how often the configuration relies on it.
  uint64_t underruns = 0;
  Time underrun_time;
  // The whole-run counters as `<prefix>.<counter>` (rx_packets, rx_bytes, tx_packets, tx_bytes,
  // drops, drop_bytes, underruns, underrun_ns): a counter added above is registered here, next to
  // it, and appears in summary.json's `counters`. The window figures stay in ports.csv.
  void register_stats(stats::Registry& r, const std::string& prefix) const;
};

}  // namespace fabricsim::sw
