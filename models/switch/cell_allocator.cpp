#include "models/switch/cell_allocator.h"

#include <numeric>
#include <stdexcept>

namespace fabricsim::sw {

CellAllocator::CellAllocator(uint32_t cells) : ring_(cells), allocated_(cells) {
  if (cells < 1) throw std::invalid_argument("CellAllocator: cells must be >= 1");
  reset();
}

void CellAllocator::reset() {
  std::iota(ring_.begin(), ring_.end(), 0u);
  std::fill(allocated_.begin(), allocated_.end(), 0);
  head_ = 0;
  count_ = cells();
}

CellAllocOut CellAllocator::tick(const CellAllocIn& in) {
  const uint32_t n = cells();
  CellAllocOut out;
  out.alloc_ok = in.alloc_req && count_ > 0;
  out.alloc_id = ring_[head_];
  out.free_err = in.free_req && !is_allocated(in.free_id);
  // Edge. The allocated id was free and the freed one allocated, so they differ; the pop happens
  // before the push, so the ring never holds more than `cells` ids.
  if (out.alloc_ok) {
    allocated_[out.alloc_id] = 1;
    head_ = head_ + 1 == n ? 0 : head_ + 1;
    --count_;
  }
  if (in.free_req && !out.free_err) {
    uint32_t tail = head_ + count_;
    if (tail >= n) tail -= n;
    ring_[tail] = in.free_id;
    allocated_[in.free_id] = 0;
    ++count_;
  }
  return out;
}

}  // namespace fabricsim::sw
