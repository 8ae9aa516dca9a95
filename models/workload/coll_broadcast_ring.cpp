// Broadcast along the ring (NCCL's ring broadcast): the root sends S, cut into slices of at most
// chunk_bytes, to the next rank, and each rank forwards a slice as soon as it has it, so slices
// pipeline along the chain. Ideal network, m slices of b = S/m: (n - 1)(alpha + b/B) +
// (m - 1) b/B. Bus factor 1.
#include <fmt/format.h>

#include "models/workload/collective.h"

namespace fabricsim::workload {

FABRICSIM_REGISTER_COLLECTIVE(broadcast_ring) {
  CollectiveEntry e;
  e.description = "broadcast: the root's data pipelined slice by slice along the ring";
  e.bus_factor = [](int) { return 1.0; };
  e.refuse = [](const CollectiveCall& c) {
    return c.root >= 0 && c.root < static_cast<int>(c.ranks.size())
               ? std::string()
               : std::string("the root is not one of the communicator's ranks");
  };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    const auto ch = static_cast<uint64_t>(c.channels);
    const uint64_t per_channel = (c.bytes + ch - 1) / ch;
    const uint64_t m =
        c.chunk_bytes ? std::max<uint64_t>(1, (per_channel + c.chunk_bytes - 1) / c.chunk_bytes)
                      : 1;
    g.require(count_product({2, static_cast<uint64_t>(n - 1), ch, m}),
              fmt::format("{} hops x {} channels x {} slices", n - 1, ch, m));
    for (uint64_t x = 0; x < ch; ++x)
      for (uint64_t s = 0; s < m; ++s) {
        const uint64_t bytes = piece(piece(c.bytes, ch, x), m, s);
        if (bytes == 0) throw std::invalid_argument("too few bytes for the channels and slices");
        // Along the chain from the root: position p's rank forwards what it received.
        uint32_t got = kNoNode;
        for (int p = 0; p + 1 < n; ++p) {
          g.set_step(p);  // the hop along the chain
          const int i = (c.root + p) % n, j = (c.root + p + 1) % n;
          const std::vector<uint32_t> deps = got == kNoNode ? start[i] : std::vector<uint32_t>{got};
          const uint32_t sent =
              g.add_send(c.ranks[i], c.ranks[j], bytes, static_cast<int>(x), deps);
          got = g.add_recv(c.ranks[j], c.ranks[i], bytes, static_cast<int>(x), start[j]);
          done[i].push_back(sent);
          if (p + 2 == n) done[j].push_back(got);
        }
      }
  };
  registry.add("broadcast_ring", std::move(e));
}

}  // namespace fabricsim::workload
