#include "models/switch/shared_buffer.h"

#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace fabricsim::sw {

SharedBuffer::SharedBuffer(int64_t total_cells, int ports, int64_t reserved_cells_per_port,
                           int queues, double alpha)
    : total_(total_cells),
      reserved_per_port_(reserved_cells_per_port),
      shared_total_(total_cells - reserved_cells_per_port * ports),
      alpha_(alpha),
      free_(static_cast<uint32_t>(total_cells)),
      next_(static_cast<size_t>(total_cells), kNoCell),
      port_reserved_used_(static_cast<size_t>(ports), 0),
      queue_shared_(static_cast<size_t>(queues), 0),
      queue_reserved_(static_cast<size_t>(queues), 0) {
  if (total_cells <= 0 || total_cells >= static_cast<int64_t>(kNoCell))
    throw std::invalid_argument("shared buffer: cell count out of range");
  if (shared_total_ <= 0) throw std::invalid_argument("shared buffer: no shared pool left");
}

SharedBuffer::Allocation SharedBuffer::admit(int in_port, int queue, uint32_t cells) {
  Allocation a;
  if (port_reserved_used_[in_port] + cells <= reserved_per_port_) {
    a.from_reserve = true;
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

SharedBuffer::Allocation SharedBuffer::allocate(int queue, uint32_t cells) {
  Allocation a;
  if (cells > free_.size()) return a;
  shared_used_ += cells;
  queue_shared_[queue] += cells;
  link_cells(a, cells);
  return a;
}

void SharedBuffer::link_cells(Allocation& a, uint32_t cells) {
  a.ok = true;
  // Link the cells: pop in free-list order, each cell pointing to the next.
  uint32_t prev = kNoCell;
  for (uint32_t k = 0; k < cells; ++k) {
    const uint32_t c = free_.pop();
    next_[c] = kNoCell;
    if (prev == kNoCell)
      a.first_cell = c;
    else
      next_[prev] = c;
    prev = c;
  }
  allocated_total_ += cells;
}

void SharedBuffer::release(int in_port, int queue, const Allocation& a, uint32_t cells) {
  uint32_t c = a.first_cell;
  for (uint32_t k = 0; k < cells; ++k) {
    const uint32_t nxt = next_[c];
    free_.push(c);
    next_[c] = kNoCell;
    c = nxt;
  }
  freed_total_ += cells;
  if (a.from_reserve) {
    port_reserved_used_[in_port] -= cells;
    queue_reserved_[queue] -= cells;
  } else {
    shared_used_ -= cells;
    queue_shared_[queue] -= cells;
  }
}

void SharedBuffer::check_invariants(std::vector<std::string>& violations) const {
  const uint64_t resident = static_cast<uint64_t>(used_cells());
  if (allocated_total_ != freed_total_ + resident)
    violations.push_back(fmt::format("buffer: cells allocated {} != freed {} + resident {}",
                                     allocated_total_, freed_total_, resident));
  int64_t reserved = 0, qres = 0, qshared = 0;
  for (auto v : port_reserved_used_) reserved += v;
  for (auto v : queue_reserved_) qres += v;
  for (auto v : queue_shared_) qshared += v;
  if (reserved + shared_used_ != static_cast<int64_t>(resident))
    violations.push_back(fmt::format("buffer: reserved {} + shared {} != resident {}", reserved,
                                     shared_used_, resident));
  if (qres != reserved || qshared != shared_used_)
    violations.push_back(
        fmt::format("buffer: queue accounts (reserved {}, shared {}) != pool "
                    "accounts (reserved {}, shared {})",
                    qres, qshared, reserved, shared_used_));
  if (free_.size() > free_.capacity())
    violations.push_back("buffer: free list longer than the buffer");
}

}  // namespace fabricsim::sw
