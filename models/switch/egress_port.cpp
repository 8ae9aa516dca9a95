#include "models/switch/egress_port.h"

namespace fabricsim::sw {

EgressArbiter::EgressArbiter(EgressPolicy policy, int classes, const std::vector<double>& weights,
                             uint64_t quantum_bytes)
    : policy_(policy), classes_(classes), quantum_(classes), deficit_(classes, 0) {
  for (int tc = 0; tc < classes; ++tc)
    quantum_[tc] = quantum_bytes * (weights.empty() ? 1 : static_cast<uint64_t>(weights[tc]));
}

void EgressArbiter::reset() {
  for (auto& d : deficit_) d = 0;
  current_ = 0;
  credited_ = false;
}

int EgressArbiter::pick(const uint64_t* head_bytes) {
  bool any = false;
  for (int tc = 0; tc < classes_; ++tc) any |= head_bytes[tc] != 0;
  if (!any) return -1;
  if (policy_ == EgressPolicy::kStrictPriority) {
    for (int tc = classes_ - 1; tc >= 0; --tc)
      if (head_bytes[tc]) return tc;
  }
  // DWRR: stay on a class while its deficit covers the head packet; an empty class forfeits its
  // deficit. Terminates because every visit to a non-empty class adds a positive quantum.
  for (;;) {
    const int tc = current_;
    if (head_bytes[tc] == 0) {
      deficit_[tc] = 0;
    } else {
      if (!credited_) {
        deficit_[tc] += quantum_[tc];
        credited_ = true;
      }
      if (head_bytes[tc] <= deficit_[tc]) {
        deficit_[tc] -= head_bytes[tc];
        return tc;
      }
    }
    current_ = current_ + 1 == classes_ ? 0 : current_ + 1;
    credited_ = false;
  }
}

}  // namespace fabricsim::sw
