// The NIC's DMA port (models/common/dma_port.h) on the PCIe link and host memory cores, called
// directly: the same timing as PcieLinkModule + HostMemoryTarget (pcie_tlm.h) give through TLM
// (each write TLP reaches memory at its arrival, each read request at its arrival plus the
// completer latency), without SystemC. For fabric runs, where a NIC per host must not cost
// kernel events; tlm_dma checks that both paths give the same times. A null buffer moves no
// bytes, only time: a fabric NIC's payload is not materialised (models/nic/nic.h).
#pragma once

#include "models/common/dma_port.h"
#include "tlm/host_memory.h"
#include "tlm/pcie_link.h"

namespace fabricsim::tlm_host {

class DirectDma : public DmaPort {
 public:
  // The link and memory are the caller's (several ports may share a memory).
  DirectDma(PcieLink& link, HostMemory& memory) : link_(link), mem_(memory) {}

  Time read(Time t, uint64_t addr, uint64_t n, uint8_t* dst) override {
    const Time completer = link_.config().completer_latency;
    return link_.read(PcieLink::kToHost, t, addr, n, [&](Time arrival, uint64_t a, uint64_t k) {
      if (dst) mem_.read(a, dst + (a - addr), k);
      return mem_.access(arrival + completer, k);
    });
  }
  Time write(Time t, uint64_t addr, uint64_t n, const uint8_t* src) override {
    if (!src)  // time only: the TLPs' memory accesses booked a run at a time
      return link_
          .write_runs(PcieLink::kToHost, t, addr, n,
                      [&](Time first, Time step, uint64_t k, uint64_t bytes) {
                        mem_.access_run(first, step, k, bytes);
                      })
          .left;
    return link_
        .write(PcieLink::kToHost, t, addr, n,
               [&](const PcieLink::Sent& tlp, uint64_t a, uint64_t k) {
                 if (src) mem_.write(a, src + (a - addr), k);
                 mem_.access(tlp.arrived, k);
               })
        .left;
  }

 private:
  PcieLink& link_;
  HostMemory& mem_;
};

}  // namespace fabricsim::tlm_host
