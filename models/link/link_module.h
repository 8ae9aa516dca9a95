// SystemC wrapper of a point-to-point link between two device ports.
//
// Hardware: the cable (and, with the link-layer work, the PCS/FEC at both ends) between an egress
// port of one device and an ingress port of another, in both directions. What matters here is the
// one-way latency added to every frame; a frame handed to the link at its egress times is passed
// on at once with both times shifted by that latency (the PacketPortIf contract lets a caller
// deliver ahead of the first bit), so the link needs no process of its own.
#pragma once

#include <cstdint>

#include <systemc>

#include "models/common/packet_port.h"

namespace fabricsim::link {

class LinkModule : public sc_core::sc_module {
 public:
  // Device A's egress binds its sc_port to from_a; to_b binds to device B's ingress export; and
  // the same the other way.
  sc_core::sc_export<PacketPortIf> from_a, from_b;
  sc_core::sc_port<PacketPortIf> to_a, to_b;

  LinkModule(sc_core::sc_module_name name, Time latency);

  Time latency() const { return latency_; }
  uint64_t frames_a_to_b() const { return ab_.frames; }
  uint64_t frames_b_to_a() const { return ba_.frames; }

 private:
  struct Direction : PacketPortIf {
    PacketPortIf* far = nullptr;
    Time latency;
    uint64_t frames = 0;
    void transfer(const Packet& p, Time first_bit, Time last_bit) override {
      ++frames;
      far->transfer(p, first_bit + latency, last_bit + latency);
    }
  };
  void end_of_elaboration() override;

  Time latency_;
  Direction ab_, ba_;
};

// Terminates a device port that nothing is attached to (SystemC requires every port bound). No
// route leads there, so a packet arriving is a model error.
class UnconnectedPort : public sc_core::sc_module, public PacketPortIf {
 public:
  sc_core::sc_export<PacketPortIf> in;
  explicit UnconnectedPort(sc_core::sc_module_name name);
  void transfer(const Packet& p, Time first_bit, Time last_bit) override;
};

}  // namespace fabricsim::link
