// In-network all-reduce (SHARP-like: Graham et al., COMHPC 2016; NCCL's CollNet): the switches'
// aggregation units reduce. Each rank sends its S bytes, chunk by chunk, to the unit of its
// switch; a unit sends a chunk up once it has that chunk from every child (ranks and units
// below); the root's reduced chunk comes back down the same tree (a unit forwards it to each
// child as it arrives: the multicast), so every rank's link carries S up and S down.
//
// The aggregation buffer (switch.aggregation.buffer) bounds a tree's chunks in flight: with W =
// buffer / (chunk x channels) (the smallest over the tree's units), a rank's chunk k + W waits
// for chunk k's result, which is when the units have released chunk k's slot. So a tree streams
// at most W chunks per round trip: throughput min(line rate, W x chunk / RTT). A chunk larger
// than the buffer is refused. The tree: models/workload/innet_plan.h; the units: ranks after the
// job's. Bus factor 2(n-1)/n as nccl-tests gives every all-reduce.
#include <algorithm>

#include <fmt/format.h>

#include "models/workload/collective.h"
#include "models/workload/innet_plan.h"

namespace fabricsim::workload {

namespace {

// The chunks a tree holds per channel: its tightest unit's buffer over chunk x channels.
uint64_t window(const InNetworkPlan& plan, const ReductionTree& t, uint64_t chunk, int channels) {
  uint64_t w = UINT64_MAX;
  for (int a : t.unit)
    if (a >= 0) {
      const uint64_t per = plan.buffer[a] / (chunk * static_cast<uint64_t>(channels));
      if (per == 0)
        throw std::invalid_argument(fmt::format(
            "{} channel(s) x chunks of {} B do not fit switch {}'s aggregation buffer of {} B "
            "(workload.chunk, switch.aggregation.buffer)",
            channels, chunk, plan.name[a], plan.buffer[a]));
      w = std::min(w, per);
    }
  return w;
}

}  // namespace

FABRICSIM_REGISTER_COLLECTIVE(allreduce_innet) {
  CollectiveEntry e;
  e.description =
      "in-network all-reduce: S up to the switches' aggregation units, reduced there, and S "
      "back down (SHARP-like); needs switch.aggregation.enabled";
  e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
  e.refuse = [](const CollectiveCall& c) {
    return c.innet ? std::string()
                   : std::string(
                         "in-network reduction needs the switches' aggregation units: "
                         "switch.aggregation.enabled: true (and workload.format collective)");
  };
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const InNetworkPlan& plan = *c.innet;
    if (g.ranks() < plan.job_ranks + plan.units())
      throw std::invalid_argument("the graph has no ranks for the aggregation units");
    const ReductionTree t = reduction_tree(plan, c.ranks);
    const auto n = static_cast<int>(c.ranks.size());
    const auto nodes = t.rank.size();
    const std::vector<int> up = t.up_order();
    const std::vector<int> down(up.rbegin(), up.rend());
    const uint64_t first = piece(c.bytes, static_cast<uint64_t>(c.channels), 0);
    const uint64_t chunk = c.chunk_bytes ? std::min(c.chunk_bytes, first) : first;
    const uint64_t w = window(plan, t, chunk, c.channels);
    const uint64_t slices = (first + chunk - 1) / chunk;
    g.require(count_product({4, nodes - 1, static_cast<uint64_t>(c.channels), slices}),
              fmt::format("an in-network tree of {} nodes x {} channels x {} slices", nodes,
                          c.channels, slices));
    auto deps_of = [&](size_t i) {
      return i < static_cast<size_t>(n) ? start[i] : std::vector<uint32_t>{};
    };
    for (int x = 0; x < c.channels; ++x) {
      const uint64_t part = piece(c.bytes, static_cast<uint64_t>(c.channels), x);
      const uint64_t m = std::max<uint64_t>(1, (part + chunk - 1) / chunk);
      // Per rank: its result receive of each slice, for the buffer's window.
      std::vector<std::vector<uint32_t>> result(static_cast<size_t>(n));
      for (uint64_t s = 0; s < m; ++s) {
        const uint64_t bytes = piece(part, m, s);
        if (bytes == 0)
          throw std::invalid_argument(fmt::format("{} B cannot be cut into {} channels x {} chunks",
                                                  c.bytes, c.channels, m));
        // Reduce (step 0): a node sends up once it has the slice from every child.
        g.set_step(0);
        std::vector<std::vector<uint32_t>> have(nodes);
        for (int i : up) {
          std::vector<uint32_t> deps = deps_of(static_cast<size_t>(i));
          deps.insert(deps.end(), have[i].begin(), have[i].end());
          if (i < n && s >= w) deps.push_back(result[i][s - w]);  // the buffer's slot
          if (t.parent[i] < 0) {
            have[i] = deps;
            continue;
          }
          const int p = t.parent[i];
          const uint32_t snd = g.add_send(t.rank[i], t.rank[p], bytes, x, deps);
          if (i < n) done[i].push_back(snd);
          have[p].push_back(
              g.add_recv(t.rank[p], t.rank[i], bytes, x, deps_of(static_cast<size_t>(p))));
        }
        // Broadcast (step 1): the root's result down the tree.
        g.set_step(1);
        std::vector<std::vector<uint32_t>> got(nodes);
        got[t.root] = have[t.root];
        for (int i : down)
          for (int k : t.children[i]) {
            const uint32_t snd = g.add_send(t.rank[i], t.rank[k], bytes, x, got[i]);
            if (i < n) done[i].push_back(snd);
            const uint32_t r =
                g.add_recv(t.rank[k], t.rank[i], bytes, x, deps_of(static_cast<size_t>(k)));
            got[k] = {r};
            if (k < n) {
              done[k].push_back(r);
              result[k].push_back(r);
            }
          }
      }
    }
  };
  registry.add("allreduce_innet", std::move(e));
}

}  // namespace fabricsim::workload
