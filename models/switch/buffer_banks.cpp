#include "models/switch/buffer_banks.h"

#include <stdexcept>

namespace fabricsim::sw {

BufferBanks::BufferBanks(int banks, int write_cells, int read_cells)
    : write_cells_(write_cells),
      read_cells_(read_cells),
      write_(static_cast<size_t>(banks > 0 ? banks : 1), 0),
      read_(static_cast<size_t>(banks > 0 ? banks : 1), 0) {
  if (banks < 1) throw std::invalid_argument("BufferBanks: banks must be >= 1");
  if (write_cells < 0 || read_cells < 0)
    throw std::invalid_argument("BufferBanks: cells per cycle must be >= 0");
  count_ = static_cast<uint32_t>(banks);
  mask_ = (count_ & (count_ - 1)) == 0 ? count_ - 1 : 0;
}

}  // namespace fabricsim::sw
