#include "models/workload/ideal_network.h"

#include <algorithm>

namespace fabricsim::workload {

IdealNetwork::IdealNetwork(int ranks, BitRate rate, Time alpha)
    : rate_(rate),
      alpha_(alpha),
      out_free_(static_cast<size_t>(ranks)),
      in_free_(static_cast<size_t>(ranks)) {}

void IdealNetwork::post(uint32_t token, int src, int dst, uint64_t bytes, int, Time now) {
  const Time ser = rate_.serialization(Bytes(bytes));
  const Time sent = std::max(now, out_free_[src]) + ser;
  out_free_[src] = sent;
  q_.push({sent, seq_++, token, dst, ser});
}

Time IdealNetwork::run(WorkloadEngine& e, Time start) {
  Time now = start;
  e.start(now);
  for (;;) {
    const Time t = std::min(e.next_event(), q_.empty() ? Time::max() : q_.top().t);
    if (t == Time::max()) return now;
    now = t;
    while (!q_.empty() && q_.top().t <= now) {
      const Event d = q_.top();
      q_.pop();
      if (d.dst >= 0) {  // into the receiver's link, in the order the messages left
        const Time in = std::max(now, in_free_[d.dst] + d.ser);
        in_free_[d.dst] = in;
        q_.push({in + alpha_, seq_++, d.token, -1, Time()});
        continue;
      }
      e.on_delivered(d.token, now);
      e.on_sent(d.token, now);
    }
    e.run(now);
  }
}

}  // namespace fabricsim::workload
