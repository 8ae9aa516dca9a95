// A complete run configuration: one YAML file = one design point.
//
//   sim:     duration, warm-up, seed, drain limit
//   switch:  the chip (models/switch/switch_config.h), instantiated once per switch
//   topology: how many switches, where the hosts attach, the links (models/topology/)
//   link:    every link's PHY and cable (models/link/phy_config.h)
//   flow_control: none, PFC or IB credits, and ECN (models/link/flow_control.h)
//   traffic: what the endpoints send (models/traffic/traffic_source.h)
//   stats:   what is recorded
#pragma once

#include <string>

#include "models/config/config.h"
#include "models/link/flow_control.h"
#include "models/link/phy_config.h"
#include "models/switch/switch_config.h"
#include "models/topology/topology_config.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::sim {

struct SimConfig : config::Configurable {
  Time duration;  // total, including warm-up
  Time warmup;
  int64_t seed = 1;
  Time drain_limit;            // after `duration`, how long to wait for measured packets to leave
  bool traffic_thread = true;  // and the hosts' receive statistics
  void visit(config::Visitor& v) override;
};

struct StatsConfig : config::Configurable {
  Time occupancy_interval;
  int64_t histogram_bits = 10;
  std::string per_port_counters;  // auto | all | none
  void visit(config::Visitor& v) override;
  // Fabrics with at most this many switch ports write per-port counters under `auto`.
  static constexpr int64_t kPerPortCountersAutoPorts = 1024;
  // Whether summary.json's `counters` holds per-port statistics in a fabric of `switch_ports`.
  bool per_port(int64_t switch_ports) const {
    return per_port_counters == "all" ||
           (per_port_counters == "auto" && switch_ports <= kPerPortCountersAutoPorts);
  }
};

struct RunConfig : config::Configurable {
  SimConfig sim;
  sw::SwitchConfig sw;
  topo::TopologyConfig topology;
  link::LinkConfig link;
  link::FlowControlConfig flow_control;
  traffic::TrafficConfig traffic;
  StatsConfig stats;
  std::string source_path;  // the YAML file this came from ("" for defaults)

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;

  // PFC headroom per lossless (port, priority), sized for the links (flow_control.pfc.
  // headroom_formula) and scaled by pfc_cell_expansion(), since the switch charges whole cells
  // (a fixed headroom is taken as given).
  Bytes pfc_headroom() const;
  double pfc_cell_expansion() const;
  // The largest packet the network can carry: a switch's whole buffer, or with credits one VL's
  // receive buffer (a larger packet would wait for credits forever).
  traffic::PacketLimit packet_limit() const;

  // Loads `path` with `overrides` ("key=value"); throws config::ConfigError (an InputError).
  static RunConfig load(const std::string& path, const std::vector<std::string>& overrides);
};

}  // namespace fabricsim::sim
