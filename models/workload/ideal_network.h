// An ideal network for the workload layer: what the collectives' closed forms assume.
//
// Not hardware: the analytical reference (and a fast backend) that the collective algorithms are
// checked against before they run over NICs and switches. Each rank has one link of rate B each
// way; a message of b bytes leaves its sender once the sender's link is free (messages queue in
// posting order) and takes b/B on it; the receiver's link takes the messages in the order they
// finished leaving, each b/B after the previous one at the earliest (so an incast is limited by
// the receiver's rate; two messages that overlapped on the way count one after the other); it
// is delivered `alpha` after its last byte is in (the per-message latency of the closed forms:
// NIC, wire and switch). Its send completes at its delivery (the acknowledgement costs nothing).
// No congestion inside the network: a full-bisection fabric.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "models/common/units.h"
#include "models/workload/workload_engine.h"

namespace fabricsim::workload {

class IdealNetwork : public MessageNetwork {
 public:
  IdealNetwork(int ranks, BitRate rate, Time alpha);
  void post(uint32_t token, int src, int dst, uint64_t bytes, int channel, Time now) override;
  // Runs `e` (started here at `start`) until nothing is left to do; returns the last event's time.
  Time run(WorkloadEngine& e, Time start = Time());

 private:
  // A message's last byte leaving its sender (arrive) or its delivery.
  struct Event {
    Time t;
    uint64_t seq;
    uint32_t token;
    int32_t dst;  // arrive: the receiver; delivery: -1
    Time ser;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  BitRate rate_;
  Time alpha_;
  std::vector<Time> out_free_, in_free_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> q_;
  uint64_t seq_ = 0;
};

}  // namespace fabricsim::workload
