// The machine's own speed at the time of a measurement, so that a simulator figure taken in a slow
// hour can be told from a slow build (docs/performance.md, "Why the figures move with the hour").
//
// This VM's two vCPUs share their physical cores with other tenants' work now and then. A chain of
// dependent operations (one at a time) hardly notices; code that keeps several execution units
// busy at once, as the simulator does at about 3 instructions a cycle, does: in one hour of
// 2026-11-24 the Parallel step below took from 1.73 to 2.92 ns while Chain stayed at 1.4 ns.
// speed.py probes Parallel before every run it times. Four figures, each in ns per step:
//   Chain    - one dependent multiply-add-shift chain: latency-bound, the clock rate;
//   Parallel - eight independent add/shift/xor chains: throughput-bound, what a sibling takes away;
//   L2Chase  - a random pointer chase through 256 KiB (L2-resident): the cache latency.
//   MemChase/MiB/huge - the same chase through 8 MiB to 1 GiB, on 4 KB pages or asked for as
//              transparent huge pages (madvise): what a cold record costs a simulator whose
//              state is gigabytes (the 1,024-rank all-to-all: 3.7 GB). On this class of VM the
//              cost keeps growing past the last-level cache (the page walks miss too) and huge
//              pages in the guest do not lower it (docs/performance.md, "eleventh pass").
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <sys/mman.h>

#include "testbenches/bench/machine_ref.h"

namespace {

void BM_Chain(benchmark::State& state) {
  uint64_t x = 1;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i)
      x = (x * 6364136223846793005ull + 1442695040888963407ull) ^ (x >> 7);
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Chain);

void BM_Parallel(benchmark::State& state) {
  fabricsim::bench::ParallelChains chains;  // machine_ref.h: shared with `fabricsim regress`
  for (auto _ : state) chains.run(1000);
  benchmark::DoNotOptimize(chains.digest());
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Parallel);

void BM_L2Chase(benchmark::State& state) {
  const size_t n = 256 * 1024 / sizeof(uint64_t);
  std::vector<uint64_t> perm(n), next(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(1));
  for (size_t k = 0; k < n; ++k) next[perm[k]] = perm[(k + 1) % n];  // one cycle through all
  uint64_t p = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) p = next[p];
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_L2Chase);

// One random cycle through state.range(0) MiB of 8 B slots; state.range(1): madvise the block
// for transparent huge pages (the simulator's heap is, when the kernel has THP: heap_huge_pages).
void BM_MemChase(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20, n = bytes / sizeof(uint64_t);
  constexpr size_t kHuge = size_t{2} << 20;
  void* block =
      mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) {
    state.SkipWithError("mmap failed");
    return;
  }
  auto* next = reinterpret_cast<uint64_t*>((reinterpret_cast<uintptr_t>(block) + kHuge - 1) &
                                           ~(uintptr_t{kHuge} - 1));
  if (state.range(1)) madvise(next, bytes, MADV_HUGEPAGE);
  std::vector<uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(1));
  for (size_t k = 0; k < n; ++k) next[perm[k]] = perm[(k + 1) % n];
  uint64_t p = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) p = next[p];
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
  state.counters["per_load"] = benchmark::Counter(
      1000, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  munmap(block, bytes + kHuge);
}
BENCHMARK(BM_MemChase)
    ->ArgNames({"MiB", "huge"})
    ->ArgsProduct({{8, 32, 128, 512, 1024}, {0, 1}})
    ->MinTime(0.5);

}  // namespace

BENCHMARK_MAIN();
