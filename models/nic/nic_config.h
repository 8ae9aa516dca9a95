// The `nic:` section of a run: an RDMA NIC at every host instead of an open-loop packet source.
//
// Hardware: what models/nic/nic.h puts together, every host's NIC alike: its packetizer (MTU,
// header stack), RC transport with go-back-N or selective repeat or the UEC-style RUD transport
// (rud_transport.h), QP arbiter, congestion control
// (a registered algorithm, with its own section named after it: `nic.dcqcn.*`), the DCQCN
// notification point (CNP interval), and its host side: a PCIe link and host memory
// (tlm/pcie_config.h), the doorbell's latency and how many payload reads it keeps in flight.
// The traffic it carries is messages (traffic.pattern and traffic.message_size, or a message
// file: models/nic/message_workload.h). Defaults: a 400G ConnectX-7 class NIC on PCIe Gen5 x16
// (configs/nic_400g.yaml states them with their sources).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/config/config.h"
#include "models/nic/cnp_generator.h"
#include "models/nic/packetizer.h"
#include "models/nic/qp_scheduler.h"
#include "models/nic/rc_transport.h"
#include "models/nic/rud_transport.h"
#include "tlm/pcie_config.h"

namespace fabricsim::nic {

// Each registered congestion control's own section (CcRegistry), copied deeply with the config.
class CcSections {
 public:
  CcSections();
  CcSections(const CcSections& o);
  CcSections& operator=(const CcSections& o);
  void visit(config::Visitor& v);
  const config::Configurable& at(const std::string& name) const;
  // Each algorithm's own checks of its section (nic.<name>).
  void validate(const config::Checker& c) const;

 private:
  std::vector<std::pair<std::string, std::unique_ptr<config::Configurable>>> s_;
};

struct NicConfig : config::Configurable {
  bool enabled = false;
  std::string transport;  // go_back_n | selective_repeat | rud
  std::string rx_impl;    // the responders' receive tracker: model | a registered one (rtl)
  std::string crc_impl;   // the sender's payload CRC: model (the function) | a registered datapath
  std::string cc;         // a registered congestion control
  int64_t qps_per_pair = 1;
  int64_t max_reads = 0;          // payload reads (one per packet) in flight per QP
  int64_t max_reads_nic = 0;      // over all the NIC's QPs (0: no NIC-wide limit)
  Time doorbell_latency;          // the NIC's doorbell handling, after the MMIO write arrives
  int64_t max_inline = 0;         // messages up to this many bytes go inline with the WQE (0: none)
  Time tx_pipeline, rx_pipeline;  // the NIC's own send and receive processing
  Time rate_trace_interval;
  PacketizerConfig packet;
  RcConfig rc;
  RudConfig rud;
  QpSchedulerConfig scheduler;
  CnpConfig cnp;
  tlm_host::PcieConfig pcie;
  tlm_host::HostMemoryConfig memory;
  CcSections cc_params;

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
  // Whether nic.cnp acts on a rate: the congestion control reacts to CNPs and takes their spacing
  // from nic.cnp.interval (not from its profile).
  bool cnp_acts() const;
  // The receiver's CNP spacing in effect: the congestion control's profile's, else cnp.interval.
  Time cnp_interval() const;
  // Whether the NICs' data packets are ECN-capable: a congestion control that reads ECN marks
  // (not one that reads delay or in-band telemetry instead), or traffic.ect.
  bool data_ect(bool traffic_ect) const;
  // Whether the congestion control reads in-band telemetry (its packets carry an INT header).
  bool telemetry() const;
  // Whether every data packet asks for an ACK: telemetry, or the congestion control's profile.
  bool ack_each_packet() const;
};

}  // namespace fabricsim::nic
