// RED-style ECN marking at an egress queue, DCQCN convention [V: DCQCN, Zhu et al. SIGCOMM 2015,
// as summarised in hardware-facts.md]: with the instantaneous queue depth q (bytes),
//   p(q) = 0                                 q <  Kmin
//        = Pmax x (q - Kmin) / (Kmax - Kmin)   Kmin <= q <= Kmax
//        = 1                                 q >  Kmax
// Switch ASICs mark on the instantaneous depth (no RED averaging). Marking happens when a packet is
// enqueued (depth before it joins) or dequeued (depth it leaves behind), selectable. Non-ECT
// packets are never marked (the caller drops or forwards them by its own rules; lossy classes still
// tail-drop in the buffer). Counters per queue. One Bernoulli draw per eligible packet from the
// caller's Rng; no draw where p is 0 or 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/rng.h"
#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::link {

struct EcnConfig : config::Configurable {
  bool enabled = true;
  Bytes kmin, kmax;
  double pmax = 0;
  std::string mark_on;  // enqueue | dequeue

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
};

class EcnMarker {
 public:
  struct Curve {
    int64_t kmin = 0, kmax = 0;  // bytes
    double pmax = 0;
    bool enabled = true;
  };
  // One curve for all `queues` queues (per-queue changes through set_curve()).
  EcnMarker(const EcnConfig& cfg, int queues);
  void set_curve(int queue, const Curve& c);

  bool mark_on_enqueue() const { return on_enqueue_; }
  double probability(int queue, int64_t depth_bytes) const;
  // Decides whether to mark an ECT packet at queue depth `depth_bytes`; counts it.
  bool mark(int queue, int64_t depth_bytes, Rng& rng);

  uint64_t packets(int queue) const { return q_[queue].seen; }
  uint64_t marked(int queue) const { return q_[queue].marked; }

 private:
  // A queue's curve and counters side by side: a mark touches one record, not three arrays
  // (hundreds of chips' queues do not stay in cache between two packets of one queue).
  struct Queue {
    Curve curve;
    uint64_t seen = 0, marked = 0;
  };
  bool on_enqueue_;
  std::vector<Queue> q_;
};

}  // namespace fabricsim::link
