// The machine reference of fabricsim regress's speed checks (regress.h): the parallel-chains step
// of testbenches/bench/machine_ref.h run on every usable CPU at once.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include "testbenches/bench/machine_ref.h"
#include "testbenches/fabricsim/regress.h"

namespace fabricsim::regress {

MachineRef machine_reference() {
  // ~0.07 s per CPU on a quiet machine: long enough to see the other tenants, short beside a case.
  constexpr uint64_t kSteps = 50'000'000;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  if (cpus.empty()) cpus.push_back(-1);
  std::vector<MachineRef> per(cpus.size());
  std::atomic<size_t> ready{0};
  std::vector<std::thread> threads;
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e9 * static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec);
  };
  for (size_t i = 0; i < cpus.size(); ++i)
    threads.emplace_back([&, i] {
      if (cpus[i] >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[i], &one);
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      }
      // All start together: the reference is the step with every core busy, as in speed.py.
      ready.fetch_add(1);
      while (ready.load() < cpus.size()) std::this_thread::yield();
      bench::ParallelChains chains;
      const double c0 = cpu_now();
      const auto t0 = std::chrono::steady_clock::now();
      chains.run(kSteps);
      const auto t1 = std::chrono::steady_clock::now();
      const double c1 = cpu_now();
      volatile uint64_t sink = chains.digest();
      (void)sink;
      per[i].wall_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / kSteps;
      per[i].cpu_ns = (c1 - c0) / kSteps;
    });
  for (auto& t : threads) t.join();
  MachineRef m;
  for (const auto& r : per) {
    m.wall_ns += r.wall_ns / static_cast<double>(per.size());
    m.cpu_ns += r.cpu_ns / static_cast<double>(per.size());
  }
  return m;
}

}  // namespace fabricsim::regress
