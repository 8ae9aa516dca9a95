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
// Per bank the counts are kept with the cycle they belong to, so a new cycle needs no clearing:
// book_write / try_read are O(1) and allocate nothing.
#pragma once

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
  int bank_of(uint32_t cell) const { return static_cast<int>(cell % write_.size()); }

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
  struct Port {
    int64_t cycle = -1;
    int32_t used = 0;
  };
  static int64_t book(Port& p, int32_t limit, int64_t cycle, uint64_t& conflicts) {
    if (p.cycle < cycle) {
      p.cycle = cycle;
      p.used = 1;
      return cycle;
    }
    if (p.used >= limit) {
      ++p.cycle;
      p.used = 0;
    }
    ++p.used;
    if (p.cycle > cycle) ++conflicts;
    return p.cycle;
  }
  static bool take(Port& p, int32_t limit, int64_t cycle, uint64_t& conflicts) {
    if (p.cycle != cycle) {
      p.cycle = cycle;
      p.used = 0;
    }
    if (p.used >= limit) {
      ++conflicts;
      return false;
    }
    ++p.used;
    return true;
  }

  int32_t write_cells_, read_cells_;
  std::vector<Port> write_, read_;
  uint64_t write_conflicts_ = 0, read_conflicts_ = 0;
};

}  // namespace fabricsim::sw
