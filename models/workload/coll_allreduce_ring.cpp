// Ring all-reduce (NCCL's ring algorithm; Patarasuk and Yuan 2009): a reduce-scatter pass of
// n - 1 steps, in which rank i sends block (i - k) mod n of S/n bytes on to rank i + 1 and adds
// what it receives, then an all-gather pass of n - 1 steps passing the reduced blocks around.
// On an ideal network (per message latency alpha, link rate B): 2 (n - 1) alpha +
// 2 (n - 1)/n S/B. Bus factor 2 (n - 1)/n.
#include "models/workload/collective.h"

namespace fabricsim::workload {

FABRICSIM_REGISTER_COLLECTIVE(allreduce_ring) {
  CollectiveEntry e;
  e.description = "ring all-reduce: reduce-scatter then all-gather around the ring, 2(n-1) steps";
  e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    // Step k (0 .. 2n - 3): rank i sends block (i - k) mod n, in both passes.
    ring_pass(
        g, c, 2 * (n - 1),
        [&](int k, int i) {
          return piece(c.bytes, n, static_cast<uint64_t>(((i - k) % n + n) % n));
        },
        start, done);
  };
  registry.add("allreduce_ring", std::move(e));
}

}  // namespace fabricsim::workload
