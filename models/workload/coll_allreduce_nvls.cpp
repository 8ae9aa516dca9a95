// NVLS all-reduce (NCCL's NVLS algorithm on NVLink SHARP: NCCL 2.17+, H100 and later) inside one
// scale-up domain whose switch reduces (scale_up.reduce). GPU p owns slice p of S/G; per channel
// and chunk of its slice it
//   1. reduces: the switch reads the chunk from all G GPUs (multimem.ld_reduce), sums it and
//      returns the result to p: G - 1 messages q -> p tagged kNvlsReduce, one switch operation
//      (scale_up.h) on every GPU's egress and p's ingress;
//   2. multicasts the result (multimem.st): G - 1 messages p -> q tagged kNvlsMulticast, one
//      operation on p's egress and every GPU's ingress.
// Every port so carries (1 + 1/G) S each way (the ring: 2 (G - 1)/G S). With chunking
// (workload.chunk) the reductions of a GPU keep kWindow chunks in flight (chunk k + kWindow
// waits for chunk k's result, NCCL_STEPS buffer slots: an assumption, docs/hardware-facts.md)
// and each chunk's multicast follows its reduction, so the two overlap:
//   T ~ (1 + 1/G) S/B + latencies; without chunking the phases do not overlap: 2 (S/B + L)
// (per-GPU port rate B, latency L; reduction engine R < B: S/R + S/B + 2 L).
// Bus factor 2 (n - 1)/n as nccl-tests reports every all-reduce. Refused without scale_up.reduce
// or across domains (allreduce_nvls_hierarchical spans them).
// allreduce_nvls_hierarchical (NCCL's NVLS with more than one node) and allreduce_nvls_tree (its
// NVLS_TREE), over N domains of G: the reductions alone in every domain (GPU l ends with its
// domain's sum of slice l), an all-reduce of slice l per local rank across the domains (a ring
// per rail, or the double binary tree), then the multicasts alone. Unchunked, with NIC rate R and
// per-message latency a: T = 2 (S/B + L) + 2 (N - 1) (a + S/(G N R)) (the tree: its own time
// across). With workload.chunk the buffer's pieces go through the phases in a pipeline
// (nvls_hierarchical below), as NCCL's do.
// Refused without scale_up.reduce, with unequal domains or one GPU a domain.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "models/workload/collective.h"
#include "models/workload/scale_up.h"

namespace fabricsim::workload {

namespace {

constexpr uint64_t kWindow = 8;

std::string refuse_nvls(const CollectiveCall& c) {
  if (!c.scale_up_reduce)
    return "needs the scale-up switch's reduction: scale_up.reduce: true (and scale_up domains)";
  if (!c.domain) return "needs scale-up domains (scale_up:)";
  std::set<int> doms;
  for (const int r : c.ranks) {
    if (r < 0 || static_cast<size_t>(r) >= c.domain->size())
      return fmt::format("rank {} has no scale-up domain", r);
    doms.insert((*c.domain)[static_cast<size_t>(r)]);
  }
  if (doms.size() > 1)
    return fmt::format(
        "its ranks span {} scale-up domains: NVLS reduces inside one switch (scale_up.gpus; "
        "allreduce_nvls_hierarchical spans domains)",
        doms.size());
  if (c.ranks.size() - 1 > kNvlsCountMask) return "too many ranks for one switch operation";
  return "";
}

// Channel x's chunk s of slice p: the reduction (its result at p), its multicast, or both.
struct Builder {
  ExecGraph& g;
  const CollectiveCall& c;
  const RankNodes& start;
  RankNodes& done;
  int n;
  bool reduce, multicast;
  // Per position: its last reductions' results (for the window).
  std::vector<std::vector<std::vector<uint32_t>>> results;

  void chunk(int x, int p, uint64_t s, uint64_t bytes) {
    const auto tag_n = static_cast<uint32_t>(n - 1);
    const int rp = c.ranks[static_cast<size_t>(p)];
    std::vector<uint32_t> got = start[static_cast<size_t>(p)];  // multicast only: p's data
    if (reduce) {
      std::vector<uint32_t> issue = start[static_cast<size_t>(p)];  // p issues the reduction
      auto& res = results[static_cast<size_t>(p)];
      if (s >= kWindow) issue.insert(issue.end(), res[s - kWindow].begin(), res[s - kWindow].end());
      g.set_step(0);
      got.clear();
      for (int q = 0; q < n; ++q) {
        if (q == p) continue;
        const int rq = c.ranks[static_cast<size_t>(q)];
        std::vector<uint32_t> deps = issue;
        deps.insert(deps.end(), start[static_cast<size_t>(q)].begin(),
                    start[static_cast<size_t>(q)].end());
        done[static_cast<size_t>(q)].push_back(
            g.add_send(rq, rp, bytes, x, deps, kNvlsReduce | tag_n));
        got.push_back(
            g.add_recv(rp, rq, bytes, x, start[static_cast<size_t>(p)], kNvlsReduce | tag_n));
      }
      if (!multicast)
        done[static_cast<size_t>(p)].insert(done[static_cast<size_t>(p)].end(), got.begin(),
                                            got.end());
      res.push_back(got);
    }
    if (!multicast) return;
    g.set_step(1);
    for (int q = 0; q < n; ++q) {
      if (q == p) continue;
      const int rq = c.ranks[static_cast<size_t>(q)];
      done[static_cast<size_t>(p)].push_back(
          g.add_send(rp, rq, bytes, x, got, kNvlsMulticast | tag_n));
      done[static_cast<size_t>(q)].push_back(
          g.add_recv(rq, rp, bytes, x, start[static_cast<size_t>(q)], kNvlsMulticast | tag_n));
    }
  }
};

// The NVLS operations of a call inside one domain over every channel, slice and chunk: the
// reductions (a reduce-scatter: position p ends with the sum of slice p), the multicasts (an
// all-gather of each position's slice) or both (the all-reduce).
void nvls_ops(ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done,
              bool reduce, bool multicast) {
  const auto n = static_cast<int>(c.ranks.size());
  const uint64_t first =
      piece(piece(c.bytes, static_cast<uint64_t>(c.channels), 0), static_cast<uint64_t>(n), 0);
  const uint64_t chunk = c.chunk_bytes ? std::min(c.chunk_bytes, first) : first;
  const uint64_t m_max = (first + chunk - 1) / chunk;
  g.require(count_product({4, static_cast<uint64_t>(n - 1), static_cast<uint64_t>(n),
                           static_cast<uint64_t>(c.channels), m_max}),
            fmt::format("an NVLS all-reduce of {} ranks x {} channels x {} chunks", n, c.channels,
                        m_max));
  Builder b{g, c, start, done, n, reduce, multicast, {}};
  for (int x = 0; x < c.channels; ++x) {
    b.results.assign(static_cast<size_t>(n), {});
    const uint64_t part = piece(c.bytes, static_cast<uint64_t>(c.channels), x);
    for (int p = 0; p < n; ++p) {
      const uint64_t slice = piece(part, static_cast<uint64_t>(n), static_cast<uint64_t>(p));
      const uint64_t m = std::max<uint64_t>(1, (slice + chunk - 1) / chunk);
      for (uint64_t s = 0; s < m; ++s) {
        const uint64_t bytes = piece(slice, m, s);
        if (bytes == 0)
          throw std::invalid_argument(fmt::format("{} B cannot be cut into {} ranks x {} channels",
                                                  c.bytes, n, c.channels));
        b.chunk(x, p, s, bytes);
      }
    }
  }
}

// Across domains (allreduce_nvls_hierarchical, allreduce_nvls_tree): positions grouped by domain
// (domain_groups), then for each piece of the buffer 1. the reductions in every domain (position l
// of a domain ends with the domain's sum of its slice), 2. an all-reduce of slice l per local rank
// l across the domains (`across`: allreduce_ring or allreduce_tree on those N positions), 3. the
// multicasts in every domain, each position's after its step 2. NCCL moves the buffer through the
// three phases chunk by chunk, so with workload.chunk c > 0 the buffer is cut into
// m = ceil(S / (G c)) pieces (a chunk of c a GPU), piece j's phase waiting only for its own
// previous phase and for piece j - kWindow's same phase (kWindow buffer slots): the phases of
// different pieces overlap and the slowest resource sets the pace. Unchunked: one piece, the
// phases one after the other.
void nvls_hierarchical(ExecGraph& g, const CollectiveCall& c, const RankNodes& start,
                       RankNodes& done, const std::string& across) {
  std::string why;
  const std::vector<std::vector<int>> dom = domain_groups(c, why);
  const auto gpus = static_cast<uint64_t>(dom[0].size());
  const uint64_t m =
      c.chunk_bytes
          ? std::max<uint64_t>(1, (c.bytes + gpus * c.chunk_bytes - 1) / (gpus * c.chunk_bytes))
          : 1;
  g.require(m, fmt::format("{} pieces of {} B", m, gpus * c.chunk_bytes));
  const CollectiveEntry& e = CollectiveRegistry::global().at(across);
  auto phase = [&](int which, const CollectiveCall& pc, RankNodes& at) {
    if (which != 1) {  // 0: the reductions, 2: the multicasts, in every domain
      for (const auto& d : dom)
        on_positions(pc, d, pc.bytes, at,
                     [&](const CollectiveCall& sub, const RankNodes& s, RankNodes& out) {
                       nvls_ops(g, sub, s, out, which == 0, which == 2);
                     });
      return;
    }
    if (dom.size() < 2) return;
    for (uint64_t l = 0; l < gpus; ++l) {
      std::vector<int> rail;
      for (const auto& d : dom) rail.push_back(d[l]);
      uint64_t slice = 0;  // slice l summed over the channels, as nvls_ops cuts them
      for (int x = 0; x < pc.channels; ++x)
        slice += piece(piece(pc.bytes, static_cast<uint64_t>(pc.channels), x), gpus, l);
      on_positions(pc, rail, slice, at,
                   [&](const CollectiveCall& sub, const RankNodes& s, RankNodes& out) {
                     e.build(g, sub, s, out);
                   });
    }
  };
  // Per phase, the done nodes of the last kWindow pieces (slot j mod kWindow).
  std::vector<std::vector<RankNodes>> slots(3, std::vector<RankNodes>(std::min(m, kWindow)));
  done.assign(c.ranks.size(), {});
  CollectiveCall pc = c;
  pc.chunk_bytes = 0;
  for (uint64_t j = 0; j < m; ++j) {
    pc.bytes = piece(c.bytes, m, j);
    RankNodes at = start;
    for (int which = 0; which < 3; ++which) {
      RankNodes& slot = slots[static_cast<size_t>(which)][j % kWindow];
      if (j >= kWindow)
        for (size_t i = 0; i < at.size(); ++i)
          at[i].insert(at[i].end(), slot[i].begin(), slot[i].end());
      phase(which, pc, at);
      slot = at;
    }
    for (size_t i = 0; i < at.size(); ++i)
      done[i].insert(done[i].end(), at[i].begin(), at[i].end());
  }
}

std::string refuse_nvls_hierarchical(const CollectiveCall& c) {
  if (!c.scale_up_reduce)
    return "needs the scale-up switch's reduction: scale_up.reduce: true (and scale_up domains)";
  std::string why;
  const auto dom = domain_groups(c, why);
  if (!why.empty()) return why;
  if (dom[0].size() < 2)
    return "one rank per scale-up domain: nothing for the switch to reduce (take allreduce_ring)";
  if (dom[0].size() - 1 > kNvlsCountMask) return "too many ranks for one switch operation";
  return "";
}

}  // namespace

FABRICSIM_REGISTER_COLLECTIVE(allreduce_nvls) {
  CollectiveEntry e;
  e.description =
      "NVLS all-reduce inside one scale-up domain: the switch reduces each GPU's slice from all "
      "GPUs and multicasts the result (needs scale_up.reduce)";
  e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
  e.refuse = refuse_nvls;
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    nvls_ops(g, c, start, done, true, true);
  };
  registry.add("allreduce_nvls", std::move(e));
  // Across domains, from the same file: they share its operations.
  for (const bool tree : {false, true}) {
    CollectiveEntry e;
    e.description = tree ? "NVLS tree all-reduce (NCCL's NVLS_TREE): NVLS reduce-scatter in each "
                           "scale-up domain, double binary tree all-reduce per local rank across "
                           "domains, NVLS multicast all-gather (needs scale_up.reduce)"
                         : "hierarchical NVLS all-reduce: NVLS reduce-scatter in each scale-up "
                           "domain, ring all-reduce per local rank across domains (one per rail), "
                           "NVLS multicast all-gather (needs scale_up.reduce)";
    e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
    e.refuse = refuse_nvls_hierarchical;
    e.build = [tree](ExecGraph& g, const CollectiveCall& c, const RankNodes& start,
                     RankNodes& done) {
      nvls_hierarchical(g, c, start, done, tree ? "allreduce_tree" : "allreduce_ring");
    };
    registry.add(tree ? "allreduce_nvls_tree" : "allreduce_nvls_hierarchical", std::move(e));
  }
}

}  // namespace fabricsim::workload
