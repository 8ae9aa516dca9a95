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
      // (Sized 0 when out of range, which the body then refuses.)
      free_count_(total_cells > 0 && total_cells < kNoCell ? static_cast<uint32_t>(total_cells)
                                                           : 0),
      next_(new uint32_t[free_count_]),
      port_reserved_used_(static_cast<size_t>(ports), 0),
      queue_shared_(static_cast<size_t>(queues), 0),
      queue_reserved_(static_cast<size_t>(queues), 0) {
  if (total_cells <= 0 || total_cells >= static_cast<int64_t>(kNoCell))
    throw std::invalid_argument("shared buffer: cell count out of range");
  if (shared_total_ <= 0) throw std::invalid_argument("shared buffer: no shared pool left");
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
  if (free_count_ > total_ || (ids_ && free_count_ != (total_ - fresh_) + linked_free_))
    violations.push_back(
        fmt::format("buffer: free list of {} cells ({} never taken, {} freed) in "
                    "a buffer of {}",
                    free_count_, total_ - fresh_, linked_free_, total_));
}

}  // namespace fabricsim::sw
