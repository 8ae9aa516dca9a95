// TLM-2.0 modules of the host side: host memory as a target, and a PCIe link between a device
// (the RDMA NIC) and its host, usable from a user's own sc_main next to other TLM models.
//
// Coding style: loosely timed, blocking transport with annotated delays (no wait() inside). A
// DMA of many TLPs is one b_transport call whose delay says when it is done; the link and the
// memory book their bandwidth in the order calls arrive, so concurrent DMAs share them. Why not
// approximately timed: a NIC moves data in TLPs of 256 B, and an AT model would cost kernel
// events per TLP phase (~100 ns of host time each, toolchain-notes.md) where this costs a few
// arithmetic steps per TLP; what an architect asks of PCIe here (bandwidth share, read latency)
// the booking gives exactly as long as initiators call in time order (an initiator running ahead
// of the others by a quantum books the link early by up to that quantum; keep quanta below a
// TLP's time where that matters, or call from SC_THREADs that wait() their delays).
// The SystemC time resolution must be 1 fs (fabricsim's time base): the constructors check.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "tlm/host_memory.h"
#include "tlm/pcie_link.h"

namespace fabricsim::tlm_host {

// Host memory behind a TLM-2.0 target socket: reads and writes with data, timed by HostMemory
// (the delay returned: when the last byte is read or written); transport_dbg for untimed access.
class HostMemoryTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HostMemoryTarget> socket;

  HostMemoryTarget(sc_core::sc_module_name name, const HostMemoryConfig& cfg);
  HostMemory& memory() { return mem_; }

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& p);
  HostMemory mem_;
};

// The PCIe link as an interconnect. Device to host: the device's DMA initiator binds `dma_in`,
// host memory (or a root-complex model) binds to `host_out`. Host to device: the host's driver
// binds `mmio_in` (doorbells, CSRs), the device's BAR target binds to `bar_out`. Writes are
// posted: the initiator's delay ends when the last TLP has left, and the target sees each TLP
// (at most max_payload bytes) at its arrival. Reads: the delay ends when the last completion has
// arrived; the target sees each request (split at max_read_request) at its arrival (plus the root
// complex's completer latency on the host side).
class PcieLinkModule : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<PcieLinkModule> dma_in;
  tlm_utils::simple_initiator_socket<PcieLinkModule> host_out;
  tlm_utils::simple_target_socket<PcieLinkModule> mmio_in;
  tlm_utils::simple_initiator_socket<PcieLinkModule> bar_out;

  PcieLinkModule(sc_core::sc_module_name name, const PcieConfig& cfg);
  const PcieLink& link() const { return link_; }

 private:
  void to_host(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void to_device(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void forward(PcieLink::Dir d, tlm_utils::simple_initiator_socket<PcieLinkModule>& out,
               Time completer, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned int dbg_to_host(tlm::tlm_generic_payload& p) { return host_out->transport_dbg(p); }
  unsigned int dbg_to_device(tlm::tlm_generic_payload& p) { return bar_out->transport_dbg(p); }
  PcieLink link_;
};

}  // namespace fabricsim::tlm_host
