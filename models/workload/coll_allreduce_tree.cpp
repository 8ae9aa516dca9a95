// Double binary tree all-reduce (Sanders, Speck and Träff 2009; NCCL's tree algorithm): two
// binary trees over the ranks, each carrying half of the data: a reduce up the tree (a rank
// sends a chunk to its parent once it has that chunk from each of its children) and a broadcast
// down it (a rank forwards a chunk to its children once its parent sent it), pipelined chunk by
// chunk (`chunk_bytes`; 0: one chunk per tree). Tree A is the in-order binary tree whose leaves
// are the odd positions (position p > 0 with lowest set bit b hangs under (p xor b) or 2b, or
// under p xor b when that is past the end; 0 is the root); tree B is the same shape over the ranks
// shifted by one, so for an even n every rank is a leaf in one tree and inner in at most the other,
// and each rank's link carries about 2S each way. (For an odd n a few ranks are inner in both.)
// Latency grows with log2(n) rather than n: the algorithm of small messages on many ranks. On 2
// ranks it is the ring: 2 alpha + S/B. Bus factor 2(n-1)/n (nccl-tests).
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "models/workload/collective.h"

namespace fabricsim::workload {

namespace {

// The parent of position p (> 0) in the tree whose leaves are the odd positions.
int tree_parent(int p, int n) {
  const int bit = p & -p;
  const int up = (p ^ bit) | (bit << 1);
  return up < n ? up : p ^ bit;
}

}  // namespace

FABRICSIM_REGISTER_COLLECTIVE(allreduce_tree) {
  CollectiveEntry e;
  e.description =
      "double binary tree all-reduce: half the data up and down each of two binary trees, "
      "pipelined in chunks; log2(n) latency";
  e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    std::vector<int> shape(static_cast<size_t>(n), -1);
    for (int p = 1; p < n; ++p) shape[p] = tree_parent(p, n);
    for (int t = 0; t < 2; ++t) {
      // Tree t: position p is rank (p + t) mod n; parent[] and children[] by communicator index.
      std::vector<int> parent(static_cast<size_t>(n), -1);
      std::vector<std::vector<int>> children(static_cast<size_t>(n));
      int root = -1;
      for (int p = 0; p < n; ++p) {
        const int i = (p + t) % n;
        if (shape[p] < 0) {
          root = i;
        } else {
          parent[i] = (shape[p] + t) % n;
          children[parent[i]].push_back(i);
        }
      }
      // Ranks children-first (reduce order) and parents-first (broadcast order).
      std::vector<int> down;
      std::function<void(int)> visit = [&](int i) {
        down.push_back(i);
        for (int k : children[i]) visit(k);
      };
      visit(root);
      std::vector<int> up(down.rbegin(), down.rend());
      const uint64_t half = piece(c.bytes, 2, static_cast<uint64_t>(t));
      // Each tree's slices: every edge up and down, per channel and slice.
      const uint64_t slices =
          c.chunk_bytes ? (piece(half, c.channels, 0) + c.chunk_bytes - 1) / c.chunk_bytes : 1;
      g.require(count_product(
                    {4, static_cast<uint64_t>(n - 1), static_cast<uint64_t>(c.channels), slices}),
                fmt::format("a tree of {} ranks x {} channels x {} slices", n, c.channels, slices));
      for (int x = 0; x < c.channels; ++x) {
        const uint64_t part = piece(half, c.channels, x);
        const uint64_t m =
            c.chunk_bytes ? std::max<uint64_t>(1, (part + c.chunk_bytes - 1) / c.chunk_bytes) : 1;
        for (uint64_t s = 0; s < m; ++s) {
          const uint64_t bytes = piece(part, m, s);
          if (bytes == 0)
            throw std::invalid_argument(
                fmt::format("{} B cannot be cut into 2 trees x {} channels x {} chunks", c.bytes,
                            c.channels, m));
          // Reduce (step 0): each rank's receives from its children, then its send to its parent.
          g.set_step(0);
          std::vector<std::vector<uint32_t>> have(static_cast<size_t>(n));
          for (int i : up) {
            std::vector<uint32_t> deps = start[i];
            deps.insert(deps.end(), have[i].begin(), have[i].end());
            if (parent[i] < 0) {
              have[i] = deps;  // the root holds the reduced chunk once its children's are in
              continue;
            }
            const int p = parent[i];
            done[i].push_back(g.add_send(c.ranks[i], c.ranks[p], bytes, x, deps));
            have[p].push_back(g.add_recv(c.ranks[p], c.ranks[i], bytes, x, start[p]));
          }
          // Broadcast (step 1): the root's reduced chunk down the tree.
          g.set_step(1);
          std::vector<std::vector<uint32_t>> got(static_cast<size_t>(n));
          got[root] = have[root];
          for (int i : down)
            for (int k : children[i]) {
              done[i].push_back(g.add_send(c.ranks[i], c.ranks[k], bytes, x, got[i]));
              const uint32_t r = g.add_recv(c.ranks[k], c.ranks[i], bytes, x, start[k]);
              got[k] = {r};
              done[k].push_back(r);
            }
        }
      }
    }
  };
  registry.add("allreduce_tree", std::move(e));
}

}  // namespace fabricsim::workload
