// SystemC wrapper of a point-to-point link between two device ports (a switch and a host, or two
// switches), in both directions.
//
// Hardware: the cable and the PHYs at both ends (models/link/link.h). A frame handed to the link
// at its egress times (first and last bit out of the sending MAC) reaches the far end
// link.latency() later (propagation + FEC + PCS), unless an uncorrectable FEC codeword destroys
// it: then it is counted as lost and not delivered. The sending device serialises its frames
// itself with the same framing overhead; the link's LinkChannel (when frames can be lost: a bit
// error rate above 0) sees the frames in the same order and decides losses at their place in the
// FEC codeword stream. Delivery is immediate, ahead of the first bit (the PacketPortIf contract
// allows it), so the link needs no process of its own. With `link.model: ideal` frames pass
// straight through.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

#include "models/common/packet_port.h"
#include "models/common/stats.h"
#include "models/link/link.h"
#include "models/link/llr.h"
#include "models/link/phy_config.h"

namespace fabricsim::link {

class LinkModule : public sc_core::sc_module {
 public:
  // Device A's egress binds its sc_port to from_a; to_b binds to device B's ingress export; and
  // the same the other way.
  sc_core::sc_export<PacketPortIf> from_a, from_b;
  sc_core::sc_port<PacketPortIf> to_a, to_b;

  // `seed` and the module name derive the loss streams. Packets injected inside [window_start,
  // window_end) are counted separately when lost.
  LinkModule(sc_core::sc_module_name name, const LinkConfig& cfg, uint64_t seed, Time window_start,
             Time window_end);

  struct Counters {
    uint64_t frames = 0;  // handed to this direction
    uint64_t lost = 0;    // destroyed by bit errors
    uint64_t lost_bytes = 0;
    uint64_t win_lost = 0;  // of those, packets injected inside the window
    uint64_t control = 0;   // control frames handed to this direction
    uint64_t control_lost = 0;
    const LinkRetry* llr = nullptr;  // link.llr: its replays, delays and buffer
    // As `<prefix>.frames`, `.control_frames`, `.lost`, `.lost_bytes`, `.lost_measured`
    // (win_lost), `.control_lost`; whole run.
    void register_stats(stats::Registry& r, const std::string& prefix) const;
  };
  const Counters& a_to_b() const { return ab_.n; }
  const Counters& b_to_a() const { return ba_.n; }
  // Both directions' counters as `<prefix>.a_to_b.*` and `<prefix>.b_to_a.*` (the fabric uses
  // the link's name, e.g. link_host3_leaf0_p2: device A is the host, or the first switch), when
  // the link can lose frames (link.phy.pre_fec_ber > 0); nothing otherwise.
  void register_stats(stats::Registry& r, const std::string& prefix) const;

 private:
  struct Direction : PacketPortIf {
    PacketPortIf* far = nullptr;
    std::unique_ptr<LinkChannel> channel;  // null when no frame can be lost (ideal, or BER 0)
    std::unique_ptr<LinkRetry> retry;      // link.llr on (and a channel)
    Rng replay_rng;                        // the replays' verdicts (apart: the stream stays)
    Time latency, win_start, win_end;
    Counters n;
    void transfer(const Packet& p, Time first_bit, Time last_bit) override;
    void transfer_int(const Packet& p, const IntStack& tel, Time first_bit, Time last_bit) override;
    void control(const ControlFrame& f, Time first_bit, Time last_bit) override;
    // Counts the frame; false when bit errors destroy it. With LLR the frame always arrives,
    // `delay` later (a replay, or behind one).
    bool arrives(const Packet& p, Time first_bit, Time last_bit, Time& delay);
    bool lost(const LinkFrame& f, Time first_bit);
    Time replayed(const LinkFrame& f, Time first_bit, Time last_bit, bool lost);
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
  void control(const ControlFrame& f, Time first_bit, Time last_bit) override;
};

}  // namespace fabricsim::link
