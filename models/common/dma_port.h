// How a device's blocks (the NIC's) reach host memory: DMA reads and writes that say when they
// are done.
//
// Not hardware by itself: the seam between the NIC model and whatever stands for the host, below
// both (models/nic and tlm/ include it; neither includes the other for it). In a
// fabric run it is tlm/direct_dma.h (the PCIe link and host memory cores called directly, no
// SystemC events, so a thousand NICs cost no process switches); in a user's virtual platform an
// adapter to the TLM-2.0 sockets (tlm/pcie_tlm.h) can implement it. Calls must come in time
// order per port (the link and memory book their bandwidth in call order).
#pragma once

#include <cstdint>

#include "models/common/units.h"

namespace fabricsim {

class DmaPort {
 public:
  virtual ~DmaPort() = default;
  // Reads [addr, addr + n) into `dst`, asked at `t`: returns when the last byte has arrived.
  virtual Time read(Time t, uint64_t addr, uint64_t n, uint8_t* dst) = 0;
  // Writes `n` bytes from `src` to [addr, addr + n), posted at `t`: returns when the last byte
  // has left the device (the data is in host memory from its arrival on).
  virtual Time write(Time t, uint64_t addr, uint64_t n, const uint8_t* src) = 0;
};

}  // namespace fabricsim
