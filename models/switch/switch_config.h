// Configuration of one switch chip (the `switch:` section of a run configuration).
//
// Parameters that matter most for architecture studies: port count and speed, core clock, cell size
// and buffer size (they fix the cell rate and the number of cells), the architecture (VOQ crossbar,
// input FIFO, ideal output queueing), the crossbar scheduler, its iterations and the cycles each
// takes (one matching at a time or pipelined), cell or packet mode, crossbar speedup (realised as
// matchings on clock edges and, beyond one cell per cycle, a wider crossbar),
// the dynamic-threshold alpha and per-port reservations, the pipeline latencies, and (with several
// switches) how a packet picks among equal-cost ports (routing). The structural limits of the
// silicon: admissions per cycle per ingress pipeline, the datapath width, and the buffer memory's
// banks and their read/write cells per cycle; each is finite by default, and 0 (unlimited, or for
// the datapath one cell per matching) is an explicit choice for the idealised switch of theory.
#pragma once

#include <string>
#include <vector>

#include "models/common/units.h"
#include "models/config/config.h"
#include "models/link/wire_format.h"
#include "models/switch/load_balancer.h"
#include "models/switch/switch_energy.h"

namespace fabricsim::sw {

enum class Architecture { kVoq, kInputFifo, kOutputQueued, kSharedMemory };
enum class EgressPolicy { kStrictPriority, kDwrr };

// The `switch.trimming` section: packet trimming (UEC, NDP: Handley et al. 2017). A packet that
// admission would drop for want of buffer is cut to its first `bytes` (the headers) and
// forwarded in class `traffic_class`, marked kTrimmed (models/common/packet.h) so the receiver
// knows its payload is gone (a RUD NIC NACKs it: models/nic/rud_transport.h). Only on lossy
// ports (flow_control.mode none) and at admission: with buffer_allocation cell, a packet that
// finds no cell mid-way is still dropped (its head may be on the wire already).
struct TrimmingConfig {
  bool enabled = false;
  Bytes bytes;
  int64_t traffic_class = -1;  // -1: the highest (switch.traffic_classes - 1)

  void visit(config::Visitor& v);
};

// The `switch.aggregation` section: an in-network reduction unit (a SHARP Aggregation Node) in
// the chip. It is an endpoint of its own (models/topology/aggregation_nodes.h) on one of the
// chip's spare ports, which runs at `throughput` (the rate it reduces at), with a NIC-like
// transport that terminates its children's connections; `buffer` bounds the chunks it holds
// (allreduce_innet: chunk k + buffer/chunk waits for chunk k's result).
struct AggregationConfig {
  bool enabled = false;
  BitRate throughput;  // 0: ports x port_speed (keeps up with every port)
  Bytes buffer;

  void visit(config::Visitor& v);
};

struct SwitchConfig : config::Configurable {
  // Ports and SerDes
  int64_t ports = 0;
  BitRate port_speed;
  int64_t serdes_lanes = 0;  // total lanes on the chip
  BitRate lane_rate;
  // Core
  Frequency core_clock;
  Bytes cell_size;
  std::string architecture;  // voq | input_fifo | output_queued | shared_memory
  std::string forwarding;    // cut_through | store_and_forward
  std::string model;         // cycle | packet (packet_core.h)
  int64_t traffic_classes = 0;
  // Ingress pipelines: ports split into `ingress_pipelines` contiguous groups, each admitting at
  // most `admissions_per_cycle` packets per cycle (0: unlimited).
  int64_t ingress_pipelines = 4;
  int64_t admissions_per_cycle = 16;
  // Bytes per cycle an input's datapath moves through the crossbar (0: one cell per matching).
  int64_t datapath_bytes = 256;
  // Pipeline (core clock cycles)
  int64_t ingress_cycles = 0;
  int64_t crossbar_cycles = 0;
  int64_t egress_cycles = 0;
  // Crossbar and scheduler
  double speedup = 1.0;
  std::string scheduler;  // islip | pim | rr | wavefront
  int64_t iterations = 1;
  std::string scheduler_impl;  // model | rtl (the Verilated RTL in the loop, islip only)
  // Matching time: iterations x cycles_per_iteration core cycles from the request snapshot to the
  // grant (0: the whole matching inside the cycle of its requests, as the queueing literature
  // assumes); pipelined: a new matching may start every crossbar slot while earlier ones are in
  // flight; scheduler_mode: cell | packet (a pair is held until its packet's last cell crossed).
  int64_t cycles_per_iteration = 0;
  bool pipelined = false;
  std::string scheduler_mode;
  // Shared buffer
  Bytes buffer_size;
  double alpha = 1.0;
  Bytes reserved_per_port;
  double reserved_max_share = 0;  // cap on all reservations as a share of the buffer; 0 = no cap
  // When a packet's cell ids are taken: packet (all at admission) | cell (each as it arrives).
  std::string buffer_allocation;
  // Buffer memory: banks (cell id mod banks), cells written and read per bank per cycle (0:
  // unlimited).
  int64_t buffer_banks = 256;
  int64_t bank_write_cells = 1;
  int64_t bank_read_cells = 1;
  // Egress
  std::string egress_scheduler;  // strict_priority | dwrr
  std::vector<double> dwrr_weights;
  Bytes dwrr_quantum;
  std::string egress_start;  // first_cell | all_cells | no_underrun
  // Choice among equal-cost ports (switch.routing)
  RoutingConfig routing;
  // Trimming instead of dropping (switch.trimming)
  TrimmingConfig trimming;
  AggregationConfig aggregation;  // in-network reduction (switch.aggregation)
  SwitchEnergyConfig energy;      // the run's energy report (switch_energy.h)
  // In-band telemetry: every egress port pushes an INT hop onto packets with an INT header.
  bool int_telemetry = true;
  int trim_class() const {
    return static_cast<int>(trimming.traffic_class < 0 ? traffic_classes - 1
                                                       : trimming.traffic_class);
  }

  void visit(config::Visitor& v) override;
  // All checks: validate_except_lanes, then validate_even_lanes.
  void validate(const config::Checker& c) const override;
  // Lanes split evenly over the ports carry port_speed after the PHY's coding: the link layer's
  // arithmetic (link::WireFormat), lanes x lane_rate x FEC rate x transcoding >= port_speed, with
  // `fec` the FEC the lanes run (link.phy.fec in a run; RS(544,514), the default, on its own).
  // A breakout list, link.port_lanes, replaces this check; the run configuration checks it instead.
  void validate_even_lanes(const config::Checker& c,
                           link::FecType fec = link::FecType::kRs544) const;
  void validate_except_lanes(const config::Checker& c) const;

  // Derived values.
  Architecture arch() const;
  EgressPolicy egress_policy() const;
  bool cut_through() const { return forwarding == "cut_through"; }
  bool packet_model() const { return model == "packet"; }
  Time cycle() const { return core_clock.period(); }
  int64_t buffer_cells() const {
    return static_cast<int64_t>(buffer_size.count() / cell_size.count());
  }
  // Cells each ingress port reserves: reserved_per_port in whole cells, at most
  // reserved_max_share x buffer_cells() / ports when the cap is set.
  int64_t reserved_cells_per_port() const {
    const int64_t cells = static_cast<int64_t>((reserved_per_port.count() + cell_size.count() - 1) /
                                               cell_size.count());
    if (reserved_max_share <= 0) return cells;
    const auto cap = static_cast<int64_t>(reserved_max_share * static_cast<double>(buffer_cells()) /
                                          static_cast<double>(ports));
    return cells < cap ? cells : cap;
  }
  // Speedup as an exact ratio speedup_milli / 1000 (the config gives at most 3 decimals).
  int64_t speedup_milli() const;
  // Core cycles from a matching's request snapshot to its grant: iterations x
  // cycles_per_iteration for the iterative schedulers (islip, pim), one pass for rr and wavefront.
  int64_t matching_cycles() const {
    return (scheduler == "islip" || scheduler == "pim" ? iterations : 1) * cycles_per_iteration;
  }
  bool packet_mode() const { return scheduler_mode == "packet"; }
  bool cell_allocation() const { return buffer_allocation == "cell"; }
  // Cells a matched pair moves per matching: the crossbar is as many cells wide per port as the
  // speedup needs in one core cycle, ceil(speedup x cycle / cell time), at least 1.
  int64_t crossbar_width() const;
};

}  // namespace fabricsim::sw
