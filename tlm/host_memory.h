// Host memory as a DMA target sees it: one shared bandwidth and a latency per access, and the
// bytes themselves (sparse, so a NIC's rings and buffers anywhere in a 64-bit space cost only the
// pages written).
//
// Hardware: the DRAM behind a root complex. Parameters that matter: bandwidth (all accesses share
// it, one after another in the order they start) and latency (from an access's start to its first
// byte; accesses overlap in their latency, not in their transfer). Plain C++: the TLM-2.0 target
// around it is HostMemoryTarget (pcie_tlm.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "models/common/units.h"
#include "tlm/pcie_config.h"

namespace fabricsim::tlm_host {

class HostMemory {
 public:
  explicit HostMemory(const HostMemoryConfig& cfg);

  // Books an access of `bytes` that may start at `t` (after the accesses booked before it):
  // returns when its last byte has been read or written.
  Time access(Time t, uint64_t bytes);
  // `k` accesses of `bytes` each, the i-th able to start at first + i x step, booked as k calls
  // of access() in turn would book them (in closed form: a 4 KB packet's write is 16 TLPs);
  // returns what the last call would.
  Time access_run(Time first, Time step, uint64_t k, uint64_t bytes);
  // Time to transfer `bytes` at the memory's bandwidth (rounded up to a femtosecond).
  Time transfer_time(uint64_t bytes) const;

  void write(uint64_t addr, const uint8_t* data, uint64_t n);
  void read(uint64_t addr, uint8_t* data, uint64_t n) const;  // never-written bytes read as 0

  uint64_t accesses() const { return accesses_; }
  uint64_t bytes() const { return bytes_; }
  Time busy() const { return busy_; }  // time spent transferring

 private:
  static constexpr uint64_t kPage = 4096;
  using Page = std::array<uint8_t, kPage>;
  HostMemoryConfig cfg_;
  Time free_;  // the bandwidth is free from then
  uint64_t accesses_ = 0, bytes_ = 0;
  Time busy_;
  // The last size timed and its time (a NIC's reads are mostly of one size): saves a ceil.
  mutable uint64_t memo_bytes_ = UINT64_MAX;
  mutable Time memo_time_;
  std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
};

}  // namespace fabricsim::tlm_host
