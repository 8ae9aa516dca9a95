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
// or across domains (allreduce_hierarchical spans them).
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
        "allreduce_hierarchical spans domains)",
        doms.size());
  if (c.ranks.size() - 1 > kNvlsCountMask) return "too many ranks for one switch operation";
  return "";
}

// Channel x's chunk s of slice p: the reduction, then its multicast.
struct Builder {
  ExecGraph& g;
  const CollectiveCall& c;
  const RankNodes& start;
  RankNodes& done;
  int n;
  // Per position: its last reductions' results (for the window).
  std::vector<std::vector<std::vector<uint32_t>>> results;

  void chunk(int x, int p, uint64_t s, uint64_t bytes) {
    const auto tag_n = static_cast<uint32_t>(n - 1);
    const int rp = c.ranks[static_cast<size_t>(p)];
    std::vector<uint32_t> issue = start[static_cast<size_t>(p)];  // p issues the reduction
    auto& res = results[static_cast<size_t>(p)];
    if (s >= kWindow) issue.insert(issue.end(), res[s - kWindow].begin(), res[s - kWindow].end());
    g.set_step(0);
    std::vector<uint32_t> got;
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
    g.set_step(1);
    for (int q = 0; q < n; ++q) {
      if (q == p) continue;
      const int rq = c.ranks[static_cast<size_t>(q)];
      done[static_cast<size_t>(p)].push_back(
          g.add_send(rp, rq, bytes, x, got, kNvlsMulticast | tag_n));
      done[static_cast<size_t>(q)].push_back(
          g.add_recv(rq, rp, bytes, x, start[static_cast<size_t>(q)], kNvlsMulticast | tag_n));
    }
    res.push_back(std::move(got));
  }
};

}  // namespace

FABRICSIM_REGISTER_COLLECTIVE(allreduce_nvls) {
  CollectiveEntry e;
  e.description =
      "NVLS all-reduce inside one scale-up domain: the switch reduces each GPU's slice from all "
      "GPUs and multicasts the result (needs scale_up.reduce)";
  e.bus_factor = [](int n) { return 2.0 * (n - 1) / n; };
  e.refuse = refuse_nvls;
  e.build = [](ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done) {
    const auto n = static_cast<int>(c.ranks.size());
    const uint64_t first =
        piece(piece(c.bytes, static_cast<uint64_t>(c.channels), 0), static_cast<uint64_t>(n), 0);
    const uint64_t chunk = c.chunk_bytes ? std::min(c.chunk_bytes, first) : first;
    const uint64_t m_max = (first + chunk - 1) / chunk;
    g.require(count_product({4, static_cast<uint64_t>(n - 1), static_cast<uint64_t>(n),
                             static_cast<uint64_t>(c.channels), m_max}),
              fmt::format("an NVLS all-reduce of {} ranks x {} channels x {} chunks", n, c.channels,
                          m_max));
    Builder b{g, c, start, done, n, {}};
    for (int x = 0; x < c.channels; ++x) {
      b.results.assign(static_cast<size_t>(n), {});
      const uint64_t part = piece(c.bytes, static_cast<uint64_t>(c.channels), x);
      for (int p = 0; p < n; ++p) {
        const uint64_t slice = piece(part, static_cast<uint64_t>(n), static_cast<uint64_t>(p));
        const uint64_t m = std::max<uint64_t>(1, (slice + chunk - 1) / chunk);
        for (uint64_t s = 0; s < m; ++s) {
          const uint64_t bytes = piece(slice, m, s);
          if (bytes == 0)
            throw std::invalid_argument(fmt::format(
                "{} B cannot be cut into {} ranks x {} channels", c.bytes, n, c.channels));
          b.chunk(x, p, s, bytes);
        }
      }
    }
  };
  registry.add("allreduce_nvls", std::move(e));
}

}  // namespace fabricsim::workload
