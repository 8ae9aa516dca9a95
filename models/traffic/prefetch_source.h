// Runs a TrafficSource on a second thread, ahead of the simulation.
//
// Generating synthetic traffic is pure computation with no dependence on the simulated system, so
// it can run on another core: a producer thread pulls packets from the wrapped source into a
// single-producer single-consumer ring, in batches, and next() pops them. The packet stream is
// exactly the wrapped source's (same order, same ids), so results do not depend on whether the
// prefetcher is used. An exception in the producer (e.g. a trace error found late) is re-thrown by
// next() at the point of the stream where it happened.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic {

class PrefetchSource : public TrafficSource {
 public:
  // The ring is the consumer's slack for the times the producer is off its core. 4,096 packets
  // (under a millisecond of the slotted 64-port benchmark) ran dry about twice a millisecond on
  // this 2-vCPU VM, where a sleeping thread can take longer than that to run again: the simulation
  // waited 4-9% of its wall time. 32,768 (1.5 MB, several milliseconds) leaves only the waits at
  // start-up.
  explicit PrefetchSource(std::unique_ptr<TrafficSource> inner, size_t capacity = 32768)
      : inner_(std::move(inner)), ring_(capacity), mask_(capacity - 1) {
    producer_ = std::thread([this] { produce(); });
  }
  ~PrefetchSource() override {
    stop_.store(true, std::memory_order_relaxed);
    producer_.join();
  }
  PrefetchSource(const PrefetchSource&) = delete;
  PrefetchSource& operator=(const PrefetchSource&) = delete;

  bool next(Packet& p) override { return next_batch(&p, 1) == 1; }
  // (Set when the wrapped source was made, before the producer started: no race.)
  uint64_t workload_packets() const override { return inner_->workload_packets(); }

  size_t next_batch(Packet* out, size_t max) override {
    if (head_ == cached_tail_) {
      // Wait for the producer: spin briefly, then yield the core.
      for (int spins = 0; (cached_tail_ = tail_.load(std::memory_order_acquire)) == head_;
           ++spins) {
        if (done_.load(std::memory_order_acquire)) {
          cached_tail_ = tail_.load(std::memory_order_acquire);
          if (cached_tail_ != head_) break;
          if (error_) std::rethrow_exception(error_);
          return 0;
        }
        if (spins > 64) std::this_thread::yield();
      }
    }
    // What is there, up to the end of the ring.
    const uint64_t at = head_ & mask_;
    const size_t n = std::min(
        {max, static_cast<size_t>(cached_tail_ - head_), static_cast<size_t>(ring_.size() - at)});
    std::copy_n(&ring_[at], n, out);
    const uint64_t before = head_;
    head_ += n;
    // Publish the consumed position in batches: fewer cache-line transfers between the cores.
    if ((head_ >> 8) != (before >> 8)) head_pub_.store(head_, std::memory_order_release);
    return n;
  }

 private:
  void produce() {
    uint64_t tail = 0;
    try {
      uint64_t limit = 0, published = 0;
      const uint64_t cap = ring_.size();
      while (!stop_.load(std::memory_order_relaxed)) {
        if (tail - limit >= cap) {  // ring full as far as we know: refresh the consumer position
          limit = head_pub_.load(std::memory_order_acquire);
          if (tail - limit >= cap) {
            if (tail != published) {
              tail_.store(tail, std::memory_order_release);
              published = tail;
            }
            // Far ahead (a full ring is several milliseconds of simulation): sleep rather than
            // spin, so the second core stays free for whoever else needs it.
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            continue;
          }
        }
        // Into the free part of the ring, up to its end, as much as the source has at hand.
        const uint64_t at = tail & mask_;
        const size_t room = std::min(cap - (tail - limit), cap - at);
        const size_t n = inner_->next_batch(&ring_[at], room);
        if (n == 0) break;
        tail += n;
        if (tail - published >= 64) {
          tail_.store(tail, std::memory_order_release);
          published = tail;
        }
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    // Everything before the end (or the error) reaches the consumer.
    tail_.store(tail, std::memory_order_release);
    done_.store(true, std::memory_order_release);
  }

  std::unique_ptr<TrafficSource> inner_;
  std::vector<Packet> ring_;
  const uint64_t mask_;
  // Consumer side (simulation thread).
  alignas(64) uint64_t head_ = 0;
  uint64_t cached_tail_ = 0;
  // Shared positions, each on its own cache line.
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> head_pub_{0};
  alignas(64) std::atomic<bool> done_{false};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace fabricsim::traffic
