// An event queue for an endpoint whose events, kind by kind, mostly come due in the order they
// are queued: a FIFO lane per such kind, and a min-heap for the rest.
//
// Not hardware: the event queue of the NIC model. Its wire wake-ups come due in the order they
// are queued, its payload reads complete in the order they were issued (nearly always), and its
// retransmission deadlines are a fixed timeout after a send. In one heap, a NIC with a thousand
// busy QPs held a thousand far deadlines: they sank to its bottom levels, and every pop walked
// the whole depth (five levels, three of them cold) to put the last record back. Here a push
// goes to its lane's back when it is due no earlier than the lane's last record, and to the heap
// otherwise; the next record is the least of the lanes' fronts (mirrored side by side in the
// object) and the heap's top. T's operator< must be strict and total over the records queued
// at once (ties broken by a sequence number): the records then come out in exactly the order of
// one heap of all of them, so the queue changes no result.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/common/min_heap.h"

namespace fabricsim {

template <class T, int Lanes>
class LaneQueue {
 public:
  static constexpr int kHeap = -1;  // a push's lane: straight to the heap

  bool empty() const { return best_ == kEmpty; }
  size_t size() const {
    size_t n = heap_.size();
    for (const Ring& r : lanes_) n += r.size;
    return n;
  }
  // The least record (the queue must not be empty).
  const T& top() const { return best_ == kHeap ? heap_.top() : front_[static_cast<size_t>(best_)]; }

  void push(int lane, const T& v) {
    if (lane == kHeap || !lanes_[static_cast<size_t>(lane)].append(v)) {
      heap_.push(v);
      if (best_ == kEmpty || v < top()) best_ = kHeap;
      return;
    }
    Ring& r = lanes_[static_cast<size_t>(lane)];
    if (r.size > 1) return;  // behind its lane's front: not the least
    front_[static_cast<size_t>(lane)] = v;
    busy_ |= 1u << lane;
    if (best_ == kEmpty || v < top()) best_ = lane;
  }

  void pop() {
    if (best_ == kHeap) {
      heap_.pop();
    } else {
      const auto l = static_cast<size_t>(best_);
      Ring& r = lanes_[l];
      r.pop();
      if (r.size)
        front_[l] = r.front();
      else
        busy_ &= ~(1u << l);
    }
    best_ = heap_.empty() ? kEmpty : kHeap;
    for (uint32_t m = busy_; m; m &= m - 1) {
      const int l = __builtin_ctz(m);
      if (best_ == kEmpty || front_[static_cast<size_t>(l)] < top()) best_ = l;
    }
  }

 private:
  static_assert(Lanes > 0 && Lanes <= 32, "a lane a bit of busy_");
  static constexpr int kEmpty = -2;
  // A lane's records in one ring that doubles when full and keeps its size: a lane that empties
  // and fills again allocates nothing.
  struct Ring {
    std::vector<T> buf;
    size_t head = 0, size = 0;
    // Appends v unless it comes before the last record (then false: it goes to the heap).
    bool append(const T& v) {
      if (size) {
        if (v < buf[(head + size - 1) & (buf.size() - 1)]) return false;
        if (size == buf.size()) grow();
      } else if (buf.empty()) {
        buf.resize(4);
      }
      buf[(head + size) & (buf.size() - 1)] = v;
      ++size;
      return true;
    }
    const T& front() const { return buf[head]; }
    void pop() {
      head = (head + 1) & (buf.size() - 1);
      if (--size == 0) head = 0;
    }
    void grow() {
      std::vector<T> b(buf.size() * 2);
      for (size_t i = 0; i < size; ++i) b[i] = buf[(head + i) & (buf.size() - 1)];
      buf.swap(b);
      head = 0;
    }
  };
  std::array<T, Lanes> front_{};  // each busy lane's front, read on every pop
  uint32_t busy_ = 0;             // the lanes holding a record
  int best_ = kEmpty;             // where top() is: a lane, kHeap or kEmpty
  std::array<Ring, Lanes> lanes_;
  MinHeap<T> heap_;
};

}  // namespace fabricsim
