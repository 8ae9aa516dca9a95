// The NIC's doorbell and work-queue-entry fetch stage, in plain C++ (its SystemC module with the
// BAR and DMA sockets: nic_host_interface.h).
//
// Hardware: the front of an RDMA NIC's send path. The driver rings a QP's doorbell with its new
// producer index; the NIC reads the WQEs between its own consumer index and that producer index
// from the QP's ring in host memory by DMA, at most `max_batch` WQEs (contiguous in the ring) per
// read, one read in flight per QP and at most `max_outstanding` over all QPs, the QPs with work
// served round robin. It then writes a CQE per completed signaled WQE into the QP's completion
// ring, with the ring pass's owner bit. Parameters that matter: max_batch (DMA reads per WQE),
// max_outstanding (fetch throughput under PCIe latency), doorbell_latency. Not modelled yet:
// WQEs pushed with the doorbell (BlueFlame-style inline writes), CQ overflow (the driver's CQ
// consumer index is not known to the NIC), receive queues.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "models/common/units.h"
#include "models/config/config.h"
#include "models/nic/work_queue_format.h"

namespace fabricsim::nic {

struct WqeFetchConfig : config::Configurable {
  int64_t max_batch = 8;
  int64_t max_outstanding = 16;
  int64_t max_qps = 1024;
  Time doorbell_latency;

  void visit(config::Visitor& v) override;
};

class WqeFetcher {
 public:
  explicit WqeFetcher(const WqeFetchConfig& cfg);

  // The driver's control path (untimed, like a verbs create_qp): a QP's send ring (64 B WQEs) and
  // completion ring (32 B CQEs), each a power of two entries. Returns its qpn; throws
  // std::invalid_argument for a bad ring or more than max_qps QPs.
  uint32_t create_qp(uint64_t sq_base, uint32_t sq_entries, uint64_t cq_base, uint32_t cq_entries);
  uint32_t qps() const { return static_cast<uint32_t>(qps_.size()); }

  // A doorbell: QP `qpn`'s new producer index. False, counted in bad_doorbells() and otherwise
  // ignored (as the hardware would, raising an async error), for an unknown QP or an index behind
  // the last one or more than a ring ahead of what was fetched.
  bool doorbell(uint32_t qpn, uint32_t producer);

  struct Fetch {
    uint32_t qpn = 0;
    uint32_t first = 0;  // ring index of its first WQE
    uint32_t count = 0;
    uint64_t address = 0;
    uint32_t bytes() const { return count * Wqe::kBytes; }
  };
  // The next DMA read to issue, or none (no QP with unfetched WQEs and no read in flight, or
  // max_outstanding reads in flight).
  std::optional<Fetch> next_fetch();
  // A read's bytes arrived: appends its WQEs to `out`; a slot that does not decode (a driver
  // bug) is counted in bad_wqes() and appended to `bad` as its ring index.
  void fetched(const Fetch& f, const uint8_t* bytes, std::vector<Wqe>& out,
               std::vector<uint32_t>& bad);

  // Where QP `qpn`'s next CQE goes, with its owner bit (and moves past it).
  struct CqSlot {
    uint64_t address;
    uint8_t owner;
  };
  CqSlot next_cqe(uint32_t qpn);

  uint64_t doorbells() const { return doorbells_; }
  uint64_t bad_doorbells() const { return bad_doorbells_; }
  uint64_t fetches() const { return fetches_; }
  uint64_t wqes_fetched() const { return wqes_fetched_; }
  uint64_t bad_wqes() const { return bad_wqes_; }
  uint64_t cqes() const { return cqes_; }
  int outstanding() const { return outstanding_; }
  // WQEs rung for but not fetched yet, over all QPs.
  uint64_t pending() const;

 private:
  struct Qp {
    Ring sq, cq;
    uint32_t producer = 0, fetched = 0, cq_index = 0;
    bool in_flight = false, ready = false;  // a read in flight; in ready_
  };
  void make_ready(uint32_t qpn);

  WqeFetchConfig cfg_;
  std::vector<Qp> qps_;
  std::deque<uint32_t> ready_;  // QPs with unfetched WQEs and no read in flight, round robin
  int outstanding_ = 0;
  uint64_t doorbells_ = 0, bad_doorbells_ = 0, fetches_ = 0, wqes_fetched_ = 0, bad_wqes_ = 0,
           cqes_ = 0;
};

}  // namespace fabricsim::nic
