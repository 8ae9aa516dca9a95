// Hierarchical all-reduce over scale-up domains (NCCL's intra-node / inter-node decomposition, as
// its NVLS-tree and hierarchical algorithms split the work): the communicator's ranks grouped by
// scale-up domain (CollectiveCall::domain; G ranks in each of N domains, local rank l the l-th of
// its domain in communicator order), then
//   1. a ring reduce-scatter inside every domain (G - 1 steps of S/G): local rank l holds the
//      domain's sum of block l;
//   2. a ring all-reduce of that block across the domains, one ring per local rank l over the
//      N ranks of local rank l (2 (N - 1) steps of S/(G N)): on rail-optimized servers each ring
//      stays on its GPU's rail, the G rings the channels over the rails;
//   3. a ring all-gather inside every domain (G - 1 steps of S/G).
// With per-GPU scale-up rate B_up, NIC rate B_nic and per-message latencies a_up, a_nic, on an
// otherwise ideal network: 2 (G - 1) (a_up + S/(G B_up)) + 2 (N - 1) (a_nic + S/(G N B_nic)).
// Bus factor 2 (n - 1)/n (nccl-tests', n = G N). Refused without domains, or with domains of
// unequal sizes in the communicator.
// allreduce_hierarchical_tree: the same with step 2 a double binary tree (allreduce_tree) per
// local rank instead of the ring: log2(N) latency across many domains rather than N (NCCL's
// tree across nodes, its ring or NVLS inside them).
#include <fmt/format.h>

#include "models/workload/collective.h"

namespace fabricsim::workload {

namespace {

// One ring pass over the positions `who`: step k, position i sends block (i - k + shift) mod n
// (shift -1: reduce-scatter, 0: gather).
void pass(ExecGraph& g, const CollectiveCall& c, const std::vector<int>& who, uint64_t bytes,
          int steps, int step_base, int shift, RankNodes& at) {
  const auto n = static_cast<int>(who.size());
  on_positions(c, who, bytes, at,
               [&](const CollectiveCall& sub, const RankNodes& start, RankNodes& done) {
                 ring_pass(
                     g, sub, steps,
                     [&](int k, int i) {
                       return piece(bytes, static_cast<uint64_t>(n),
                                    static_cast<uint64_t>((((i - k + shift) % n) + n) % n));
                     },
                     start, done, step_base);
               });
}

// A double binary tree all-reduce (allreduce_tree) of `bytes` over the positions `who`.
void tree(ExecGraph& g, const CollectiveCall& c, const std::vector<int>& who, uint64_t bytes,
          RankNodes& at) {
  const CollectiveEntry& t = CollectiveRegistry::global().at("allreduce_tree");
  on_positions(c, who, bytes, at,
               [&](const CollectiveCall& sub, const RankNodes& start, RankNodes& done) {
                 t.build(g, sub, start, done);
               });
}

CollectiveEntry hierarchical(bool across_tree) {
  CollectiveEntry e;
  e.description =
      across_tree ? "hierarchical all-reduce: ring reduce-scatter in each scale-up domain, double "
                    "binary tree all-reduce per local rank across domains (one per rail), ring "
                    "all-gather in each domain"
                  : "hierarchical all-reduce: ring reduce-scatter in each scale-up domain, ring "
                    "all-reduce per local rank across domains (one per rail), ring all-gather in "
                    "each domain";
  e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
  e.refuse = [](const CollectiveCall& c) {
    std::string why;
    domain_groups(c, why);
    return why;
  };
  e.build = [across_tree](ExecGraph& g, const CollectiveCall& c, const RankNodes& start,
                          RankNodes& done) {
    std::string why;
    const std::vector<std::vector<int>> dom = domain_groups(c, why);
    const auto gpus = static_cast<int>(dom[0].size()), n_dom = static_cast<int>(dom.size());
    RankNodes at = start;
    if (gpus > 1)
      for (const auto& d : dom) pass(g, c, d, c.bytes, gpus - 1, 0, -1, at);
    if (n_dom > 1)
      for (int l = 0; l < gpus; ++l) {
        std::vector<int> rail;
        for (const auto& d : dom) rail.push_back(d[static_cast<size_t>(l)]);
        const uint64_t block =
            piece(c.bytes, static_cast<uint64_t>(gpus), static_cast<uint64_t>(l));
        if (across_tree)
          tree(g, c, rail, block, at);
        else
          pass(g, c, rail, block, 2 * (n_dom - 1), gpus - 1, 0, at);
      }
    if (gpus > 1)
      for (const auto& d : dom) pass(g, c, d, c.bytes, gpus - 1, gpus - 1 + 2 * (n_dom - 1), 0, at);
    done = std::move(at);
  };
  return e;
}

}  // namespace

// Both variants from one file: they differ only in the step across domains.
FABRICSIM_REGISTER_COLLECTIVE(allreduce_hierarchical) {
  registry.add("allreduce_hierarchical", hierarchical(false));
  registry.add("allreduce_hierarchical_tree", hierarchical(true));
}

}  // namespace fabricsim::workload
