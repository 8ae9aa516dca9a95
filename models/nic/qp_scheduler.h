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
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "models/common/fifo.h"
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
  std::optional<uint32_t> pick(Time now, Time& next);

  uint64_t packets(uint32_t qpn) const { return qps_[qpn].sent; }
  uint64_t bytes(uint32_t qpn) const { return qps_[qpn].sent_bytes; }
  size_t queued(uint32_t qpn) const { return qps_[qpn].q.size(); }

 private:
  struct Qp {
    Fifo<uint32_t> q;  // frame bytes of its ready packets
    uint32_t weight = 1;
    BitRate rate;
    Time allowed;         // the pacer lets its next packet go from then
    int64_t deficit = 0;  // weighted: bytes it may still send this turn
    bool active = false;  // in active_
    uint64_t sent = 0, sent_bytes = 0;
  };
  void charge(Qp& q, uint32_t bytes, Time now);

  bool weighted_;
  int64_t quantum_;
  std::vector<Qp> qps_;
  std::deque<uint32_t> active_;  // QPs with packets, in turn order (front: the current turn)
};

}  // namespace fabricsim::nic
