// Shared cell buffer with admission control.
//
// Hardware: the on-chip packet memory of a shared-buffer switch, organised as fixed-size cells with
// a free list of cell ids and a per-packet linked list of cells (the "cell pointer memory"). What
// matters: the number of cells (size / cell size), the static reservation per ingress port and the
// dynamic threshold alpha on each egress queue (Choudhury & Hahne 1998): a queue may grow while its
// shared cells stay within alpha x the currently free shared cells. A packet is admitted or tail
// dropped whole, when its first cell arrives. When its cell ids are taken is
// switch.buffer.allocation:
//  - packet (admit, allocate, release): all of them at admission, so its later cells always find
//    room, and the thresholds see the space of cells not yet arrived as taken;
//  - cell (take_cell, release; Tomahawk-class MMUs account per cell): the first at admission,
//    which checks the first cell against the reservation or the shared pool and the dynamic
//    threshold as the cells held then stand; each later one as the cell arrives, from the port's
//    reservation or else the shared pool, without the threshold (the start-of-packet check
//    admitted the packet; its cells then go in while the memory has room). A later cell that
//    finds no room drops the packet mid-way (switch_core.h).
// The switch core counts a cell as held in its occupancy only from its write, as it arrives
// (switch_core.h; the banks that write and read it: buffer_banks.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim::sw {

class SharedBuffer {
 public:
  static constexpr uint32_t kNoCell = UINT32_MAX;

  // `queues`: number of admission queues (egress port x traffic class).
  SharedBuffer(int64_t total_cells, int ports, int64_t reserved_cells_per_port, int queues,
               double alpha);

  struct Allocation {
    bool ok = false;
    uint16_t reserve_cells = 0;     // how many of its cells are from the reservation (the rest
                                    // shared; packet allocation: all or none)
    uint32_t first_cell = kNoCell;  // head of the packet's cell list
  };
  // Admit `cells` cells arriving on `in_port` for admission queue `queue`; allocates them from the
  // port's reservation if it has room, else from the shared pool if the dynamic threshold allows.
  Allocation admit(int in_port, int queue, uint32_t cells);
  // Allocates `cells` for admission queue `queue` whenever that many cells are free, with no
  // policy (link-level flow control has admitted the packet already).
  Allocation allocate(int queue, uint32_t cells);
  // Returns the `cells` cells a packet holds (the list from a.first_cell: all it took at
  // admission, or those it took one by one), to the reservation and the shared pool as they came.
  // `last`, when the caller knows it, is the list's last cell (cell allocation: the tail that
  // take_cell left); kNoCell: the list is walked to find it.
  void release(int in_port, int queue, const Allocation& a, uint32_t cells,
               uint32_t last = kNoCell);

  // Cell allocation: takes one cell for a packet of `in_port` in admission queue `queue`, linked
  // behind `tail` (kNoCell: the packet's first, which becomes a.first_cell), and sets `tail` to
  // it. From the port's reservation while it has room, else from the shared pool while it has a
  // free cell and, with `threshold`, the queue stays within alpha x the free shared cells (the
  // start-of-packet check). False, taking nothing, when there is no room.
  bool take_cell(int in_port, int queue, Allocation& a, uint32_t& tail, bool threshold);

  uint32_t next_cell(uint32_t cell) const { return next_[cell]; }
  // Accounts only, no cell ids (switch.model packet: nothing reads a cell, and linking and
  // freeing a packet's list were a cache miss per cell): allocations have no first_cell. Set
  // before the first allocation.
  void count_only() {
    ids_ = false;
    next_.reset();  // (never touched, but at k = 32 a fabric's links were 3.35 GB of address space)
  }
  int64_t total_cells() const { return total_; }
  int64_t used_cells() const { return total_ - static_cast<int64_t>(free_count_); }
  int64_t shared_used() const { return shared_used_; }
  int64_t queue_cells(int queue) const { return queue_shared_[queue] + queue_reserved_[queue]; }
  uint64_t allocated_total() const { return allocated_total_; }
  uint64_t freed_total() const { return freed_total_; }

  // Conservation checks: allocated = freed + resident, the free list holds exactly the cells not in
  // use, and the per-port and per-queue accounts add up. Appends a message per violation.
  void check_invariants(std::vector<std::string>& violations) const;

 private:
  void link_cells(Allocation& a, uint32_t cells);
  // Pops the next free cell and links it behind `tail` (kNoCell: as the packet's first).
  void append_cell(Allocation& a, uint32_t& tail);
  // Returns the `cells` cells of the list from a.first_cell to `last` to the free list (counted
  // as freed).
  void free_cells(const Allocation& a, uint32_t cells, uint32_t last);
  uint32_t pop_free();

  bool ids_ = true;  // count_only() clears it
  int64_t total_;
  int64_t reserved_per_port_;
  int64_t shared_total_;
  double alpha_;
  // The free list: a FIFO of cell ids in the order of CellFreeList (cell_allocator.h's, the RTL's:
  // 0, 1, ..., cells-1 first, then each freed cell behind them), kept without the ring. The
  // cells never taken are the range [fresh_, total); the freed ones follow them, linked through
  // next_ as their packets' lists were, so a packet's cells go back as one splice at its tail
  // instead of one ring slot each. In a fabric of large buffers the cells are mostly cold in the
  // CPU's caches: walking a packet's list to free it was a cache miss per cell (a fifth of a
  // congested 1,024-NIC fat tree's run time).
  uint32_t fresh_ = 0;
  uint32_t free_head_ = kNoCell, free_tail_ = kNoCell;  // the freed cells (linked)
  uint32_t linked_free_ = 0;                            // how many
  uint32_t free_count_ = 0;                             // fresh + linked
  // Next-cell links of the per-packet cell lists and of the freed cells: a cell's link is
  // written when it is taken, so the array is not filled at construction (untouched pages cost
  // nothing: a fabric of many switches touches only the memory its traffic uses).
  std::unique_ptr<uint32_t[]> next_;
  std::vector<int64_t> port_reserved_used_;
  std::vector<int64_t> queue_shared_;
  std::vector<int64_t> queue_reserved_;
  int64_t shared_used_ = 0;
  uint64_t allocated_total_ = 0;
  uint64_t freed_total_ = 0;
};

// The per-packet operations, inline: they are on every packet's path.

inline SharedBuffer::Allocation SharedBuffer::admit(int in_port, int queue, uint32_t cells) {
  Allocation a;
  if (port_reserved_used_[in_port] + cells <= reserved_per_port_) {
    a.reserve_cells = static_cast<uint16_t>(cells);
    port_reserved_used_[in_port] += cells;
    queue_reserved_[queue] += cells;
  } else {
    const int64_t free_shared = shared_total_ - shared_used_;
    if (static_cast<int64_t>(cells) > free_shared) return a;
    // Dynamic threshold, evaluated against the free space before this packet is admitted.
    if (static_cast<double>(queue_shared_[queue] + cells) >
        alpha_ * static_cast<double>(free_shared))
      return a;
    shared_used_ += cells;
    queue_shared_[queue] += cells;
  }
  link_cells(a, cells);
  return a;
}

inline SharedBuffer::Allocation SharedBuffer::allocate(int queue, uint32_t cells) {
  Allocation a;
  if (cells > free_count_) return a;
  shared_used_ += cells;
  queue_shared_[queue] += cells;
  link_cells(a, cells);
  return a;
}

inline void SharedBuffer::link_cells(Allocation& a, uint32_t cells) {
  allocated_total_ += cells;
  if (!ids_) {
    free_count_ -= cells;
    a.ok = true;
    return;
  }
  // Link the cells: pop in free-list order, each cell pointing to the next.
  uint32_t tail = kNoCell;
  for (uint32_t k = 0; k < cells; ++k) append_cell(a, tail);
}

inline uint32_t SharedBuffer::pop_free() {
  // The caller checked that a cell is free.
  --free_count_;
  if (fresh_ < total_) return fresh_++;
  const uint32_t c = free_head_;
  if (--linked_free_ == 0) {
    free_head_ = free_tail_ = kNoCell;
  } else {
    free_head_ = next_[c];
    // The next cell taken is written then: its link's line, cold after its packet left long
    // ago, is on its way meanwhile.
    __builtin_prefetch(&next_[free_head_], 1);
  }
  return c;
}

inline void SharedBuffer::append_cell(Allocation& a, uint32_t& tail) {
  const uint32_t c = pop_free();
  next_[c] = kNoCell;
  if (tail == kNoCell)
    a.first_cell = c;
  else
    next_[tail] = c;
  tail = c;
  a.ok = true;
}

inline bool SharedBuffer::take_cell(int in_port, int queue, Allocation& a, uint32_t& tail,
                                    bool threshold) {
  if (port_reserved_used_[in_port] < reserved_per_port_) {
    ++port_reserved_used_[in_port];
    ++queue_reserved_[queue];
    ++a.reserve_cells;
  } else {
    const int64_t free_shared = shared_total_ - shared_used_;
    if (free_shared < 1) return false;
    if (threshold &&
        static_cast<double>(queue_shared_[queue] + 1) > alpha_ * static_cast<double>(free_shared))
      return false;
    ++shared_used_;
    ++queue_shared_[queue];
  }
  append_cell(a, tail);
  ++allocated_total_;
  return true;
}

inline void SharedBuffer::free_cells(const Allocation& a, uint32_t cells, uint32_t last) {
  // The packet's list (first to last, `cells` of them: all it took) goes behind the free list's
  // tail as it is.
  if (cells == 0) return;
  if (!ids_) {
    free_count_ += cells;
    freed_total_ += cells;
    return;
  }
  if (last == kNoCell) {
    last = a.first_cell;
    for (uint32_t k = 1; k < cells; ++k) last = next_[last];
  }
  if (linked_free_ == 0)
    free_head_ = a.first_cell;
  else
    next_[free_tail_] = a.first_cell;
  free_tail_ = last;
  linked_free_ += cells;
  free_count_ += cells;
  freed_total_ += cells;
}

inline void SharedBuffer::release(int in_port, int queue, const Allocation& a, uint32_t cells,
                                  uint32_t last) {
  free_cells(a, cells, last);
  port_reserved_used_[in_port] -= a.reserve_cells;
  queue_reserved_[queue] -= a.reserve_cells;
  shared_used_ -= cells - a.reserve_cells;
  queue_shared_[queue] -= cells - a.reserve_cells;
}

}  // namespace fabricsim::sw
