// What it costs to move a cache line from one core to the other: the floor under any split of
// per-packet work between threads (docs/performance.md, "The second core"). Two threads pass a
// counter back and forth through one atomic on its own line; one iteration is a round trip, i.e.
// two transfers of that line. Needs two cores to mean anything.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <thread>

namespace {

void BM_CacheLineRoundTrip(benchmark::State& state) {
  alignas(64) static std::atomic<int64_t> ball{0};
  alignas(64) static std::atomic<bool> stop{false};
  ball.store(0);
  stop.store(false);
  // The partner returns every odd value as the next even one.
  std::thread partner([] {
    for (int64_t seen = 0; !stop.load(std::memory_order_relaxed);) {
      const int64_t v = ball.load(std::memory_order_acquire);
      if (v != seen && (v & 1)) {
        seen = v + 1;
        ball.store(seen, std::memory_order_release);
      }
    }
  });
  int64_t v = 0;
  for (auto _ : state) {
    ball.store(++v, std::memory_order_release);
    ++v;
    while (ball.load(std::memory_order_acquire) != v) {
    }
  }
  stop.store(true);
  partner.join();
  state.counters["one_way"] =
      benchmark::Counter(2.0 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CacheLineRoundTrip)->UseRealTime()->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
