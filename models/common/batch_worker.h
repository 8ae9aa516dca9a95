// A helper thread that applies batches of records, in order, off the simulation thread.
//
// For pure consumers: statistics that nothing in the simulation reads back before the results are
// written (the hosts' latency histograms, say). The simulation thread appends a record per event;
// every `batch` records it hands the batch over and goes on, and the worker applies the batches
// in the order they were handed over, so the outcome is exactly that of applying them inline.
// drain() applies everything pushed so far; call it before reading what `apply` updates. Without
// a thread (threaded = false) batches are applied inline, on the caller's thread. An exception
// thrown by `apply` is re-thrown by the next drain().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace fabricsim {

template <class Record>
class BatchWorker {
 public:
  using Apply = std::function<void(const std::vector<Record>&)>;

  BatchWorker(Apply apply, bool threaded, size_t batch = 1024)
      : apply_(std::move(apply)), batch_(batch) {
    cur_.reserve(batch_);
    if (threaded) thread_ = std::thread([this] { run(); });
  }
  ~BatchWorker() { end_thread(); }
  // Applies what is pending (rethrowing an exception of apply, as drain() does) and ends the
  // helper thread; records after this apply on the caller's thread. Idempotent.
  void stop() {
    drain();
    end_thread();
  }
  void end_thread() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    work_.notify_one();
    thread_.join();
  }
  BatchWorker(const BatchWorker&) = delete;
  BatchWorker& operator=(const BatchWorker&) = delete;

  void push(const Record& r) { emplace(r); }
  // Constructs the record in place in the batch.
  template <class... Args>
  void emplace(Args&&... args) {
    cur_.emplace_back(std::forward<Args>(args)...);
    if (cur_.size() == batch_) hand_over();
  }

  // Applies every record pushed so far before returning.
  void drain() {
    if (!cur_.empty()) hand_over();
    if (!thread_.joinable()) return;
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [&] { return full_.empty() && !busy_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void hand_over() {
    if (!thread_.joinable()) {
      apply_(cur_);
      cur_.clear();
      return;
    }
    std::vector<Record> next;
    {
      std::unique_lock<std::mutex> lock(m_);
      // Bounded: a worker that falls behind holds the simulation back rather than its memory.
      done_.wait(lock, [&] { return full_.size() < kMaxQueued; });
      full_.push_back(std::move(cur_));
      if (!spare_.empty()) {
        next = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    work_.notify_one();
    cur_ = std::move(next);
    cur_.clear();
    cur_.reserve(batch_);
  }

  void run() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      work_.wait(lock, [&] { return stop_ || !full_.empty(); });
      if (full_.empty()) return;  // stopping, with nothing left
      std::vector<Record> b = std::move(full_.front());
      full_.pop_front();
      busy_ = true;
      lock.unlock();
      try {
        apply_(b);
      } catch (...) {
        lock.lock();
        if (!error_) error_ = std::current_exception();
        lock.unlock();
      }
      b.clear();
      lock.lock();
      spare_.push_back(std::move(b));
      busy_ = false;
      done_.notify_all();
    }
  }

  static constexpr size_t kMaxQueued = 16;
  Apply apply_;
  const size_t batch_;
  std::vector<Record> cur_;  // the simulation thread's batch being filled
  std::mutex m_;
  std::condition_variable work_, done_;
  std::deque<std::vector<Record>> full_;    // handed over, not yet applied
  std::vector<std::vector<Record>> spare_;  // applied batches, for reuse (no allocation per batch)
  bool busy_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace fabricsim
