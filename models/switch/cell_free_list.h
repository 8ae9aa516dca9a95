// The free list of cell ids of a shared buffer: a FIFO ring (hardware free lists are FIFOs),
// initially 0, 1, ..., cells-1; pop() takes the head, push() appends at the tail. Shared by the
// buffer model (shared_buffer.h) and the clocked allocator block co-simulated with its RTL
// (cell_allocator.h), so both hand out cells in the same order.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

namespace fabricsim::sw {

class CellFreeList {
 public:
  explicit CellFreeList(uint32_t cells) : ring_(cells) { reset(); }

  void reset() {
    std::iota(ring_.begin(), ring_.end(), 0u);
    head_ = 0;
    count_ = static_cast<uint32_t>(ring_.size());
  }
  uint32_t capacity() const { return static_cast<uint32_t>(ring_.size()); }
  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  uint32_t front() const { return ring_[head_]; }  // meaningful when not empty

  uint32_t pop() {
    const uint32_t c = ring_[head_];
    head_ = head_ + 1 == capacity() ? 0 : head_ + 1;
    --count_;
    return c;
  }
  // The caller guarantees the list is not full (every cell is freed at most once).
  void push(uint32_t c) {
    uint32_t tail = head_ + count_;  // < 2 x capacity: a subtraction, not a division
    if (tail >= capacity()) tail -= capacity();
    ring_[tail] = c;
    ++count_;
  }

 private:
  std::vector<uint32_t> ring_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace fabricsim::sw
