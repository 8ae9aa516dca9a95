#include "tlm/host_memory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace fabricsim::tlm_host {

HostMemory::HostMemory(const HostMemoryConfig& cfg) : cfg_(cfg) {
  if (!(cfg.bandwidth_gbytes > 0)) throw std::invalid_argument("host memory: bandwidth <= 0");
}

Time HostMemory::transfer_time(uint64_t bytes) const {
  if (bytes == memo_bytes_) return memo_time_;
  // 1 GB/s moves one byte per ns = 10^6 fs.
  memo_bytes_ = bytes;
  memo_time_ = Time::fs(
      static_cast<int64_t>(std::ceil(static_cast<double>(bytes) * 1e6 / cfg_.bandwidth_gbytes)));
  return memo_time_;
}

Time HostMemory::access(Time t, uint64_t bytes) {
  const Time start = std::max(t, free_);
  const Time xfer = transfer_time(bytes);
  free_ = start + xfer;
  busy_ += xfer;
  ++accesses_;
  bytes_ += bytes;
  return start + cfg_.latency + xfer;
}

Time HostMemory::access_run(Time first, Time step, uint64_t k, uint64_t bytes) {
  if (k == 0) return first;
  // start_i = max(first + i step, start_(i-1) + x), start_0 = max(first, free_): unrolled, the
  // last starts at max(first + (k-1) step, start_0 + (k-1) x).
  const Time xfer = transfer_time(bytes);
  const auto m = static_cast<int64_t>(k - 1);
  const Time start = std::max(first + step * m, std::max(first, free_) + xfer * m);
  free_ = start + xfer;
  busy_ += xfer * static_cast<int64_t>(k);
  accesses_ += k;
  bytes_ += k * bytes;
  return start + cfg_.latency + xfer;
}

void HostMemory::write(uint64_t addr, const uint8_t* data, uint64_t n) {
  while (n > 0) {
    const uint64_t off = addr % kPage, k = std::min(n, kPage - off);
    auto& page = pages_[addr / kPage];
    if (!page) page = std::make_unique<Page>(Page{});
    std::memcpy(page->data() + off, data, k);
    addr += k;
    data += k;
    n -= k;
  }
}

void HostMemory::read(uint64_t addr, uint8_t* data, uint64_t n) const {
  while (n > 0) {
    const uint64_t off = addr % kPage, k = std::min(n, kPage - off);
    const auto it = pages_.find(addr / kPage);
    if (it == pages_.end())
      std::memset(data, 0, k);
    else
      std::memcpy(data, it->second->data() + off, k);
    addr += k;
    data += k;
    n -= k;
  }
}

}  // namespace fabricsim::tlm_host
