// Direct all-to-all (NCCL's: every send posted at once): rank i sends block j of its S-byte
// buffer (S/n bytes) to every rank j != i, to i + 1 first, then i + 2, ... so that at each moment
// the ranks' first messages go to different ranks. Ideal network: alpha + (n - 1)/n S/B. Bus
// factor (n - 1)/n.
#include "models/workload/collective.h"

namespace fabricsim::workload {

FABRICSIM_REGISTER_COLLECTIVE(alltoall_direct) {
  CollectiveEntry e;
  e.description = "direct all-to-all: every rank posts S/n to every other at once";
  e.bus_factor = [](int n) { return (n - 1.0) / n; };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    std::vector<uint64_t> sizes(static_cast<size_t>(n) * n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) sizes[i * n + j] = i == j ? 0 : piece(c.bytes, n, j);
    all_to_all(g, c, sizes, start, done);
  };
  registry.add("alltoall_direct", std::move(e));
}

}  // namespace fabricsim::workload
