// The NIC's host interface as a SystemC module: its BAR (a TLM-2.0 target socket: doorbells) and
// its DMA initiator socket, driving the WQE fetch stage (wqe_fetcher.h) and writing CQEs.
//
// Hardware: the PCIe-facing front of an RDMA NIC. BAR layout: QP n's send doorbell at offset
// n x 8 (a 4 or 8 B write whose low 32 bits are the new producer index); other accesses answer
// TLM_ADDRESS_ERROR_RESPONSE. WQE reads go out as soon as a doorbell has taken effect
// (doorbell_latency after its arrival) and the fetch stage allows (max_outstanding, one per QP);
// each read's WQEs are handed to the next stage when its last completion has arrived. CQEs are
// written one after another, in the order work completes. Timing: the DMA calls are loosely timed
// (tlm/pcie_tlm.h); the module's two processes wait for the times the calls return, so what the
// next stage sees is in simulated time order.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/nic/wqe_fetcher.h"

namespace fabricsim::nic {

class NicHostInterface : public sc_core::sc_module {
 public:
  static constexpr uint64_t kDoorbellStride = 8;

  tlm_utils::simple_target_socket<NicHostInterface> bar;
  tlm_utils::simple_initiator_socket<NicHostInterface> dma;

  SC_HAS_PROCESS(NicHostInterface);
  NicHostInterface(sc_core::sc_module_name name, const WqeFetchConfig& cfg);

  WqeFetcher& fetcher() { return fetcher_; }
  const WqeFetcher& fetcher() const { return fetcher_; }
  // The next stage (the QP scheduler): each fetched WQE, at the simulated time it is available.
  void on_wqe(std::function<void(const Wqe&, Time)> handler) { handler_ = std::move(handler); }
  // Work done: its CQE goes to the QP's completion ring by DMA (the owner bit is set here).
  void complete(const Cqe& c);

  uint64_t dma_errors() const { return dma_errors_; }
  uint64_t bar_errors() const { return bar_errors_; }
  // End of run: work rung for but never fetched, fetches or CQEs still in flight.
  std::vector<std::string> check_idle() const;

 private:
  void bar_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void fetch_loop();
  void cqe_loop();

  struct Doorbell {
    Time at;
    uint32_t qpn, producer;
  };
  struct InFlight {
    Time done;
    WqeFetcher::Fetch f;
    std::vector<uint8_t> bytes;
  };
  WqeFetchConfig cfg_;
  WqeFetcher fetcher_;
  std::function<void(const Wqe&, Time)> handler_;
  std::deque<Doorbell> doorbells_;  // by the time they take effect
  std::vector<InFlight> in_flight_;
  std::deque<Cqe> cqes_;
  std::vector<Wqe> wqes_;  // reused per read
  std::vector<uint32_t> bad_;
  sc_core::sc_event work_, cqe_work_;
  uint64_t dma_errors_ = 0, bar_errors_ = 0;
};

}  // namespace fabricsim::nic
