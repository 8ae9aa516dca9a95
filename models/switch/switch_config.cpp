#include "models/switch/switch_config.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/switch/voq_scheduler.h"

namespace fabricsim::sw {

void SwitchConfig::visit(config::Visitor& v) {
  v.param("ports", ports, 64, 1, 512, "ports",
          "Ports of each switch chip. With topology.kind single, port e attaches host e; the "
          "other topologies number hosts across their switches (topology.*).");
  v.param("port_speed", port_speed, BitRate::gbps(800), BitRate::gbps(1), BitRate::gbps(3200),
          "Data rate of every port (MAC rate).");
  v.begin_section("serdes",
                  "SerDes lanes: floor(lanes / ports) lanes serve each port; after link.phy.fec "
                  "and PCS coding (the link layer's MAC rate) they must carry port_speed.");
  v.param("lanes", serdes_lanes, 512, 1, 4096, "lanes", "Total SerDes lanes on the chip.");
  v.param("lane_rate", lane_rate, BitRate::bps(106250000000ull), BitRate::gbps(1),
          BitRate::gbps(500), "Signalling rate of one lane (PAM4 106.25G or 212.5G).");
  v.end_section();

  v.param("core_clock", core_clock, Frequency::mhz(1350), Frequency::mhz(1), Frequency::mhz(10000),
          "Core clock; the model is cycle-accurate at this clock. A cycle may not be longer than a "
          "cell time at port_speed.");
  v.param("cell_size", cell_size, Bytes(254), Bytes(16), Bytes(4096),
          "Buffer cell size; packets occupy ceil(size / cell_size) cells.");
  v.choice("architecture", architecture, "voq",
           {"voq", "input_fifo", "output_queued", "shared_memory"},
           "voq: virtual output queues + crossbar scheduler; input_fifo: one FIFO per input "
           "(head-of-line blocking); output_queued: ideal output queueing (no crossbar, and "
           "the buffer memory's bank limits do not apply); shared_memory: output queueing in the "
           "shared buffer, no crossbar, limited by the memory's bandwidth (switch.buffer.banks x "
           "bank_write_cells in, x bank_read_cells out, per cycle).");
  v.choice("model", model, "cycle", {"cycle", "packet"},
           "cycle: the cycle-accurate core, cell by cell (switch_core.h). packet: the same ports, "
           "admission, shared-buffer accounts, routing, egress arbitration, MAC, flow control, "
           "ECN, trimming and INT, but no cells: a packet is admitted whole at its first cell, "
           "leaves its ingress when a lone packet would (the zero-load latency of this chip's "
           "pipeline, exact) and waits in its output queue; the switch works at packet events "
           "only. No crossbar contention, no buffer bank conflicts, packet allocation "
           "(docs/architecture.md, \"The packet model\").");
  v.choice("forwarding", forwarding, "cut_through", {"cut_through", "store_and_forward"},
           "cut_through: a cell may leave the ingress as soon as it has arrived; "
           "store_and_forward: only after the whole packet has arrived.");
  v.param("traffic_classes", traffic_classes, 8, 1, 16, "classes",
          "Traffic classes (VOQs per input and output, egress queues per port).");

  v.begin_section("ingress",
                  "Ingress pipelines: the packet processing (parsing, lookup, admission) that "
                  "the ports share. Ports are split into contiguous groups, one per pipeline.");
  v.param("pipelines", ingress_pipelines, 4, 1, 512, "pipelines",
          "Ingress pipelines; port p belongs to pipeline floor(p x pipelines / ports).");
  v.param("admissions_per_cycle", admissions_per_cycle, 16, 0, 4096, "packets",
          "Packets each pipeline admits per cycle; packets whose first cell is seen beyond that "
          "wait for a later cycle (oldest first), never dropped for it. 0: unlimited (the "
          "idealised switch of theory).");
  v.end_section();

  // No crossbar in output_queued and shared_memory: its datapath, speedup and scheduler idle.
  const auto crossbar = [this] {
    return arch() == Architecture::kVoq || arch() == Architecture::kInputFifo;
  };
  const char* const kCrossbar = "{architecture}: voq or input_fifo (a crossbar)";
  v.applies_when("datapath", kCrossbar, crossbar);
  v.applies_when("crossbar", kCrossbar, crossbar);
  v.applies_when("scheduler", kCrossbar, crossbar);
  v.begin_section("datapath", "Width of each input's datapath through the crossbar.");
  v.param("bytes_per_cycle", datapath_bytes, 256, 0, 65536, "bytes",
          "Bytes an input moves per core cycle: in one matching a matched input sends its head "
          "cell and then further eligible cells of the same queue (same output) while their "
          "bytes (a packet's last cell: its remainder) fit in bytes_per_cycle x the slot's "
          "cycles, so that frames smaller than a cell are not capped at one cell per slot. 0: "
          "one cell per matching whatever its bytes (a cell-wide datapath, the slotted switch "
          "of theory).");
  v.end_section();

  v.begin_section("pipeline", "Fixed pipeline latencies in core clock cycles.");
  v.param("ingress_cycles", ingress_cycles, 0, 0, 100000, "cycles",
          "From a cell fully received at the ingress port to eligible for the crossbar.");
  v.param("crossbar_cycles", crossbar_cycles, 0, 0, 100000, "cycles",
          "Crossbar traversal, from the scheduler's grant to the cell at the egress.");
  v.param("egress_cycles", egress_cycles, 0, 0, 100000, "cycles",
          "From a cell at the egress to eligible for transmission.");
  v.end_section();

  v.begin_section("crossbar", "Crossbar between VOQs and egress ports.");
  v.param("speedup", speedup, 1.0, 1.0, 64.0, "x line rate",
          "Crossbar bandwidth per port in cells per cell time (cell_size at port_speed); at most "
          "3 decimals. Matchings happen on core clock edges, at most one per cycle, paced so that "
          "a slot (cell time / speedup) passes per cell moved; when a slot is shorter than a "
          "cycle the crossbar is ceil(cycle / slot) cells wide per port (a matched pair moves up "
          "to that many cells of its queue per matching).");
  v.end_section();

  v.begin_section("scheduler", "Crossbar scheduler (voq and input_fifo architectures).");
  // Choices and descriptions from the registry: the schedulers of models/switch/ and the
  // implementations other libraries registered at start-up (the CLI registers the RTL's).
  const SchedulerRegistry& schedulers = SchedulerRegistry::global();
  v.choice("algorithm", scheduler, "islip", schedulers.names(), schedulers.algorithm_doc());
  v.applies_when("iterations", "{algorithm}: islip or pim",
                 [this] { return scheduler == "islip" || scheduler == "pim"; });
  v.param("iterations", iterations, 1, 1, 64, "iterations",
          "Request-grant-accept iterations per matching (islip, pim).");
  v.choice("impl", scheduler_impl, SchedulerRegistry::kModel, schedulers.impl_names(),
           schedulers.impl_doc());
  v.param("cycles_per_iteration", cycles_per_iteration, 0, 0, 64, "cycles",
          "Core cycles per request-grant-accept iteration: a matching's grant comes iterations x "
          "this many cycles after its request snapshot (islip, pim; rr and wavefront: one pass "
          "of this many), and its cells cross then. 0: the whole matching within the cycle of "
          "its requests (free, as the queueing literature assumes). impl rtl needs 1 (the RTL "
          "does one iteration per clock).");
  v.applies_when("pipelined", "{cycles_per_iteration} > 0",
                 [this] { return cycles_per_iteration > 0; });
  v.param("pipelined", pipelined, false,
          "With cycles_per_iteration > 0 (no effect at 0, so that a chip's setting survives "
          "--set cycles_per_iteration=0): overlapped matchings (pipelined iSLIP, FIRM-style). A "
          "new matching starts at every crossbar slot while earlier ones are in flight, on the "
          "requests less the cells in-flight matchings already granted; each grant's cells cross "
          "when its matching completes. false: one matching at a time, the next starting when "
          "the previous one's grant has been applied.");
  v.choice("mode", scheduler_mode, "cell", {"cell", "packet"},
           "cell: every matching may pair any input and output. packet (Marsan et al., IEEE/ACM "
           "ToN 2002): once a pair starts a multi-cell packet the crossbar holds it (input and "
           "output stay out of the matchings): each next cell of that packet crosses as soon as "
           "it is eligible and a slot has passed since the pair's last one, until its last cell "
           "has crossed. A packet's cells are never interleaved with another's at the egress.");
  v.end_section();

  // output_queued is the ideal: its memory has no bank limits (switch_core_setup.cpp).
  for (const char* key : {"buffer.banks", "buffer.bank_write_cells", "buffer.bank_read_cells"})
    v.applies_when(key, "{architecture}: voq, input_fifo or shared_memory",
                   [this] { return arch() != Architecture::kOutputQueued; });
  v.begin_section("buffer", "Shared cell buffer and admission control.");
  v.param("size", buffer_size, Bytes(165660324), Bytes(1), Bytes(1ull << 40),
          "Total shared buffer (rounded down to whole cells).");
  v.param("alpha", alpha, 1.0, 1.0 / 1024, 1024.0, "ratio",
          "Dynamic threshold: an egress queue (port, class) may hold at most alpha x the free "
          "shared cells.");
  v.param("reserved_per_port", reserved_per_port, Bytes(0), Bytes(0), Bytes(1ull << 36),
          "Static reservation per ingress port, used before the shared pool.");
  v.param("reserved_max_share", reserved_max_share, 0.0, 0.0, 0.99, "share",
          "Cap on the reservations of all ports together, as a share of the buffer: each port "
          "reserves min(reserved_per_port, reserved_max_share x size / ports), so that one "
          "configuration keeps a shared pool at any port count. 0: no cap (the reservations of "
          "all ports must then leave a shared pool).");
  v.choice("allocation", buffer_allocation, "packet", {"packet", "cell"},
           "When a packet's cell ids are taken from the free list. Either way a packet is admitted "
           "or dropped whole when its first cell is seen. packet: all its cells are taken then, "
           "so its later cells always find room, and the reservation, the shared pool and the "
           "dynamic threshold count them from then on (the threshold is checked for the whole "
           "packet). cell (Tomahawk-class MMUs account per cell): the first cell is taken at "
           "admission, checked against the reservation or else the shared pool and the dynamic "
           "threshold as the cells held then stand; each later cell is taken as it arrives (the "
           "id it takes names its bank), from the port's reservation or else the shared pool, "
           "without the threshold (checked once, at the start of the packet). A later cell that "
           "finds no room drops the packet mid-way (SWITCH.buffer.mid_packet_drops, counted in "
           "the drops): store_and_forward frees its cells at once; cut_through ends the frame "
           "after the cells it has with a stomped (bad) FCS, which the next receiver discards: "
           "counted as dropped here, where it was cut, and never delivered.");
  v.param("banks", buffer_banks, 256, 1, 4096, "banks",
          "Memory banks of the buffer; cell id c lives in bank c mod banks (ids come from the "
          "FIFO free list).");
  v.param("bank_write_cells", bank_write_cells, 1, 0, 64, "cells",
          "Cells each bank writes per cycle. A cell is written in the cycle it is seen, or "
          "later when its bank has written its share that cycle (the cell waits, and so its "
          "crossing). 0: unlimited.");
  v.param("bank_read_cells", bank_read_cells, 1, 0, 64, "cells",
          "Cells each bank reads per cycle. A cell is read as it leaves the buffer (crosses the "
          "crossbar; with shared_memory, goes to its egress): a matched input whose cell's "
          "bank has no read left sends nothing in that matching; with shared_memory the read "
          "waits, booked in the order the bank's reads are asked for. 0: unlimited. "
          "output_queued ignores both limits.");
  v.end_section();

  v.begin_section("egress", "Egress queues and transmit scheduling.");
  v.choice("scheduler", egress_scheduler, "strict_priority", {"strict_priority", "dwrr"},
           "strict_priority: highest class first; dwrr: deficit weighted round robin.");
  for (const char* key : {"dwrr_weights", "dwrr_quantum"})
    v.applies_when(key, "{scheduler}: dwrr", [this] { return egress_scheduler == "dwrr"; });
  v.list("dwrr_weights", dwrr_weights, {}, 1, 1000, "weight",
         "DWRR weight per traffic class (empty: all equal).");
  v.param("dwrr_quantum", dwrr_quantum, Bytes(9216), Bytes(64), Bytes(1 << 20),
          "DWRR quantum of a weight-1 class per round.");
  v.choice(
      "start", egress_start, "first_cell", {"first_cell", "all_cells", "no_underrun"},
      "When the MAC may start a frame. first_cell: once its first cell has crossed the "
      "crossbar and the egress pipeline (one cycle later in cut_through for a frame of several "
      "cells); a cell that is late all the same (the crossbar served other inputs first) "
      "stalls the frame on the wire, which a real MAC cannot do: counted as underruns in "
      "ports.csv. all_cells: once all its cells are at the egress (reassembly); never "
      "underruns, at the cost of the crossing time. no_underrun: once all its cells have "
      "crossed the crossbar (the fixed-latency egress pipeline then delivers each at a known "
      "cycle), at the earliest time at which every cell reaches the MAC before the wire needs "
      "it; never underruns, and costs nothing while the egress pipeline is longer than the "
      "frame's crossing (docs/architecture.md).");
  v.end_section();

  v.begin_section("routing",
                  "Load balancing over equal-cost egress ports (a destination's ECMP group, e.g. "
                  "a leaf's uplinks in topology.kind leaf_spine); a single port is unaffected.");
  routing.visit(v);
  v.end_section();

  v.param("int_telemetry", int_telemetry, true,
          "In-band network telemetry, as HPCC uses it (Li et al., SIGCOMM 2019): each egress "
          "port pushes a hop record (time, bytes sent, queue length, line rate) onto every "
          "packet that carries an INT header (an HPCC NIC's data packets), at most 5 per "
          "packet (models/common/telemetry.h). Off: packets pass unstamped, and an HPCC sender "
          "does not see this switch. Costs nothing for packets without the header. [A] on: "
          "INT is a feature of today's programmable and merchant switch chips.");
  v.begin_section("trimming",
                  "Packet trimming (UEC, NDP): a packet the buffer would drop is cut to its "
                  "headers and forwarded at high priority, marked, instead.");
  trimming.visit(v);
  v.end_section();
  v.begin_section("aggregation",
                  "In-network reduction (SHARP-like): an aggregation unit in the chip that "
                  "reduces its children's chunks and sends one up (collective allreduce_innet).");
  aggregation.visit(v);
  v.end_section();
  v.begin_section("energy", "The chip's power: static, per bit switched, per buffer access.");
  energy.visit(v);
  v.end_section();
}

void AggregationConfig::visit(config::Visitor& v) {
  v.param("enabled", enabled, false,
          "Every switch of this chip holds an aggregation unit: an endpoint on the chip's "
          "highest spare port (refused if it has none) with its own NIC, the node of "
          "allreduce_innet's reduction tree. Needs nic.enabled and traffic.pattern workload. "
          "Default off: no unit, every result as before.");
  for (const char* key : {"throughput", "buffer"})
    v.applies_when(key, "{enabled}: true", [this] { return enabled; });
  v.param("throughput", throughput, BitRate(), BitRate(), BitRate::gbps(409600),
          "The rate the unit reduces at, which is its port's rate: its children's chunks arrive "
          "one after another at this rate, and the results leave at it. 0 (default): ports x "
          "port_speed, a unit that keeps up with every port at once ([S] SHARPv2's streaming "
          "aggregation at line rate: NVIDIA SHARP documentation); port_speed or less models a "
          "unit its children oversubscribe.");
  v.param("buffer", buffer, Bytes(uint64_t{4} << 20), Bytes(1), Bytes(uint64_t{1} << 30),
          "The aggregation buffer: each communicator's tree holds at most buffer / chunk "
          "chunks (per channel: buffer / (chunk x channels)) between a child's send and its "
          "result's return. [S] 4 MiB: no vendor publishes a SHARP unit's buffer.");
}

void TrimmingConfig::visit(config::Visitor& v) {
  v.param("enabled", enabled, false,
          "A packet that admission would drop for want of buffer (lossy ports: "
          "flow_control.mode none) is cut to its first `bytes` and forwarded in class "
          "traffic_class, marked trimmed (a DSCP remark; a RUD NIC answers it with a NACK, the "
          "RC transports take it as lost). Counted per switch as trimmed_packets. Default off: "
          "dropped.");
  for (const char* key : {"bytes", "traffic_class"})
    v.applies_when(key, "{enabled}: true", [this] { return enabled; });
  v.param("bytes", bytes, Bytes(64), Bytes(1), Bytes(9216),
          "What a trimmed packet keeps: its headers (Ethernet + IP + UDP + transport), 64 B "
          "as UEC's trimming keeps.");
  v.param("traffic_class", traffic_class, -1, -1, 15, "",
          "The class trimmed packets are forwarded in (strict priority above the data, so the "
          "news of the loss overtakes the queue that caused it); -1: the highest "
          "(switch.traffic_classes - 1).");
}

void SwitchConfig::validate(const config::Checker& c) const {
  validate_except_lanes(c);
  validate_even_lanes(c);
}

void SwitchConfig::validate_even_lanes(const config::Checker& c, link::FecType fec) const {
  // Lanes are split evenly; a remainder stays unused (as on chips run in a reduced port mode).
  const int64_t lanes_per_port = serdes_lanes / ports;
  c.require(lanes_per_port >= 1, "switch.serdes.lanes",
            "fewer lanes than switch.ports (" + std::to_string(ports) + ")");
  // The same MAC rate the link layer derives from its lanes: the raw lane rate is not what a
  // port can carry once FEC parity and PCS transcoding are taken out (8 x 100G lanes with
  // RS(544,514) carry 752.9G, not 800G).
  const link::WireFormat wf(static_cast<int>(lanes_per_port), lane_rate, fec,
                            link::Framing::kEthernet);
  const link::FecCode code = link::fec_code(fec);
  const std::string coding = fec == link::FecType::kNone
                                 ? std::string("64b/66b coding without FEC")
                                 : "RS(" + std::to_string(code.n) + "," + std::to_string(code.k) +
                                       ") FEC with 64b/66b transcoded to 256b/257b";
  c.require(wf.mac_rate().as_bps() >= port_speed.as_bps(), "switch.serdes.lane_rate",
            std::to_string(lanes_per_port) + " lanes x " + lane_rate.str() +
                " is below port_speed " + port_speed.str() + " after " + coding +
                " (link.phy.fec): they carry " +
                fmt::format("{:.2f}Gbps", static_cast<double>(wf.mac_rate().as_bps()) / 1e9) +
                " (" + c.key("switch.serdes.lanes") + " " + std::to_string(serdes_lanes) +
                " over " + c.key("switch.ports") + " " + std::to_string(ports) + " give " +
                std::to_string(lanes_per_port) + " lanes per port)");
}

void SwitchConfig::validate_except_lanes(const config::Checker& c) const {
  c.require(serdes_lanes >= ports, "switch.serdes.lanes",
            "fewer lanes than switch.ports (" + std::to_string(ports) + ")");
  c.require(cell_size <= buffer_size, "switch.buffer.size",
            buffer_size.str() + " is smaller than one cell (" + c.key("switch.cell_size") + " is " +
                cell_size.str() + ")");
  // The core takes at most one cell per port per cycle in its statistics' view: a cell time shorter
  // than a cycle would let a packet come and go inside one cycle, unseen by the occupancy figures
  // (sampled at the end of each cycle).
  const Time cell_time = port_speed.serialization(cell_size);
  c.require(cell_time >= cycle(), "switch.core_clock",
            core_clock.str() + " gives a " + cycle().str() + " cycle, longer than a " +
                cell_size.str() + " cell at " + port_speed.str() + " (" + cell_time.str() +
                "): the core must take at least one cell per port per cycle");
  // The model keeps 8 B per cell (its next-cell link and free-list entry): bounded so that an
  // in-range size does not end in an allocation failure.
  constexpr int64_t kMaxCells = int64_t{1} << 27;
  c.require(buffer_cells() <= kMaxCells, "switch.buffer.size",
            buffer_size.str() + " is " + std::to_string(buffer_cells()) + " cells of " +
                cell_size.str() + "; the model allows at most " + std::to_string(kMaxCells) +
                " cells (1 GiB of cell links): use larger cells or a smaller buffer");
  const double milli = speedup * 1000.0;
  c.require(std::fabs(milli - std::round(milli)) < 1e-6, "switch.crossbar.speedup",
            "must have at most 3 decimals");
  const int64_t reserve = reserved_cells_per_port() * ports;
  c.require(reserve < buffer_cells(), "switch.buffer.reserved_per_port",
            "reservations for all ports (" + c.key("switch.ports") + " " + std::to_string(ports) +
                " x " + std::to_string(reserved_cells_per_port()) +
                " cells = " + std::to_string(reserve) + " cells) leave no shared pool in " +
                std::to_string(buffer_cells()) + " cells of " + c.key("switch.buffer.size") + " " +
                buffer_size.str() + " (or cap them with " +
                c.key("switch.buffer.reserved_max_share") + ")");
  c.require(dwrr_weights.empty() || static_cast<int64_t>(dwrr_weights.size()) == traffic_classes,
            "switch.egress.dwrr_weights",
            "needs one weight per traffic class (" + std::to_string(traffic_classes) + ")");
  if (scheduler_impl != SchedulerRegistry::kModel) {
    // The implementation declared its algorithms and limits when it was registered.
    const SchedulerRegistry& schedulers = SchedulerRegistry::global();
    const auto with = schedulers.algorithms_with(scheduler_impl);
    c.require(!with.empty(), "switch.scheduler.impl",
              "no implementation '" + scheduler_impl + "' is registered in this program (valid: " +
                  join_names(schedulers.impl_names()) + ")");
    c.require(std::find(with.begin(), with.end(), scheduler) != with.end(), "switch.scheduler.impl",
              scheduler_impl + " is only available for algorithm " + join_names(with) + ", not '" +
                  scheduler + "'");
    const SchedulerImpl& impl = schedulers.impl(scheduler, scheduler_impl);
    c.require(impl.max_ports == 0 || ports <= impl.max_ports, "switch.scheduler.impl",
              impl.title + " supports at most " + std::to_string(impl.max_ports) + " ports, not " +
                  std::to_string(ports));
    // In the loop the block takes the cycles it takes: one iteration per core clock, one
    // matching at a time (it samples start only when not busy).
    c.require(cycles_per_iteration == 1, "switch.scheduler.cycles_per_iteration",
              impl.title + " (" + c.key("switch.scheduler.impl") + " " + scheduler_impl +
                  ") runs one iteration per core clock: needs 1, not " +
                  std::to_string(cycles_per_iteration));
    c.require(!pipelined, "switch.scheduler.pipelined",
              impl.title + " (" + c.key("switch.scheduler.impl") + " " + scheduler_impl +
                  ") starts a matching only when the previous one is done: needs false");
  }
  // A crossbar wider than a cell per cycle, and packet mode, move several cells of a pair in one
  // matching; the datapath's packing and the banks' read limit are modelled for matchings of one
  // cell per pair only (so far): refused together rather than half applied.
  const Architecture a = arch();
  if ((a == Architecture::kVoq || a == Architecture::kInputFifo) &&
      (crossbar_width() > 1 || packet_mode())) {
    const std::string why = packet_mode() ? c.key("switch.scheduler.mode") + " packet"
                                          : "a crossbar " + std::to_string(crossbar_width()) +
                                                " cells wide (" + c.key("switch.crossbar.speedup") +
                                                " " + fmt::format("{:g}", speedup) + ")";
    c.require(datapath_bytes == 0, "switch.datapath.bytes_per_cycle",
              std::to_string(datapath_bytes) + " is not modelled with " + why +
                  " yet: set it to 0 (one cell a matching)");
    c.require(buffer_banks == 0 || bank_read_cells == 0, "switch.buffer.bank_read_cells",
              std::to_string(bank_read_cells) + " reads per bank per cycle are not modelled with " +
                  why + " yet: set it (or " + c.key("switch.buffer.banks") + ") to 0");
  }
  for (double w : dwrr_weights)
    c.require(w == std::floor(w), "switch.egress.dwrr_weights", "weights must be whole numbers");
  routing.validate(c.under("switch.routing"));
  c.require(trimming.traffic_class < traffic_classes, "switch.trimming.traffic_class",
            std::to_string(trimming.traffic_class) + " is not a class of the switch (" +
                c.key("switch.traffic_classes") + " is " + std::to_string(traffic_classes) + ")");
}

Architecture SwitchConfig::arch() const {
  if (architecture == "input_fifo") return Architecture::kInputFifo;
  if (architecture == "output_queued") return Architecture::kOutputQueued;
  if (architecture == "shared_memory") return Architecture::kSharedMemory;
  return Architecture::kVoq;
}

EgressPolicy SwitchConfig::egress_policy() const {
  return egress_scheduler == "dwrr" ? EgressPolicy::kDwrr : EgressPolicy::kStrictPriority;
}

int64_t SwitchConfig::speedup_milli() const {
  return std::llround(speedup * 1000.0);
}

int64_t SwitchConfig::crossbar_width() const {
  // ceil(speedup x cycle / cell time) in exact integers: speedup_milli x period_fs over
  // 1000 x cell_fs.
  const auto num =
      static_cast<unsigned __int128>(speedup_milli()) * static_cast<uint64_t>(cycle().as_fs());
  const auto den = static_cast<unsigned __int128>(1000) *
                   static_cast<uint64_t>(port_speed.serialization(cell_size).as_fs());
  const auto w = static_cast<int64_t>((num + den - 1) / den);
  return w < 1 ? 1 : w;
}

}  // namespace fabricsim::sw
