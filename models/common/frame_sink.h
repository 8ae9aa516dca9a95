// Where a device's transmitter hands its frames: the plain C++ side of PacketPortIf.
//
// Model classes that drive a wire without the SystemC kernel (a host's MAC, tests) talk to a
// FrameSink; PacketPortIf (packet_port.h) is a FrameSink that SystemC ports bind to, so a bound
// port's interface is passed to the model as is (one virtual call a frame, as before).
#pragma once

#include "models/common/packet.h"
#include "models/common/telemetry.h"

namespace fabricsim {

class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // Packet p on the wire from first_bit to last_bit, handed over no later than its first bit.
  virtual void transfer(const Packet& p, Time first_bit, Time last_bit) = 0;
  // The same for a frame that carries an INT header (models/common/telemetry.h), its stack
  // valid for the call only. What does not read telemetry takes the packet alone (the header's
  // bytes stay in its size).
  virtual void transfer_int(const Packet& p, const IntStack& tel, Time first_bit, Time last_bit) {
    (void)tel;
    transfer(p, first_bit, last_bit);
  }
  // A link-level control frame (PFC pause, IB flow-control packet) for the receiving MAC, with
  // the same timing contract.
  virtual void control(const ControlFrame& f, Time first_bit, Time last_bit) = 0;
};

}  // namespace fabricsim
