// The buffer memory's banks and their per-cycle read and write ports.
//
// Hardware: the shared packet buffer is not one memory with unlimited ports but a set of SRAM
// banks, each reading and writing a few cells per cycle (1R1W banks: one of each). Cell id c lives
// in bank c mod banks (the free list hands out ids, so which bank a cell lands in follows the free
// list's order); a cell whose bank has used its writes (reads) in a cycle waits for a later cycle:
// a bank conflict. Writes are booked: a bank serves its write requests in the order they come,
// each in the first cycle with a write left (a FIFO per bank), so a cell's write cycle is known
// when it asks; reads are taken in their cycle, or not, at the crossbar (try_read), and booked
// the same way as writes in a shared-memory switch (book_read). Parameters: banks, write_cells and
// read_cells per bank per cycle (0: unlimited, the idealised memory of theory). The total bandwidth
// is banks x write_cells cells per cycle in and banks x read_cells out; with one bank per cell of
// demand and random ids, conflicts bring it below that.
//
// Per bank one number, its next free slot (cycle x cells per cycle + cells booked then), so a new
// cycle needs no clearing: book_write / try_read are O(1) and allocate nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim::sw {

class BufferBanks {
 public:
  // write_cells, read_cells: per bank per cycle, 0 = unlimited. banks >= 1.
  BufferBanks(int banks, int write_cells, int read_cells);

  bool write_limited() const { return write_cells_ > 0; }
  bool read_limited() const { return read_cells_ > 0; }
  int banks() const { return static_cast<int>(write_.size()); }
  // (Asked per cell written and read: a mask for the usual power-of-two count, never a 64-bit
  // divide.)
  int bank_of(uint32_t cell) const {
    return static_cast<int>(mask_ ? cell & mask_ : cell % count_);
  }

  // Books the write of `cell` asked for in `cycle`: the first cycle at or after it in which its
  // bank has a write left after the writes booked before; a later cycle counts a conflict.
  // Cycles of requests must not go backwards.
  int64_t book_write(uint32_t cell, int64_t cycle) {
    return write_limited() ? book(write_[bank_of(cell)], write_cells_, cycle, write_conflicts_)
                           : cycle;
  }
  // The same for a read (shared_memory, where a cell's read may wait for its bank). A switch
  // either books its reads or takes them in their cycle (try_read, the crossbar), never both.
  int64_t book_read(uint32_t cell, int64_t cycle) {
    return read_limited() ? book(read_[bank_of(cell)], read_cells_, cycle, read_conflicts_) : cycle;
  }
  // Takes a read of `cell` in `cycle` if its bank has one left then; counts a conflict otherwise.
  // Cycles must not go backwards.
  bool try_read(uint32_t cell, int64_t cycle) {
    return !read_limited() || take(read_[bank_of(cell)], read_cells_, cycle, read_conflicts_);
  }

  uint64_t write_conflicts() const { return write_conflicts_; }
  uint64_t read_conflicts() const { return read_conflicts_; }

 private:
  // A bank's port as one number: the next free slot, cycle x limit + cells already booked in
  // that cycle (8 bytes a bank, so that the banks of the many switches of a fabric stay in the
  // CPU's caches). A slot below the asking cycle's first is stale: the bank is free then.
  static int64_t book(int64_t& next, int32_t limit, int64_t cycle, uint64_t& conflicts) {
    const int64_t slot = std::max(next, cycle * limit);
    next = slot + 1;
    const int64_t at = limit == 1 ? slot : slot / limit;
    if (at > cycle) ++conflicts;
    return at;
  }
  static bool take(int64_t& next, int32_t limit, int64_t cycle, uint64_t& conflicts) {
    const int64_t slot = std::max(next, cycle * limit);
    if (slot >= (cycle + 1) * limit) {
      ++conflicts;
      return false;
    }
    next = slot + 1;
    return true;
  }

  int32_t write_cells_, read_cells_;
  uint32_t count_ = 1, mask_ = 0;      // banks; banks - 1 when a power of two (else 0)
  std::vector<int64_t> write_, read_;  // per bank: its next free slot
  uint64_t write_conflicts_ = 0, read_conflicts_ = 0;
};

}  // namespace fabricsim::sw
