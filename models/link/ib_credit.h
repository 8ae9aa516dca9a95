// InfiniBand link-level credit flow control (IBTA Vol 1 sec. 7.9.4 [R]) and VL arbitration
// (sec. 7.6.9 [R]) for one port pair: a sender that transmits only with credits, a receiver with
// per-VL buffers that returns credits in flow-control (FC) packets, the SL-to-VL table and the
// high/low-priority weighted VL arbitration with a high-priority limit.
//
// Protocol (credits in 64-byte blocks, 12-bit counters, see credit_unit.h):
//   sender    FCTBS(vl) += blocks per packet sent (CreditUnitModel: only with enough credit)
//   receiver  ABR(vl)   += blocks per packet received; ABR := FCTBS when an FC packet arrives
//             (recovers blocks of packets lost on the wire)
//             FCCL(vl)   = ABR + min(free blocks, 2048) mod 4096  (2048: the most that may be
//             advertised ahead of FCTBS)
//   FC packets (one per VL, carrying the local transmitter's FCTBS and the local receiver's FCCL)
//   are sent at least every fc_period (IBTA: at least every 65,536 symbol times [R]; the Mellanox
//   OMNeT++ model uses 4.096 us [V]) and, optionally, as soon as `fc_release_blocks` blocks have
//   been freed since the last one. They cost wire time on the link (8 B each, see link.h).
// Guarantee: a packet is sent only if blocks <= FCCL - FCTBS, so receive buffers cannot overflow.
// Conservation (per VL, all terms >= 0, with C the buffer capacity in blocks):
//   available at sender + in flight + lost-not-yet-resynced + occupied at receiver
//     + freed-not-yet-advertised + withheld by the 2048 cap = C.
// VL15 (management) is not credit-controlled and is left to the caller (sent first).
// UEC CBFC (protocol uec_cbfc) is this machinery on Ethernet links with credits of `unit` bytes
// (a power of two) and minimum-size Ethernet frames as credit updates: UEC 1.0's own numbers were
// not at hand (docs/link-layer.md, docs/hardware-facts.md [S]).
#pragma once

#include <functional>
#include <memory>

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/span_log.h"
#include "models/common/units.h"
#include "models/config/config.h"
#include "models/link/credit_unit.h"

namespace fabricsim::link {

constexpr uint32_t kIbBlockBytes = 64;
inline uint32_t ib_blocks(uint32_t bytes) {
  return (bytes + kIbBlockBytes - 1) / kIbBlockBytes;
}

struct IbCreditConfig : config::Configurable {
  std::string impl;        // model | rtl
  std::string protocol;    // ib | uec_cbfc
  Bytes unit = Bytes(64);  // bytes a credit stands for: 64 (IB); a power of two (UEC CBFC)
  int64_t data_vls = 0;
  Bytes buffer_per_vl;
  Time fc_period;
  int64_t fc_release_blocks = 0;  // 0 = periodic updates only
  std::vector<double> sl2vl;      // 16 entries or empty (SL i -> VL i mod data_vls)
  std::vector<double> high_vls, high_weights, low_vls, low_weights;
  int64_t high_limit = 0;  // in 4096-byte units; 255 = unlimited

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
  int64_t buffer_blocks() const {
    return static_cast<int64_t>(buffer_per_vl.count() / unit.count());
  }
  bool cbfc() const { return protocol == "uec_cbfc"; }
  // log2(unit): credits per packet are a shift away (unit is a power of two, validate()).
  int unit_shift() const { return __builtin_ctzll(unit.count()); }
};

// Credits a packet of `bytes` takes at 2^shift bytes a credit.
inline uint32_t credit_blocks(uint32_t bytes, int shift) {
  return (bytes + (1u << shift) - 1) >> shift;
}

class SlToVl {
 public:
  explicit SlToVl(const IbCreditConfig& cfg);
  int vl(int sl) const { return map_[sl & 15]; }

 private:
  uint8_t map_[16];
};

// IBTA VL arbitration: a high- and a low-priority table of (VL, weight) entries, each served
// weighted round robin (an entry's VL sends while it has packets and weight left, weight counted in
// 64-byte units and allowed to go negative on the last packet); the high table has precedence, but
// after high_limit x 4096 bytes from it (0: one packet; 255: no limit) a ready low-priority packet
// is sent next.
class VlArbiter {
 public:
  static constexpr int kMaxEntries = 64;
  struct Entry {
    uint8_t vl;
    uint8_t weight;  // 64-byte units; 0 = entry skipped
  };
  explicit VlArbiter(const IbCreditConfig& cfg);
  VlArbiter(const std::vector<Entry>& high, const std::vector<Entry>& low, int high_limit);
  // The VL to send next among `ready` (bit v set: VL v's head packet can be sent now);
  // head_bytes[v] is that packet's size. Advances the arbiter state. -1 if nothing is ready.
  int pick(uint32_t ready, const uint32_t* head_bytes);

 private:
  struct Table {
    Entry e[kMaxEntries];
    int n = 0;
    int idx = 0;
    int32_t left = 0;  // weight left in the current entry (64 B units)
    uint32_t vls = 0;  // VLs with a non-zero weight in the table
  };
  static bool serve(Table& t, uint32_t ready, const uint32_t* head_bytes, int& vl);
  Table high_, low_;
  int limit_;
  uint64_t high_bytes_ = 0;  // sent from the high table since the last low-priority packet
};

class IbCreditSender {
 public:
  // initial_credits_per_vl: the credit limit advertised at link-up (min(buffer blocks, 2048)).
  // `make` builds the credit counters (null: the model).
  IbCreditSender(const IbCreditConfig& cfg, uint16_t initial_credits_per_vl,
                 const CreditUnitFactory& make = nullptr);

  // Arbitration at a frame boundary. head_bytes[vl] (vl < data_vls) is the size of the packet at
  // the head of VL vl (0 = none). Returns the VL to send now (it has the credits) or -1. Also
  // starts/stops per-VL credit-stall timing.
  int select(Time now, const uint32_t* head_bytes);
  // Sends a packet on `vl` (FCTBS advances). False (and no change) if credits are insufficient,
  // which cannot happen right after select() returned `vl` for this packet.
  bool send(int vl, uint32_t bytes, Time now);
  // FC packet from the peer's receiver. False on a protocol error (FCCL ignored, counted).
  bool on_fc_packet(int vl, uint16_t fccl, Time now);

  int vls() const { return vls_; }
  uint16_t fctbs(int vl) const { return credits_->fctbs(vl); }
  uint16_t fccl(int vl) const { return credits_->fccl(vl); }
  uint16_t available(int vl) const { return credits_->available(vl); }
  // Time VL vl spent with a head packet waiting for credit (up to `now`).
  Time stall_time(int vl, Time now) const;
  uint64_t packets_sent(int vl) const { return sent_[vl]; }
  uint64_t fc_errors() const { return fc_errors_; }
  // Credit stalls go to `sink` (at `port`, class = VL) once they end; flush_spans() reports those
  // still going on at `now`.
  void set_span_sink(const stats::SpanSink& sink, int port) {
    spans_ = sink;
    port_ = port;
  }
  void flush_spans(Time now) const;

 private:
  void stall_stop(int vl, Time now);
  std::unique_ptr<CreditUnitIf> credits_;
  int vls_;
  VlArbiter arb_;
  Time stalled_since_[CreditUnitModel::kMaxVls];
  uint16_t stalled_blocks_[CreditUnitModel::kMaxVls] = {};  // 0 = not stalled
  Time stall_total_[CreditUnitModel::kMaxVls];
  uint64_t sent_[CreditUnitModel::kMaxVls] = {};
  uint64_t fc_errors_ = 0;
  int shift_;  // log2 of the credit unit
  stats::SpanSink spans_;
  int port_ = 0;
};

class IbCreditReceiver {
 public:
  explicit IbCreditReceiver(const IbCreditConfig& cfg);

  // A good data packet arrived on `vl`: occupies ceil(bytes/unit) blocks. False if it does not fit
  // (an overflow drop: impossible under credit flow control; counted).
  bool on_packet(int vl, uint32_t bytes, Time now);
  // A packet's blocks leave the buffer (forwarded).
  void release(int vl, uint32_t bytes, Time now);
  // FC packet from the peer's transmitter: ABR := FCTBS.
  void on_fc_packet(int vl, uint16_t fctbs);
  // The credit limit to advertise now.
  uint16_t fccl(int vl) const;

  // FC scheduling: VLs whose FC packet is due at `now` (bitmask); fc_sent() after sending one.
  uint32_t fc_due(Time now) const;
  void fc_sent(int vl, Time now);
  // Earliest time an FC packet becomes due through the timer (release-triggered ones are due at
  // once and show in fc_due()).
  Time next_fc_timer() const;

  int vls() const { return vls_; }
  int64_t capacity_blocks() const { return cap_; }
  int64_t used_blocks(int vl) const { return used_[vl]; }
  int64_t peak_blocks(int vl) const { return peak_[vl]; }
  uint64_t overflow_drops() const { return overflow_; }
  uint64_t fc_packets_sent() const { return fc_sent_; }

 private:
  int vls_;
  int shift_;  // log2 of the credit unit
  int64_t cap_;
  Time period_;
  int64_t release_blocks_;
  uint16_t abr_[CreditUnitModel::kMaxVls] = {};
  int64_t used_[CreditUnitModel::kMaxVls] = {};
  int64_t peak_[CreditUnitModel::kMaxVls] = {};
  int64_t freed_since_fc_[CreditUnitModel::kMaxVls] = {};
  Time last_fc_[CreditUnitModel::kMaxVls];
  uint64_t overflow_ = 0;
  uint64_t fc_sent_ = 0;
};

// Credit conservation for one direction (see the header comment). in_flight_blocks[vl]: blocks of
// data packets on the wire (sent, not yet at the receiver); lost_blocks[vl]: blocks of packets lost
// on the wire since the last FCTBS the receiver applied. Appends one message per violated VL.
void check_credit_conservation(const IbCreditSender& tx, const IbCreditReceiver& rx,
                               const int64_t* in_flight_blocks, const int64_t* lost_blocks,
                               std::vector<std::string>& violations);

}  // namespace fabricsim::link
