#include "models/workload/nic_driver.h"

#include <algorithm>
#include <utility>

namespace fabricsim::workload {

NicDriver::NicDriver(ExecGraph graph, std::vector<int> host_of, nic::Verb verb, int tc,
                     std::vector<double> slowdown, std::unique_ptr<ScaleUpNetwork> up)
    : graph_(std::move(graph)),
      host_of_(std::move(host_of)),
      verb_(verb),
      tc_(tc),
      engine_(graph_, *this, std::move(slowdown)),
      up_(std::move(up)) {
  for (const Node& n : graph_.nodes())
    nic_sends_ += n.kind == NodeKind::kSend && !scale_up_pair(n.rank, n.peer);
}

void NicDriver::completed(uint64_t id, Time t) {
  if (--nic_in_flight_ == 0) nic_active_ += t - nic_since_;
  engine_.on_sent(static_cast<uint32_t>(id), t);
}

Time NicDriver::run(Time now) {
  // The scale-up deliveries due, each finishing its send and its receive, until the engine posts
  // nothing more that is due now (a scale-up message takes its latency at least).
  for (;;) {
    engine_.run(now);
    if (!up_) return engine_.next_event();
    uint32_t token = 0;
    Time t;
    bool any = false;
    while (up_->pop_delivered(now, token, t)) {
      engine_.on_delivered(token, t);
      engine_.on_sent(token, t);
      any = true;
    }
    if (!any) return std::min(engine_.next_event(), up_->next_event());
  }
}

void NicDriver::start(nic::NicArray& nics, Time now) {
  nics_ = &nics;
  engine_.start(now);
}

void NicDriver::post(uint32_t token, int src, int dst, uint64_t bytes, int channel, Time now) {
  if (scale_up_pair(src, dst)) {
    up_->post(token, host_of_[src], host_of_[dst], bytes, now, channel, graph_.node(token).tag);
    return;
  }
  if (nic_in_flight_++ == 0) nic_since_ = now;
  ++nic_posted_;
  nic_bytes_ += bytes;
  nic::Message m;
  m.id = token;
  m.start = now;
  m.src = host_of_[src];
  m.dst = host_of_[dst];
  m.bytes = bytes;
  m.verb = verb_;
  m.qp = channel;
  m.tc = tc_;
  nics_->post(m, now);
}

}  // namespace fabricsim::workload
