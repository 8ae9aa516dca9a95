// Shared-buffer cell allocator: the free list of cell ids of a shared-buffer switch, as a clocked
// block with one allocate and one free port per cycle (the RTL is rtl/cell_alloc.sv).
//
// Hardware: the FIFO free list of `cells` cell ids that the shared buffer uses (CellFreeList):
// initially 0, 1, ..., cells-1; an allocation pops the head, a free pushes at the tail. A bitmap of
// allocated ids rejects a free of an id that is not allocated (double free or bad id: free_err,
// ignored). tick() is one clock edge; its outputs come from the state before the edge: alloc_ok =
// alloc_req && the list is not empty, alloc_id = the head (meaningful only with alloc_ok), free_err
// = free_req && free_id is not allocated. An id freed in cycle t can be allocated from cycle t+1
// on. Parameter: cells (the RTL needs a power of two).
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/cell_free_list.h"

namespace fabricsim::sw {

struct CellAllocIn {
  bool alloc_req = false;
  bool free_req = false;
  uint32_t free_id = 0;
};

struct CellAllocOut {
  bool alloc_ok = false;
  uint32_t alloc_id = 0;  // valid with alloc_ok
  bool free_err = false;
};

// The interface the model and the Verilated RTL share.
class CellAllocatorIf {
 public:
  virtual ~CellAllocatorIf() = default;
  virtual CellAllocOut tick(const CellAllocIn& in) = 0;
  virtual uint32_t cells() const = 0;
  virtual uint32_t free_count() const = 0;
  uint32_t occupancy() const { return cells() - free_count(); }
  virtual void reset() = 0;
};

class CellAllocator final : public CellAllocatorIf {
 public:
  explicit CellAllocator(uint32_t cells);  // cells >= 1 (std::invalid_argument otherwise)

  CellAllocOut tick(const CellAllocIn& in) override;
  uint32_t cells() const override { return free_.capacity(); }
  uint32_t free_count() const override { return free_.size(); }
  void reset() override;

  bool is_allocated(uint32_t id) const { return id < cells() && allocated_[id]; }

 private:
  CellFreeList free_;
  std::vector<uint8_t> allocated_;  // per id
};

}  // namespace fabricsim::sw
