// All-to-allv (uneven sizes, as MoE token dispatch and combine are): the direct all-to-all's
// schedule with each pair's bytes from the call's n x n matrix (a zero sends nothing). S, for the
// bandwidths, is the largest row (the busiest sender's buffer). Bus factor (n - 1)/n.
#include <fmt/format.h>

#include "models/workload/collective.h"

namespace fabricsim::workload {

FABRICSIM_REGISTER_COLLECTIVE(alltoallv_direct) {
  CollectiveEntry e;
  e.description = "all-to-allv: the direct schedule with per-pair sizes (MoE dispatch/combine)";
  e.bus_factor = [](int n) { return (n - 1.0) / n; };
  e.refuse = [](const CollectiveCall& c) {
    const size_t n = c.ranks.size();
    return c.sizes.size() == n * n ? std::string()
                                   : fmt::format("{} sizes for {} ranks (it needs n x n = {})",
                                                 c.sizes.size(), n, n * n);
  };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    std::vector<uint64_t> sizes = c.sizes;
    const size_t n = c.ranks.size();
    for (size_t i = 0; i < n; ++i) sizes[i * n + i] = 0;  // a rank's own block stays
    all_to_all(g, c, sizes, start, done);
  };
  registry.add("alltoallv_direct", std::move(e));
}

}  // namespace fabricsim::workload
