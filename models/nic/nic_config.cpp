#include "models/nic/nic_config.h"

#include <stdexcept>

#include "models/link/crc32.h"
#include "models/nic/congestion_control.h"
#include "models/nic/psn_tracker.h"

namespace fabricsim::nic {

CcSections::CcSections() {
  const CcRegistry& r = CcRegistry::global();
  for (const std::string& n : r.names()) s_.emplace_back(n, r.at(n).make_config());
}

CcSections::CcSections(const CcSections& o) : CcSections() {
  *this = o;
}

CcSections& CcSections::operator=(const CcSections& o) {
  for (size_t i = 0; i < s_.size(); ++i) config::copy_values(*o.s_[i].second, *s_[i].second);
  return *this;
}

void CcSections::visit(config::Visitor& v) {
  const CcRegistry& r = CcRegistry::global();
  for (auto& [name, c] : s_) {
    config::visit_section(v, name, "nic.cc " + name + ": " + r.at(name).description, *c);
  }
}

const config::Configurable& CcSections::at(const std::string& name) const {
  for (const auto& [n, c] : s_)
    if (n == name) return *c;
  throw std::invalid_argument("congestion control " + name + " is not registered");
}

void CcSections::validate(const config::Checker& c) const {
  for (const auto& [name, section] : s_) section->validate(c.under(name));
}

bool NicConfig::telemetry() const {
  return cc != "none" && CcRegistry::global().at(cc).telemetry;
}

bool NicConfig::ack_each_packet() const {
  if (cc == "none") return false;
  const CcEntry& e = CcRegistry::global().at(cc);
  return e.telemetry || (e.ack_each_packet && e.ack_each_packet(cc_params.at(cc)));
}

bool NicConfig::data_ect(bool traffic_ect) const {
  return (cc != "none" && CcRegistry::global().at(cc).reads_ecn) || traffic_ect;
}

bool NicConfig::cnp_acts() const {
  if (cc == "none") return false;
  const CcEntry& e = CcRegistry::global().at(cc);
  return e.reacts_to_cnp && (!e.np_interval || e.np_interval(cc_params.at(cc)) == Time::max());
}

Time NicConfig::cnp_interval() const {
  if (cc == "none") return cnp.interval;
  const CcEntry& e = CcRegistry::global().at(cc);
  const Time t = e.np_interval ? e.np_interval(cc_params.at(cc)) : Time::max();
  return t == Time::max() ? cnp.interval : t;
}

void NicConfig::visit(config::Visitor& v) {
  v.param("enabled", enabled, false,
          "An RDMA NIC at every host (models/nic/nic.h): traffic becomes messages "
          "(traffic.message_size, or traffic.pattern messages), carried by the RC transport "
          "with ACKs, retransmission and congestion control. Default false: open-loop packet "
          "sources.");
  v.choice("transport", transport, "go_back_n", {"go_back_n", "selective_repeat", "rud"},
           "Loss recovery: go_back_n (RC as RoCE NICs without selective repeat run it: a NAK "
           "or timeout resends from the lost packet on), selective_repeat (IRN style: only "
           "lost packets again, out-of-order placement) or rud (UEC-style reliable unordered "
           "delivery, models/nic/rud_transport.h: a new entropy per packet, so switches hashing "
           "entropy spray it; per-packet SACKs, a reorder allowance nic.rud.reorder_threshold, "
           "NACKs for trimmed packets; windows and timer from nic.rc).");
  const PsnTrackerRegistry& trackers = PsnTrackerRegistry::global();
  v.choice("rx_impl", rx_impl, PsnTrackerRegistry::kModel, trackers.names(),
           trackers.doc() + " Any transport; other than model, one instance per QP (up to " +
               std::to_string(PsnTrackerIf::kMaxRange) + " PSNs placed ahead: nic.rc.window).");
  v.choice("crc_impl", crc_impl, link::Crc32Registry::kModel, link::Crc32Registry::global().names(),
           "The sender's payload CRC (the CRC-32 each packet carries for its payload, "
           "payload_digest.h): model, the byte-wise function; another, a registered CRC-32 "
           "datapath, one per NIC (rtl: the Verilated rtl/crc32_stream.sv, 8 bytes per clock). "
           "Receivers check the sums against the function, so a datapath that differs fails the "
           "run's integrity check.");
  std::vector<std::string> ccs = CcRegistry::global().names();
  v.choice("cc", cc, "none", ccs,
           "Congestion control of every QP, a registered algorithm (its keys: nic.<name>.*); "
           "none keeps line rate.");
  v.param("qps_per_pair", qps_per_pair, 1, 1, 256, "QPs",
          "Connections (QPs) between each pair of NICs that exchange messages; a message's qp "
          "field picks one.");
  v.param("max_reads", max_reads, 32, 1, 4096, "reads",
          "Payload DMA reads (one per packet) a QP keeps in flight ahead of the wire: with PCIe "
          "latency L and a packet's wire time w, fewer than L / w of them cap the QP below line "
          "rate [S].");
  v.param("max_reads_nic", max_reads_nic, 0, 0, 1 << 20, "reads",
          "Payload read ahead of the wire over all the NIC's QPs at once (packets read or being "
          "read, not yet sent: the NIC's transmit staging); a QP that wants more waits its turn, "
          "first come first served. 0 (default): no NIC-wide limit, nic.max_reads per QP only "
          "(a NIC with a thousand busy QPs then stages 32 packets for each). READ responses "
          "count per QP only.");
  v.param("doorbell_latency", doorbell_latency, Time::ns(20), Time(), Time::us(10),
          "From a doorbell's arrival at the NIC's BAR to its WQE fetch request [S].");
  v.param("max_inline", max_inline, 0, 0, 1024, "B",
          "Inline data: a SEND or WRITE of at most this many bytes travels inside its WQE, which "
          "the driver writes to the NIC's BAR with the doorbell (mlx5's BlueFlame, 64 B blocks: "
          "32 B of control and remote-address segments, a 4 B inline header, the data): no WQE "
          "fetch, no payload read. 0 (default): none, as NCCL posts (it asks no inline data); "
          "perftest's ib_write_lat asks 220 B [V].");
  v.param("tx_pipeline", tx_pipeline, Time(), Time(), Time::us(10),
          "The NIC's send processing: from a packet's payload in the NIC (its DMA read landed, "
          "or inline) to the packet being ready for the QP arbiter. Not published per NIC; 0 "
          "(default) is a finding, not a fact: sweep it [S].");
  v.param("rx_pipeline", rx_pipeline, Time(), Time(), Time::us(10),
          "The NIC's receive processing: from a packet's last bit in to the responder taking it "
          "(placement, ACK, CNP) or the requester reading its ACK. Not published per NIC; 0 "
          "(default) is a finding, not a fact: sweep it [S].");
  v.param("rate_trace_interval", rate_trace_interval, Time(), Time(), Time::us(1000000),
          "Sample every QP's pacer rate this often into qp_rates.csv (DCQCN's saw-tooth); 0 = "
          "off.");
  const auto section = [&v](const char* name, const char* doc, config::Configurable& part) {
    config::visit_section(v, name, doc, part);
  };
  // RUD acknowledges every packet and carries no READ; its keys are its own.
  for (const char* key : {"rc.ack_every", "rc.max_reads_outstanding"})
    v.applies_when(key, "{transport}: go_back_n or selective_repeat",
                   [this] { return transport != "rud"; });
  v.applies_when("rud", "{transport}: rud", [this] { return transport == "rud"; });
  section("packet", "the packetizer: MTU and header stack (models/nic/packetizer.h)", packet);
  section("rc", "the RC transport (models/nic/rc_transport.h)", rc);
  section("rud", "the RUD transport (models/nic/rud_transport.h)", rud);
  section("scheduler", "the QP arbiter (models/nic/qp_scheduler.h)", scheduler);
  // CNPs act on a rate only where the algorithm reacts to them (others' receivers may still send
  // them, ECN-capable packets drawing them, but nothing reads them), at this key's spacing unless
  // the algorithm's named profile sets its own (np_interval; `profile: custom` takes this key's).
  std::string cnp_when;
  for (const std::string& name : ccs) {
    const CcEntry& e = CcRegistry::global().at(name);
    if (!e.reacts_to_cnp) continue;
    cnp_when += (cnp_when.empty() ? "" : ", or ") + std::string("{cc}: ") + name;
    if (e.np_interval) cnp_when += " with {" + name + ".profile}: custom";
  }
  v.applies_when("cnp", cnp_when + " (a congestion control that reacts to CNPs)",
                 [this] { return cnp_acts(); });
  section("cnp", "DCQCN's notification point (models/nic/cnp_generator.h)", cnp);
  section("pcie", "the NIC's PCIe link to its host (tlm/pcie_config.h)", pcie);
  section("memory", "the host's memory as the NIC's DMA sees it (tlm/pcie_config.h)", memory);
  // Each algorithm's section acts when it is the one chosen.
  for (const std::string& name : ccs)
    v.applies_when(name, "{cc}: " + name, [this, name] { return cc == name; });
  cc_params.visit(v);
}

void NicConfig::validate(const config::Checker& c) const {
  packet.validate(c.under("packet"));
  rc.validate(c.under("rc"));
  // A RUD ACK names its SACK block in 5 bits: the window must fit 32 blocks of 32 PSNs.
  if (transport == "rud")
    c.require(rc.window <= int64_t{RudRequester::kSackBits} * RudRequester::kMaxBlocks, "rc.window",
              std::to_string(rc.window) +
                  " packets is more than the rud transport's SACK reaches (1024: 32 blocks of "
                  "32 PSNs)");
  // A registered tracker holds kMaxRange PSNs ahead of the expected one (the RTL's bitmap).
  if (rx_impl != PsnTrackerRegistry::kModel && transport != "go_back_n")
    c.require(rc.window_for(false) <= PsnTrackerIf::kMaxRange, "rc.window",
              std::to_string(rc.window_for(false)) +
                  " PSNs placed ahead is more than nic.rx_impl " + rx_impl + " holds (" +
                  std::to_string(PsnTrackerIf::kMaxRange) + ")");
  // An algorithm that reads ECN echoed on coalesced ACKs (NSCC) needs RUD's SACKs and NACKs.
  if (cc != "none") {
    const CcEntry& e = CcRegistry::global().at(cc);
    if ((e.ecn_echo || e.ack_bytes > 0) && transport != "rud")
      c.fail("cc", cc +
                       " runs on nic.transport: rud only (its ACKs echo ECN marks and come every " +
                       std::to_string(e.ack_bytes) + " B, which RUD's SACKs and NACKs allow); " +
                       "transport is " + transport);
  }
  pcie.validate(c.under("pcie"));
  memory.validate(c.under("memory"));
  cc_params.validate(c);
  // A profile that sets the notification point's spacing leaves nic.cnp.interval nothing to do.
  if (cnp_interval() != cnp.interval)
    c.require(cnp.interval == CnpConfig::kDefaultInterval, "cnp.interval",
              "applies only when nic." + cc +
                  ".profile is custom (the profile sets the CNP spacing: " +
                  (cnp_interval() == Time() ? std::string("a CNP for every marked packet")
                                            : cnp_interval().str()) +
                  ")");
}

}  // namespace fabricsim::nic
