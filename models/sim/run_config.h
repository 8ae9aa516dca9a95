// A complete run configuration: one YAML file = one design point.
//
//   sim:     duration, warm-up, seed, drain limit
//   switch:  the chip (models/switch/switch_config.h), instantiated once per switch
//   switch_kinds: other named chips (a spine of more ports), each `switch:` with what differs
//   topology: how many switches, where the hosts attach, the links, which tier is which switch
//            kind (models/topology/)
//   link:    every link's PHY and cable (models/link/phy_config.h)
//   flow_control: none, PFC or IB credits, and ECN (models/link/flow_control.h)
//   traffic: what the endpoints send (models/traffic/traffic_source.h)
//   host:    the hosts' NICs: their transmit queues (models/host/host.h)
//   nic:     an RDMA NIC per host, carrying messages (models/nic/nic.h)
//   stats:   what is recorded
#pragma once

#include <string>
#include <vector>

#include "models/config/config.h"
#include "models/link/flow_control.h"
#include "models/link/phy_config.h"
#include "models/nic/nic_config.h"
#include "models/sim/box_config.h"
#include "models/switch/switch_config.h"
#include "models/topology/topology_config.h"
#include "models/traffic/traffic_source.h"
#include "models/workload/scale_up_config.h"
#include "models/workload/workload_config.h"

namespace fabricsim::sim {

struct SimConfig : config::Configurable {
  Time duration;  // total, including warm-up
  Time warmup;
  int64_t seed = 1;
  Time drain_limit;            // after `duration`, how long to wait for measured packets to leave
  bool traffic_thread = true;  // and the hosts' receive statistics
  Time stall_limit;            // liveness: longest stall of a switch port with work (0: off)
  bool lookahead = true;       // switches run ahead of the present by their links' lookahead
  bool host_windows = true;    // hosts and NICs run host by host through windows (fabric.h)
  int64_t threads = 1;         // > 1: the switches' windows on worker threads too (fabric.h)
  std::vector<double> partition;   // switches per side, side 0 first (empty: by cost)
  std::string rebalance = "auto";  // threads take the windows' switches as they are free (fabric.h)
  static constexpr int64_t kMaxThreads = 64;
  void visit(config::Visitor& v) override;
};

// The hosts' NICs (every host alike).
struct HostSection : config::Configurable {
  int64_t queue_limit = 0;  // packets per class transmit queue; 0 = unbounded
  void visit(config::Visitor& v) override;
  // As models/host/host.h takes it.
  uint32_t limit() const {
    return queue_limit == 0 ? UINT32_MAX : static_cast<uint32_t>(queue_limit);
  }
};

struct StatsConfig : config::Configurable {
  Time occupancy_interval;
  int64_t histogram_bits = 10;
  std::string per_port_counters;  // auto | all | none
  int64_t flow_events = 0;        // flow_events.csv: most records kept
  void visit(config::Visitor& v) override;
  // Fabrics with at most this many switch ports write per-port counters under `auto`.
  static constexpr int64_t kPerPortCountersAutoPorts = 1024;
  // Whether summary.json's `counters` holds per-port statistics in a fabric of `switch_ports`.
  bool per_port(int64_t switch_ports) const {
    return per_port_counters == "all" ||
           (per_port_counters == "auto" && switch_ports <= kPerPortCountersAutoPorts);
  }
};

// One element of `switch_kinds:`: a named chip. Its keys are the `switch:` keys, and every key it
// leaves out takes the `switch:` value (so a spine kind states only `ports: 128`).
struct SwitchKind : config::Configurable {
  std::string name;
  sw::SwitchConfig sw;
  BoxConfig box;  // box.leaves > 0: a multi-chip box (box_config.h)
  void visit(config::Visitor& v) override;
};

// A key the configuration gives that cannot act in it (RunConfig::inert_given).
struct InertKey {
  std::string key;    // "switch.scheduler.iterations"
  std::string where;  // "configs/switch_51t2.yaml:40" or "--set KEY=VALUE"
  std::string when;   // what it needs: "switch.architecture: voq or input_fifo (a crossbar)"
  std::string now;    // what it has: "switch.architecture is shared_memory"
};

struct RunConfig : config::Configurable {
  SimConfig sim;
  sw::SwitchConfig sw;
  std::vector<SwitchKind> switch_kinds;  // assigned to tiers by topology.kinds
  topo::TopologyConfig topology;
  link::LinkConfig link;
  link::FlowControlConfig flow_control;
  traffic::TrafficConfig traffic;
  HostSection host;
  nic::NicConfig nic;
  workload::WorkloadConfig workload;
  workload::ScaleUpConfig scale_up;  // GPUs on scale-up switches beside their NICs
  StatsConfig stats;
  std::string source_path;   // the YAML file this came from ("" for defaults)
  config::KeyOrigins given;  // the keys the file and the --set overrides gave, and where

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
  void declare_conditions(config::Visitor& v);

  // The tiers of switches of topology.kind (TopologyKind::tiers) and the chip of each: the switch
  // kind topology.kinds names for it (its index into switch_kinds), or -1 for `sw`; for a tier
  // of boxes, the chip its boxes are built from.
  size_t tiers() const;
  int tier_kind_index(size_t tier) const;
  // The box kind of tier `tier` (index into switch_kinds), or -1 when its switches are chips.
  int tier_box_index(size_t tier) const;
  // Per tier, its box's netlist (BoxSpec::leaves 0: no box); empty when no tier is a box.
  std::vector<topo::BoxSpec> box_specs() const;
  // The chip box kind `kind_index` is built from (-1: `sw`; -2: box.chip names no usable kind).
  int box_chip_index(int kind_index) const;
  const sw::SwitchConfig& tier_chip(size_t tier) const;
  // The distinct chips the tiers use (kind indices, -1 for `sw`), in tier order.
  std::vector<int> used_chips() const;
  const sw::SwitchConfig& chip(int kind_index) const {
    return kind_index < 0 ? sw : switch_kinds[static_cast<size_t>(kind_index)].sw;
  }
  // A chip's section, for messages: "switch" or "switch_kinds[1]".
  static std::string chip_key(int kind_index);
  // Each tier's port count and the key that sets it: what the topology's builders get.
  topo::TierPorts tier_ports() const;
  // The chip the hosts attach to (the first tier's): its port_speed is the hosts' line rate.
  const sw::SwitchConfig& host_chip() const { return tier_chip(0); }

  // PFC headroom per lossless (port, priority), sized for the links (flow_control.pfc.
  // headroom_formula) and scaled by pfc_cell_expansion(), since the switch charges whole cells
  // (a fixed headroom is taken as given).
  // Of `chip` (its port speed and cells); without one, of `sw`.
  Bytes pfc_headroom() const { return pfc_headroom(sw); }
  Bytes pfc_headroom(const sw::SwitchConfig& chip) const;
  double pfc_cell_expansion(const sw::SwitchConfig& chip) const;
  // The largest packet the network can carry: the smallest whole buffer of the chips in use, or
  // with credits one VL's receive buffer (a larger packet would wait for credits forever).
  traffic::PacketLimit packet_limit() const;

  // The keys of `given` that cannot act in this configuration (a condition of applies_when in
  // the description does not hold): the file's by line, then the overrides'. A switch: key that
  // a switch kind inherits acts if it can act in that kind; a file's key that a --set of a key
  // its condition names left idle is that override's doing, and not listed.
  std::vector<InertKey> inert_given() const;

  // Loads `path` with `overrides` ("key=value"); throws config::ConfigError (an InputError).
  static RunConfig load(const std::string& path, const std::vector<std::string>& overrides);
};

}  // namespace fabricsim::sim
