// The free list of cell ids of a shared buffer: a FIFO ring (hardware free lists are FIFOs),
// initially 0, 1, ..., cells-1; pop() takes the head, push() appends at the tail. The clocked
// allocator block co-simulated with its RTL (cell_allocator.h) keeps one; the buffer model
// (shared_buffer.h) keeps the same order with its freed cells linked through the cell pointer
// memory instead (a packet's cells go back as one splice), and shared_buffer_test checks that
// both hand out cells in the same order.
//
// The ring is not filled at construction: pushes write its slots in order from slot 0, so a slot
// at or above `written_` still holds its initial value, its own index. A switch of 652k cells
// (the 51.2T chip's buffer) then costs nothing until cells come back, and a fabric of many
// switches touches only the memory its traffic uses (it used to write 2.6 MB per switch).
#pragma once

#include <cstdint>
#include <memory>

namespace fabricsim::sw {

class CellFreeList {
 public:
  // (new[] without a value: the slots stay unwritten, and untouched pages are not resident.)
  explicit CellFreeList(uint32_t cells) : ring_(new uint32_t[cells]), capacity_(cells) { reset(); }

  void reset() {
    written_ = 0;
    head_ = 0;
    count_ = capacity_;
  }
  uint32_t capacity() const { return capacity_; }
  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  uint32_t front() const { return slot(head_); }  // meaningful when not empty

  uint32_t pop() {
    const uint32_t c = slot(head_);
    head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    --count_;
    return c;
  }
  // The caller guarantees the list is not full (every cell is freed at most once).
  void push(uint32_t c) {
    uint32_t tail = head_ + count_;  // < 2 x capacity: a subtraction, not a division
    if (tail >= capacity_) tail -= capacity_;
    ring_[tail] = c;
    // Pushes write the slots in order from 0 (the tail starts at slot 0 and moves by one), so
    // the written slots are always a prefix until the tail first wraps.
    if (tail >= written_) written_ = tail + 1;
    ++count_;
  }

 private:
  uint32_t slot(uint32_t i) const { return i < written_ ? ring_[i] : i; }

  std::unique_ptr<uint32_t[]> ring_;
  uint32_t capacity_;
  uint32_t written_ = 0;  // slots [0, written_) hold pushed ids; the rest their own index
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace fabricsim::sw
