#include "models/common/split_balancer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim {

SplitBalancer::SplitBalancer(std::vector<int> counts) : counts_(std::move(counts)) {
  for (size_t s = 1; s < counts_.size(); ++s)
    if (counts_[s] < 1) throw std::invalid_argument("split balancer: a worker without a switch");
}

bool SplitBalancer::look(double wall_s, const std::vector<double>& waits) {
  if (waits.size() != counts_.size())
    throw std::invalid_argument("split balancer: one wait a side");
  if (!(wall_s > 0)) return false;
  bool changed = false;
  for (size_t s = 0; s + 1 < counts_.size(); ++s) {
    const double gap = waits[s] - waits[s + 1];
    if (std::fabs(gap) <= kDeadband * wall_s) continue;
    // The worker's busy time per switch: side s + 1 is always a worker (side 0's busy time
    // holds the hosts too).
    const double busy = std::max(wall_s - waits[s + 1], 1e-3 * wall_s);
    const double per_switch = busy / counts_[s + 1];
    // Side s waited more: it is the faster, and takes side s + 1's first switches; else side s
    // gives its last ones.
    const size_t giver = gap > 0 ? s + 1 : s;
    const int keep = giver == 0 ? 0 : 1;
    const int most = std::max(1, counts_[giver] / 8);
    const auto want = static_cast<int>(std::fabs(gap) / (4 * per_switch));
    const int m = std::min({std::max(1, want), most, counts_[giver] - keep});
    if (m <= 0) continue;
    counts_[giver] -= m;
    counts_[giver == s ? s + 1 : s] += m;
    moves_ += static_cast<uint64_t>(m);
    changed = true;
  }
  return changed;
}

}  // namespace fabricsim
