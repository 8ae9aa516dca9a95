// Ring reduce-scatter: n - 1 steps in which rank i sends block (i - k - 1) mod n of S/n bytes to
// rank i + 1, which adds its own; rank i ends with block i reduced. Ideal network: (n - 1) alpha
// + (n - 1)/n S/B. Bus factor (n - 1)/n.
#include "models/workload/collective.h"

namespace fabricsim::workload {

FABRICSIM_REGISTER_COLLECTIVE(reducescatter_ring) {
  CollectiveEntry e;
  e.description = "ring reduce-scatter: n-1 steps of S/n around the ring";
  e.bus_factor = [](int n) { return (n - 1.0) / n; };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    ring_pass(
        g, c, n - 1,
        [&](int k, int i) {
          return piece(c.bytes, n, static_cast<uint64_t>(((i - k - 1) % n + n) % n));
        },
        start, done);
  };
  registry.add("reducescatter_ring", std::move(e));
}

}  // namespace fabricsim::workload
