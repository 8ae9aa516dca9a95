// Configuration of a port's PHY (lanes, lane rate, breakout, FEC, latencies, error injection, lane
// failure) and of a link between two ports (length, propagation, control frames, queues).
//
// Defaults describe an 800GBASE-R port: 8 x 106.25G PAM4 lanes with RS(544,514) FEC, giving an
// 800 Gb/s MAC [V2: hardware-facts.md "Ethernet link layer"]. A port of N lanes may be broken out
// into k sub-ports of N/k lanes each (an 800G port as 2 x 400G or 8 x 100G); every sub-port is one
// link end. Parameters that matter: lanes per sub-port and lane rate (MAC rate), FEC type
// (overhead, correction strength t), the FEC/PCS latency and cable length (one-way latency), the
// pre-FEC BER (frame loss) and the lane-failure time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/units.h"
#include "models/config/config.h"
#include "models/link/llr.h"
#include "models/link/optics.h"
#include "models/link/wire_format.h"

namespace fabricsim::link {

struct PortPhyConfig : config::Configurable {
  int64_t lanes = 0;  // lanes of the whole port
  BitRate lane_rate;
  int64_t breakout = 1;  // sub-ports the port is split into
  std::string fec;       // rs544 | rs528 | none
  std::string framing;   // ethernet | infiniband
  Time fec_latency;      // one way, encode + decode
  Time pcs_latency;      // one way, PCS/PMA both ends
  double pre_fec_ber = 0;
  int64_t fail_lanes_left = 0;  // lanes per sub-port after the failure; 0 = no failure
  Time fail_time;
  int64_t fail_host = -1;  // the link of this host fails; -1 = every link

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
  // The checks, with `c` already in this section.
  void check(const config::Checker& c) const;

  FecType fec_type() const;
  Framing framing_type() const;
  int lanes_per_subport() const { return static_cast<int>(lanes / breakout); }
  bool lane_failure() const { return fail_lanes_left > 0; }
  // Wire format of one sub-port, healthy and after the lane failure.
  WireFormat wire_format() const;
  WireFormat degraded_wire_format() const;  // == wire_format() if no failure is configured
};

struct LinkConfig : config::Configurable {
  std::string model;  // ideal | phy
  PortPhyConfig phy;  // both ends use the same PHY settings
  // Breakout: lanes of each switch port (empty: every port has phy.lanes / phy.breakout).
  std::vector<double> port_lanes;
  double length_m = 0;
  double ns_per_m = 0;
  int64_t ib_fc_packet_bytes = 0;  // wire bytes of an IB flow-control packet, delimiters included
  OpticsConfig optics;             // the module at each end, per link class (optics.h)
  LlrConfig llr;                   // link-level retry (llr.h)
  Time module_latency;             // one module's added latency each way (set by of_class)

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;

  // `ideal`: frames back to back at the device's port speed, no framing overhead, no latency, no
  // errors (the cell-slotted switch of the queueing literature); `phy`: everything below.
  bool ideal() const { return model == "ideal"; }
  // Framing overhead every device port applies (none for an ideal link).
  FrameOverhead overhead() const {
    return ideal() ? FrameOverhead{} : phy.wire_format().overhead();
  }
  // Lanes of switch port `port` and its MAC rate, given the rate `full` of a port with all of
  // phy.lanes_per_subport() (rates scale with lanes).
  int lanes_of(int port) const {
    return port_lanes.empty() ? phy.lanes_per_subport() : static_cast<int>(port_lanes[port]);
  }
  BitRate port_rate(int port, BitRate full) const {
    return BitRate::bps(full.as_bps() / static_cast<uint64_t>(phy.lanes_per_subport()) *
                        static_cast<uint64_t>(lanes_of(port)));
  }
  // One-way latency of the link as the devices see it (0 for an ideal link).
  Time latency() const { return ideal() ? Time() : one_way_latency(); }
  // The configuration of a class's links: its module's added latency and pre-FEC BER applied.
  LinkConfig of_class(LinkClass c) const;
  Time latency(LinkClass c) const { return of_class(c).latency(); }
  ClassLatency class_latency() const {
    return {latency(LinkClass::kHost), latency(LinkClass::kFabric)};
  }
  // The shorter of the two classes' latencies (what bounds a window of run-ahead).
  Time min_latency() const {
    return std::min(latency(LinkClass::kHost), latency(LinkClass::kFabric));
  }
  // Propagation delay of the cable, rounded to the nearest fs.
  Time propagation() const;
  // Fixed one-way latency from the last bit leaving the sender's MAC to the last bit at the
  // receiver's MAC: propagation + FEC + PCS + the modules at both ends (of_class).
  Time one_way_latency() const {
    return propagation() + phy.fec_latency + phy.pcs_latency + module_latency + module_latency;
  }
};

}  // namespace fabricsim::link
