#include "models/switch/buffer_banks.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace fabricsim::sw {

BufferBanks::BufferBanks(int banks, int write_cells, int read_cells)
    : write_cells_(write_cells),
      read_cells_(read_cells),
      write_(static_cast<size_t>(banks > 0 ? banks : 1), 0),
      read_(static_cast<size_t>(banks > 0 ? banks : 1), 0),
      rebase_at_(kSpan / std::max({write_cells, read_cells, 1})) {
  if (banks < 1) throw std::invalid_argument("BufferBanks: banks must be >= 1");
  if (write_cells < 0 || read_cells < 0)
    throw std::invalid_argument("BufferBanks: cells per cycle must be >= 0");
}

void BufferBanks::rebase(int64_t cycle) {
  // Requests never go back in time, so a bank free before `cycle` is free from it on: slots are
  // counted from it now, and a stale one clamps to 0.
  const int64_t shift = cycle - base_;
  for (auto [banks, limit] : {std::pair{&write_, write_cells_}, std::pair{&read_, read_cells_}})
    for (int32_t& next : *banks)
      next = static_cast<int32_t>(std::max<int64_t>(next - shift * limit, 0));
  base_ = cycle;
  rebase_at_ = cycle + kSpan / std::max({write_cells_, read_cells_, 1});
}

}  // namespace fabricsim::sw
