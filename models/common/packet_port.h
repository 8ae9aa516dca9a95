// The SystemC port interface that every device and endpoint shares.
//
// A call carries one packet across a port boundary together with the times of its first and last
// bit on the wire there. The caller makes the call no later than the packet's first bit (devices
// may call earlier, at the cycle in which they commit to the transfer). Endpoints (traffic sources
// and sinks, later the RDMA NIC) and devices (the switch) bind sc_port<PacketPortIf> to
// sc_export<PacketPortIf>; the link layer slots in between with the same interface.
#pragma once

#include <systemc>

#include "models/common/packet.h"

namespace fabricsim {

class PacketPortIf : public virtual sc_core::sc_interface {
 public:
  virtual void transfer(const Packet& p, Time first_bit, Time last_bit) = 0;
};

inline sc_core::sc_time to_sc(Time t) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(t.as_fs()));
}
// Requires the SystemC time resolution to be 1 fs (set by the simulation before elaboration).
inline Time from_sc(const sc_core::sc_time& t) {
  return Time::fs(static_cast<int64_t>(t.value()));
}

}  // namespace fabricsim
