// The NIC's QP scheduler: which queue pair sends the next packet.
//
// Hardware: the transmit arbiter of an RDMA NIC, between the QPs that have packets ready (their
// WQEs fetched and segmented) and the MAC. Policies: round_robin (one packet per QP per turn) or
// weighted (deficit round robin on bytes, Shreedhar & Varghese 1996: each turn adds weight x
// quantum bytes of credit, so backlogged QPs share the wire in proportion to their weights
// whatever their packet sizes). A QP may have a rate limit (a pacer: after a packet of B bytes it
// waits B x 8 / rate; congestion control sets it, e.g. DCQCN's current rate); a QP waiting for its
// pacer is passed over, so the arbiter stays work-conserving. Plain C++, driven with explicit
// times; one pick per packet, O(active QPs) in the worst case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/common/fifo.h"
#include "models/common/prefetch.h"
#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::nic {

struct QpSchedulerConfig : config::Configurable {
  std::string policy;  // round_robin | weighted
  Bytes quantum;       // weighted: credit per turn per unit of weight

  void visit(config::Visitor& v) override;
};

class QpScheduler {
 public:
  explicit QpScheduler(const QpSchedulerConfig& cfg);

  // Registers QP `qpn` (dense from 0) with its weight (weighted policy; >= 1).
  void add_qp(uint32_t qpn, uint32_t weight = 1);
  // The QP's pacer rate (BitRate() = unlimited).
  void set_rate(uint32_t qpn, BitRate rate);
  // A packet of `frame_bytes` is ready on QP `qpn`, behind those before it.
  void enqueue(uint32_t qpn, uint32_t frame_bytes);

  // The QP whose head packet goes at `now`, if any may; it is dequeued and charged (pacer,
  // credit). Otherwise none, and `next` says when a QP with packets will be allowed
  // (Time::max(): no QP has packets).
  std::optional<uint32_t> pick(Time now, Time& next) {
    // (Inline around pick_id: an optional returned from a call went through the stack, written
    // narrow and read back wide, a store-forwarding stall on every packet.)
    const uint32_t id = pick_id(now, next);
    if (id == kNone) return std::nullopt;
    return id;
  }

  // The QP whose turn is next (UINT32_MAX: none), and a hint to the CPU for its record: a
  // NIC's next pick comes a frame later, its record by then cold unless asked for.
  uint32_t next_turn() const { return active_.empty() ? kNone : active_.front().id; }
  void prefetch(uint32_t qpn) const { prefetch_object(qps_[qpn]); }

  uint64_t packets(uint32_t qpn) const { return qps_[qpn].sent; }
  uint64_t bytes(uint32_t qpn) const { return qps_[qpn].sent_bytes; }
  size_t queued(uint32_t qpn) const { return qps_[qpn].n; }

 private:
  // A QP's state, its hot fields in one cache line. The NIC queues one packet a QP at a time
  // (its turn token), so the head is kept here, in the record pick() reads anyway, not in a
  // queue buffer of its own (a second cache miss per packet).
  struct alignas(64) Qp {
    uint32_t head = 0;  // frame bytes of its first ready packet (n > 0)
    uint32_t n = 0;     // packets ready (head and rest); a QP is in active_ while n > 0
    uint32_t weight = 1;
    // The last pacer gap computed: for frames of memo_bytes (0: none) at `rate`. A paced rate
    // that is not a whole number of fs per byte costs a 128-bit divide, and a QP sends runs of
    // equal frames at one rate.
    uint32_t memo_bytes = 0;
    int64_t deficit = 0;  // weighted: bytes it may still send this turn
    BitRate rate;
    Time memo_gap;
    Time allowed;  // its pacer: its next packet may go from then (also in its Turn while active)
    uint64_t sent = 0, sent_bytes = 0;
    Fifo<uint32_t> rest;  // frame bytes of its ready packets behind the head
  };
  // A QP's place in the turn order, with its pacer time: a pick passes over the paced QPs
  // having read only the ring, in sequence, not each one's record (thousands of QPs, each
  // record a cache miss). Only charge() changes a QP's pacer time, as its turn is taken.
  struct Turn {
    Time allowed;
    uint32_t id;
  };
  void charge(uint32_t id, uint32_t bytes, Time now);
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t pick_id(Time now, Time& next);  // pick(): the QP, or kNone

  bool weighted_;
  int64_t quantum_;
  std::vector<Qp> qps_;
  Fifo<Turn> active_;  // QPs with packets, in turn order (front: the current turn)
  // A pick that finds every active QP paced changes nothing (its pass turns the ring once round)
  // and says when the soonest is allowed: until then, or until a packet is queued, every pick
  // would find the same, so it answers without the pass (a NIC of many paced QPs asks often).
  Time idle_until_;  // Time(): not known
};

}  // namespace fabricsim::nic
