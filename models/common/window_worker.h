// A helper thread that runs one job at a time for the simulation's main thread: a partition of
// the fabric (some of the switches) running a window of cycles while the main thread and the
// other workers run the rest (one worker per partition beyond the main thread's).
//
// Not hardware: part of the parallel run (sim.threads, docs/architecture.md "Threads").
// start() hands a job over, wait() returns once it has finished and rethrows what it threw. A
// waiting side spins, then yields the CPU to other runnable threads, for up to kSpin, and only
// then sleeps: a sleeping thread took ~0.7 ms to wake on this class of VM, as long as a window's
// work, which made two threads no faster than one in a fat tree (docs/performance.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace fabricsim {

class WindowWorker {
 public:
  WindowWorker();
  ~WindowWorker();
  WindowWorker(const WindowWorker&) = delete;
  WindowWorker& operator=(const WindowWorker&) = delete;

  // Runs `job` on the helper thread; the previous job must have been waited for. The job object
  // is kept until the next start (no allocation per window for a job that fits std::function).
  void start(std::function<void()> job);
  // Blocks until the job started last has finished (at once if none is running); rethrows its
  // exception, if it threw one.
  void wait();
  bool busy() const { return busy_; }
  // When the job waited for last finished (read after wait()).
  std::chrono::steady_clock::time_point finished_at() const { return finished_at_; }
  // Wall seconds the helper waited for its next job, from the end of its first (read after
  // wait()): everything it did not run, wherever the main thread was.
  double idle_s() const { return idle_s_; }

 private:
  void loop();
  // Spins on `flag` until it holds `want`, then sleeps on cv_ until it does.
  void await(const std::atomic<uint64_t>& flag, uint64_t want);

  std::function<void()> job_;
  std::exception_ptr error_;
  std::atomic<uint64_t> started_{0};   // jobs handed over (and the stop request: kStop)
  std::atomic<uint64_t> finished_{0};  // jobs finished
  std::atomic<int> sleepers_{0};       // threads asleep on cv_ (a notify is needed)
  std::mutex mu_;
  std::condition_variable cv_;
  std::chrono::steady_clock::time_point finished_at_;  // written before finished_
  double idle_s_ = 0;                                  // (likewise)
  bool busy_ = false;  // main thread's view: a job started and not yet waited for
  uint64_t jobs_ = 0;  // main thread's count of jobs started
  std::thread thread_;
  static constexpr uint64_t kStop = UINT64_MAX;
  static constexpr std::chrono::milliseconds kSpin{20};
};

}  // namespace fabricsim
