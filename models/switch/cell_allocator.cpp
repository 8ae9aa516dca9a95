#include "models/switch/cell_allocator.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::sw {

CellAllocator::CellAllocator(uint32_t cells) : free_(cells), allocated_(cells) {
  if (cells < 1) throw std::invalid_argument("CellAllocator: cells must be >= 1");
  reset();
}

void CellAllocator::reset() {
  free_.reset();
  std::fill(allocated_.begin(), allocated_.end(), 0);
}

CellAllocOut CellAllocator::tick(const CellAllocIn& in) {
  CellAllocOut out;
  out.alloc_ok = in.alloc_req && !free_.empty();
  out.alloc_id = free_.front();
  out.free_err = in.free_req && !is_allocated(in.free_id);
  // Edge. The allocated id was free and the freed one allocated, so they differ; the pop happens
  // before the push, so the ring never holds more than `cells` ids.
  if (out.alloc_ok) allocated_[free_.pop()] = 1;
  if (in.free_req && !out.free_err) {
    free_.push(in.free_id);
    allocated_[in.free_id] = 0;
  }
  return out;
}

}  // namespace fabricsim::sw
