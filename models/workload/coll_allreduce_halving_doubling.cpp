// Halving-doubling all-reduce (Rabenseifner's algorithm; Thakur, Rabenseifner and Gropp 2005),
// n a power of two: a reduce-scatter by recursive halving (step k: rank i and i XOR n/2^(k+1)
// each send the half of their current segment the other keeps, and add what they receive), then
// an all-gather by recursive doubling (step k: i and i XOR 2^k swap their segments). Ideal
// network: 2 log2(n) alpha + 2 (n - 1)/n S/B. Bus factor 2 (n - 1)/n.
#include <cstdlib>

#include <fmt/format.h>

#include "models/workload/collective.h"

namespace fabricsim::workload {

namespace {

// The segment [lo, hi) of S that rank i holds after `level` halving steps (the splits by bits
// p - 1, p - 2, ... of i; the lower half goes to the rank whose bit is 0).
std::pair<uint64_t, uint64_t> segment(uint64_t S, int p, int i, int level) {
  uint64_t lo = 0, hi = S;
  for (int b = p - 1; b >= p - level; --b) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (i >> b & 1)
      lo = mid;
    else
      hi = mid;
  }
  return {lo, hi};
}

}  // namespace

FABRICSIM_REGISTER_COLLECTIVE(allreduce_halving_doubling) {
  CollectiveEntry e;
  e.description =
      "halving-doubling all-reduce (Rabenseifner): recursive-halving reduce-scatter, "
      "recursive-doubling all-gather, 2 log2(n) steps; n a power of two";
  e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
  e.refuse = [](const CollectiveCall& c) {
    const auto n = c.ranks.size();
    return (n & (n - 1)) == 0 ? std::string()
                              : fmt::format("{} ranks: halving-doubling needs a power of two", n);
  };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    int p = 0;
    while ((1 << p) < n) ++p;
    // Per rank and channel: the receive its next send waits for.
    std::vector<std::vector<uint32_t>> after(static_cast<size_t>(n),
                                             std::vector<uint32_t>(c.channels, kNoNode));
    std::vector<std::vector<uint32_t>> last_send = after;
    int steps = 0;
    auto step = [&](int level_sent, int level_recv, int distance) {
      g.set_step(steps++);
      std::vector<std::vector<uint32_t>> next = after;
      for (int i = 0; i < n; ++i) {
        const int j = i ^ distance;
        // Bytes i sends j: the segment at level_sent that j ends up with (halving: j's half;
        // doubling: i's own segment, the level below).
        const auto [lo, hi] = segment(c.bytes, p, level_sent < 0 ? i : j, std::abs(level_sent));
        const auto [rlo, rhi] = segment(c.bytes, p, level_recv < 0 ? j : i, std::abs(level_recv));
        for (int x = 0; x < c.channels; ++x) {
          const uint64_t out = piece(hi - lo, c.channels, x), in = piece(rhi - rlo, c.channels, x);
          if (out == 0 || in == 0)
            throw std::invalid_argument(
                fmt::format("{} B cannot be cut into {} ranks' segments x {} channels", c.bytes, n,
                            c.channels));
          const std::vector<uint32_t> deps =
              after[i][x] == kNoNode ? start[i] : std::vector<uint32_t>{after[i][x]};
          last_send[i][x] = g.add_send(c.ranks[i], c.ranks[j], out, x, deps);
          next[i][x] = g.add_recv(c.ranks[i], c.ranks[j], in, x, start[i]);
        }
      }
      after = std::move(next);
    };
    // Halving step k: i sends j's half (level k + 1 of j), receives its own (level k + 1 of i).
    for (int k = 0; k < p; ++k) step(k + 1, k + 1, n >> (k + 1));
    // Doubling step k: i sends its segment of level p - k (negative: i's own), receives j's.
    for (int k = 0; k < p; ++k) step(-(p - k), -(p - k), 1 << k);
    for (int i = 0; i < n; ++i)
      for (int x = 0; x < c.channels; ++x) {
        done[i].push_back(after[i][x]);
        done[i].push_back(last_send[i][x]);
      }
  };
  registry.add("allreduce_halving_doubling", std::move(e));
}

}  // namespace fabricsim::workload
