// The SystemC port interface that every device and endpoint shares.
//
// A call carries one packet across a port boundary together with the times of its first and last
// bit on the wire there. The caller makes the call no later than the packet's first bit (devices
// may call earlier, at the cycle in which they commit to the transfer). Endpoints (traffic sources
// and sinks, later the RDMA NIC) and devices (the switch) bind sc_port<PacketPortIf> to
// sc_export<PacketPortIf>; the link layer slots in between with the same interface.
#pragma once

#include <vector>

#include <systemc>

#include "models/common/frame_sink.h"
#include "models/common/packet.h"

namespace fabricsim {

class PacketPortIf : public virtual sc_core::sc_interface, public FrameSink {};

// The interfaces bound to a vector of ports, resolved once after elaboration, so that a transfer
// is one virtual call instead of a walk through sc_vector and sc_port on every packet.
inline std::vector<PacketPortIf*> bound_interfaces(
    sc_core::sc_vector<sc_core::sc_port<PacketPortIf>>& ports) {
  std::vector<PacketPortIf*> ifs;
  ifs.reserve(ports.size());
  for (auto& port : ports) ifs.push_back(port.operator->());
  return ifs;
}

inline sc_core::sc_time to_sc(Time t) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(t.as_fs()));
}
// Requires the SystemC time resolution to be 1 fs (set by the simulation before elaboration).
inline Time from_sc(const sc_core::sc_time& t) {
  return Time::fs(static_cast<int64_t>(t.value()));
}
// The simulation time, as seen by module `m`: sc_time_stamp() reads the same value but is a call
// into the SystemC library, and the switch's ports ask on every packet.
inline Time sim_now(const sc_core::sc_object& m) {
  return from_sc(m.simcontext()->time_stamp());
}

}  // namespace fabricsim
