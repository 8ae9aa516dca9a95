// Egress transmit arbitration across traffic classes of one port.
//
// Hardware: the egress scheduler in front of a port's MAC, choosing which class queue sends the
// next packet. strict_priority: the highest class with a packet; dwrr: deficit weighted round robin
// (Shreedhar & Varghese 1996) with a per-class quantum of weight x quantum bytes, so that classes
// share the port in proportion to their weights in bytes, whatever their packet sizes.
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/switch_config.h"

namespace fabricsim::sw {

class EgressArbiter {
 public:
  EgressArbiter(EgressPolicy policy, int classes, const std::vector<double>& weights,
                uint64_t quantum_bytes);
  // head_bytes[tc]: size of class tc's head packet, 0 if the class has nothing to send.
  // Returns the class to send from, or -1 if all are empty.
  int pick(const uint64_t* head_bytes);
  void reset();

 private:
  EgressPolicy policy_;
  int classes_;
  std::vector<uint64_t> quantum_;
  std::vector<uint64_t> deficit_;
  int current_ = 0;
  bool credited_ = false;  // quantum already added for the current visit of `current_`
};

}  // namespace fabricsim::sw
