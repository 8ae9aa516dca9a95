// Destination lookup: endpoint id -> egress port.
//
// Hardware: the L2/L3 forwarding lookup at the end of the ingress pipeline (its latency is part of
// switch.pipeline.ingress_cycles). A single-switch run attaches endpoint i to port i; multi-device
// topologies fill the table from the topology description.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim::sw {

class ForwardingTable {
 public:
  static constexpr int kNoRoute = -1;

  static ForwardingTable identity(int ports) {
    ForwardingTable t;
    t.port_.resize(static_cast<size_t>(ports));
    for (int i = 0; i < ports; ++i) t.port_[i] = i;
    return t;
  }
  int lookup(int dst) const {
    return dst >= 0 && dst < static_cast<int>(port_.size()) ? port_[dst] : kNoRoute;
  }

 private:
  std::vector<int> port_;
};

}  // namespace fabricsim::sw
