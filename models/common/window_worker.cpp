#include "models/common/window_worker.h"

#include <utility>

namespace fabricsim {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

WindowWorker::WindowWorker() : thread_([this] { loop(); }) {}

WindowWorker::~WindowWorker() {
  if (busy_) {
    try {
      wait();
    } catch (...) {  // the run is being torn down by an earlier error already
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    started_.store(kStop, std::memory_order_release);
  }
  cv_.notify_all();
  thread_.join();
}

void WindowWorker::start(std::function<void()> job) {
  job_ = std::move(job);
  busy_ = true;
  ++jobs_;
  started_.store(jobs_, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> l(mu_);
    cv_.notify_all();
  }
}

void WindowWorker::wait() {
  if (!busy_) return;
  await(finished_, jobs_);
  busy_ = false;
  if (error_) {
    std::exception_ptr e = std::move(error_);
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void WindowWorker::await(const std::atomic<uint64_t>& flag, uint64_t want) {
  // Spinning, then yielding the CPU to any other runnable thread, for up to kSpin; then asleep.
  // A sleeping thread took ~0.7 ms to wake on this class of VM, against windows of a few ms
  // of work: the spin must outlast the other side's usual lead.
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    const uint64_t v = flag.load(std::memory_order_acquire);
    if (v == want || v == kStop) return;
    if (i < 1024) {
      cpu_relax();
    } else {
      if ((i & 63) == 0 && std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::yield();
    }
  }
  std::unique_lock<std::mutex> l(mu_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  // (seq_cst with the stores and sleepers_: either this sees the flag or its setter sees a
  // sleeper and notifies.)
  cv_.wait(l, [&] {
    const uint64_t v = flag.load(std::memory_order_seq_cst);
    return v == want || v == kStop;
  });
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

void WindowWorker::loop() {
  for (uint64_t n = 1;; ++n) {
    await(started_, n);
    if (started_.load(std::memory_order_acquire) == kStop) return;
    if (n > 1)
      idle_s_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - finished_at_).count();
    try {
      job_();
    } catch (...) {
      error_ = std::current_exception();
    }
    finished_at_ = std::chrono::steady_clock::now();
    finished_.store(n, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> l(mu_);
      cv_.notify_all();
    }
  }
}

}  // namespace fabricsim
