// Pairwise all-to-all (MPI's pairwise exchange): n - 1 steps; in step k rank i sends S/n to
// i + k and receives from i - k, and starts step k + 1 when both are done. Ideal network:
// (n - 1) (alpha + S/(n B)). Bus factor (n - 1)/n.
#include "models/workload/collective.h"

namespace fabricsim::workload {

FABRICSIM_REGISTER_COLLECTIVE(alltoall_pairwise) {
  CollectiveEntry e;
  e.description = "pairwise all-to-all: n-1 steps, step k to rank i+k and from i-k";
  e.bus_factor = [](int n) { return (n - 1.0) / n; };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    std::vector<std::vector<uint32_t>> prev(start.begin(), start.end());
    for (int k = 1; k < n; ++k) {
      g.set_step(k - 1);
      std::vector<std::vector<uint32_t>> next(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        const int to = (i + k) % n, from = (i - k + n) % n;
        for (int x = 0; x < c.channels; ++x) {
          const uint64_t out = piece(piece(c.bytes, n, to), c.channels, x);
          const uint64_t in = piece(piece(c.bytes, n, i), c.channels, x);
          if (out == 0 || in == 0)
            throw std::invalid_argument("too few bytes for the ranks and channels");
          next[i].push_back(g.add_send(c.ranks[i], c.ranks[to], out, x, prev[i]));
          next[i].push_back(g.add_recv(c.ranks[i], c.ranks[from], in, x, prev[i]));
        }
      }
      prev = std::move(next);
    }
    for (int i = 0; i < n; ++i) done[i] = prev[i];
  };
  registry.add("alltoall_pairwise", std::move(e));
}

}  // namespace fabricsim::workload
