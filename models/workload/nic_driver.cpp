#include "models/workload/nic_driver.h"

#include <utility>

namespace fabricsim::workload {

NicDriver::NicDriver(ExecGraph graph, std::vector<int> host_of, nic::Verb verb, int tc,
                     std::vector<double> slowdown)
    : graph_(std::move(graph)),
      host_of_(std::move(host_of)),
      verb_(verb),
      tc_(tc),
      engine_(graph_, *this, std::move(slowdown)) {
  for (const Node& n : graph_.nodes()) sends_ += n.kind == NodeKind::kSend;
}

void NicDriver::start(nic::NicArray& nics, Time now) {
  nics_ = &nics;
  engine_.start(now);
}

void NicDriver::post(uint32_t token, int src, int dst, uint64_t bytes, int channel, Time now) {
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
