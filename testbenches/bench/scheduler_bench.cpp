// Cost of one VoqScheduler::schedule() call (one crossbar slot) per algorithm, for 64 and 128
// ports, 1 and 4 iterations, and 10% / 60% / 100% request density with every output ready. Each run
// cycles through a pool of pre-generated request matrices so the scheduler's pointers evolve as
// they would in a simulation. rr and wavefront ignore `iterations`, so they are only run with 1.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "models/common/port_set.h"
#include "models/common/rng.h"
#include "models/switch/voq_scheduler.h"

namespace {

using fabricsim::PortSet;
using fabricsim::Rng;

void BM_Schedule(benchmark::State& state, const std::string& algorithm) {
  const int ports = static_cast<int>(state.range(0));
  const int iterations = static_cast<int>(state.range(1));
  const int density_pct = static_cast<int>(state.range(2));
  Rng gen(42);
  constexpr int kPool = 64;
  std::vector<std::vector<PortSet>> pool(kPool, std::vector<PortSet>(ports, PortSet(ports)));
  for (auto& m : pool)
    for (auto& row : m)
      for (int j = 0; j < ports; ++j)
        if (density_pct >= 100 || static_cast<int>(gen.below(100)) < density_pct) row.set(j);
  PortSet ready(ports);
  ready.set_all();
  Rng rng(7);
  auto sched = fabricsim::sw::make_scheduler(algorithm, ports, iterations, rng);
  std::vector<int> match(ports);
  int t = 0;
  for (auto _ : state) {
    sched->schedule(pool[t], ready, match);
    t = t + 1 == kPool ? 0 : t + 1;
    benchmark::DoNotOptimize(match.data());
    benchmark::ClobberMemory();
  }
  // Mean match size, from an untimed replay on a fresh scheduler: shows what the time buys.
  Rng rng2(7);
  auto replay = fabricsim::sw::make_scheduler(algorithm, ports, iterations, rng2);
  long matched = 0;
  const int calls = 16 * kPool;
  for (int c = 0; c < calls; ++c) {
    replay->schedule(pool[c % kPool], ready, match);
    for (int m : match) matched += m >= 0;
  }
  state.counters["match"] = static_cast<double>(matched) / calls;
}

void args(benchmark::internal::Benchmark* b, bool uses_iterations) {
  b->ArgNames({"ports", "iter", "density"});
  for (int ports : {64, 128})
    for (int iterations : {1, 4}) {
      if (iterations > 1 && !uses_iterations) continue;
      for (int density : {10, 60, 100}) b->Args({ports, iterations, density});
    }
}

BENCHMARK_CAPTURE(BM_Schedule, islip, std::string("islip"))->Apply([](auto* b) { args(b, true); });
BENCHMARK_CAPTURE(BM_Schedule, pim, std::string("pim"))->Apply([](auto* b) { args(b, true); });
BENCHMARK_CAPTURE(BM_Schedule, rr, std::string("rr"))->Apply([](auto* b) { args(b, false); });
BENCHMARK_CAPTURE(BM_Schedule, wavefront, std::string("wavefront"))->Apply([](auto* b) {
  args(b, false);
});

}  // namespace

BENCHMARK_MAIN();
