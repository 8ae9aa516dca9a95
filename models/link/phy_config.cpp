#include "models/link/phy_config.h"

#include <cmath>

namespace fabricsim::link {

namespace {

std::string fmt_reach(double m) {
  std::string s = std::to_string(m);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + " m";
}

}  // namespace

void PortPhyConfig::visit(config::Visitor& v) {
  v.param("lanes", lanes, 8, 1, 64, "lanes",
          "SerDes lanes of the port (800GBASE-R: 8 x 106.25G [V2]).");
  v.param("lane_rate", lane_rate, BitRate::bps(106250000000ull), BitRate::gbps(1),
          BitRate::gbps(500), "Signalling rate of one lane (PAM4 106.25G or 212.5G [V2]).");
  v.param("breakout", breakout, 1, 1, 64, "sub-ports",
          "Sub-ports the port is split into, lanes / breakout lanes each (800G as 2 x 400G: 2).");
  v.choice("fec", fec, "rs544", {"rs544", "rs528", "none"},
           "rs544: RS(544,514) KP4, t=15 [V2]; rs528: RS(528,514) KR4, t=7 [V2]; none: 64b/66b "
           "without FEC.");
  v.choice("framing", framing, "ethernet", {"ethernet", "infiniband"},
           "ethernet: 64 B minimum frame, 8 B preamble+SFD, 12 B IFG [R]; infiniband: 2 B of "
           "packet delimiters, no IFG [R].");
  v.param("fec_latency", fec_latency, Time::ns(100), Time(), Time::us(10),
          "One-way RS-FEC encode + decode latency (~100-120 ns, 802.3dj assumptions [V2]).");
  v.param("pcs_latency", pcs_latency, Time(), Time(), Time::us(10),
          "One-way PCS/PMA latency beyond the FEC figure; no public number, sweep it.");
  v.param("pre_fec_ber", pre_fec_ber, 0.0, 0.0, 0.5, "errors/bit",
          "Pre-FEC bit-error rate (independent errors); uncorrectable codewords drop frames.");
  v.begin_section("lane_failure", "One-time lane failure: the sub-port drops to fewer lanes.");
  v.param("lanes_left", fail_lanes_left, 0, 0, 64, "lanes",
          "Lanes per sub-port after the failure (rate scales with lanes); 0 = no failure.");
  v.param("time", fail_time, Time(), Time(), Time::max(),
          "Simulated time of the failure; frames starting at or after it use the lower rate.");
  v.param("host", fail_host, -1, -1, 1 << 20, "",
          "Whose link fails: the link of this host (both directions, and the switch port it "
          "attaches to); -1 = every link of the run.");
  v.end_section();
}

void PortPhyConfig::validate(const config::Checker& c) const {
  // Its only home is the `phy` section of `link:`, which names its keys even when it is loaded
  // on its own.
  check(c.under("phy"));
}

void PortPhyConfig::check(const config::Checker& c) const {
  c.require(lanes % breakout == 0, "breakout",
            std::to_string(breakout) + " does not divide the " + std::to_string(lanes) +
                " lanes of a port");
  c.require(fail_lanes_left < lanes / breakout, "lane_failure.lanes_left",
            "must be fewer than the " + std::to_string(lanes / breakout) + " lanes per sub-port");
}

FecType PortPhyConfig::fec_type() const {
  if (fec == "rs528") return FecType::kRs528;
  if (fec == "none") return FecType::kNone;
  return FecType::kRs544;
}

Framing PortPhyConfig::framing_type() const {
  return framing == "infiniband" ? Framing::kInfiniband : Framing::kEthernet;
}

WireFormat PortPhyConfig::wire_format() const {
  return WireFormat(lanes_per_subport(), lane_rate, fec_type(), framing_type());
}

WireFormat PortPhyConfig::degraded_wire_format() const {
  if (!lane_failure()) return wire_format();
  return WireFormat(static_cast<int>(fail_lanes_left), lane_rate, fec_type(), framing_type());
}

void LinkConfig::visit(config::Visitor& v) {
  v.choice("model", model, "phy", {"ideal", "phy"},
           "phy: links with the PHY below (framing overhead, FEC, latency, errors). ideal: frames "
           "back to back at switch.port_speed with no overhead, latency or errors (the "
           "cell-slotted switch of the queueing literature).");
  v.begin_section("phy", "PHY of both link ends.");
  phy.visit(v);
  v.end_section();
  v.param("length_m", length_m, 3.0, 0.0, 100000.0, "m",
          "Cable length (in-rack DAC ~1-3 m, optics to tens or hundreds of m); sweep it.");
  v.param("ns_per_m", ns_per_m, 5.0, 3.0, 10.0, "ns/m",
          "Propagation delay per metre: c / n with n ~1.47 for silica fibre gives 4.9 ns/m [R].");
  v.param("ib_fc_packet_bytes", ib_fc_packet_bytes, 8, 2, 64, "B",
          "Wire bytes of an IB flow-control packet: 6 B (op, FCTBS, VL, FCCL, LPCRC) + 2 B "
          "delimiters [R: IBTA Vol 1 7.9.4; V: Wireshark infiniband_link dissector fields].");
  v.list("port_lanes", port_lanes, {}, 1, 64, "lanes",
         "Breakout per switch port: the lanes of each port (one entry per switch port; each "
         "divides link.phy.lanes, rates scale with lanes: 8 x 106.25G = 800G, 4 = 400G, 1 = "
         "100G). An 800G port as 2 x 400G is two entries of 4. Empty: every port has "
         "link.phy.lanes / link.phy.breakout.");
  v.begin_section("optics",
                  "The module at each end of a cable, per link class: power (the run's energy "
                  "report), added latency and pre-FEC BER.");
  optics.visit(v);
  v.end_section();
  v.begin_section("llr", "Link-level retry: frames lost to bit errors replayed by the link.");
  llr.visit(v);
  v.end_section();
}

void LinkConfig::validate(const config::Checker& c) const {
  phy.check(c.under("phy"));
  for (double l : port_lanes)
    c.require(l == std::floor(l) && l >= 1 && phy.lanes_per_subport() % static_cast<int>(l) == 0,
              "port_lanes",
              "each entry must be a whole number of lanes dividing the " +
                  std::to_string(phy.lanes_per_subport()) + " lanes of a full port");
  // One cable length for both classes: each class's module must reach it.
  for (const auto& [key, name] :
       {std::pair{"optics.host", optics.host}, {"optics.fabric", optics.fabric}}) {
    const OpticsModule& m = optics_module(name);
    c.require(
        ideal() || length_m <= m.reach_m, key,
        name + " reaches " + fmt_reach(m.reach_m) + ", link.length_m is " + fmt_reach(length_m));
  }
}

LinkConfig LinkConfig::of_class(LinkClass c) const {
  LinkConfig lc = *this;
  const OpticsModule& m = optics.module(c);
  lc.module_latency = m.added_latency;
  if (m.pre_fec_ber >= 0) lc.phy.pre_fec_ber = m.pre_fec_ber;
  return lc;
}

Time LinkConfig::propagation() const {
  return Time::fs(std::llround(length_m * ns_per_m * 1e6));
}

}  // namespace fabricsim::link
