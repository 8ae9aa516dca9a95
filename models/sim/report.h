// The results of one run as plain data, gathered from an elaborated and run Fabric when the run
// ends: results.h turns it into summary.json, perf.json, ports.csv and links.csv.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/link/flow_control.h"
#include "models/sim/box_report.h"
#include "models/sim/fabric.h"
#include "models/sim/fct_writer.h"
#include "models/sim/runner.h"
#include "models/workload/workload_results.h"

namespace fabricsim::sim {

struct LatencyReport {
  uint64_t count = 0;
  double mean = 0, min = 0, p50 = 0, p99 = 0, p999 = 0, max = 0;  // ns
};

// The measured packets in two halves by inject time (split at the middle of the window): a mean
// latency that grows from the first half to the second says the queues were still filling.
struct HalvesReport {
  uint64_t first_count = 0, second_count = 0;
  double first_mean = 0, second_mean = 0;  // ns
};

struct PortReport {
  int host = -1;     // the host attached to this port, or -1 (a link to another switch, or nothing)
  std::string peer;  // the device at the other end of the port's cable ("" when unconnected)
  int peer_port = -1;  // its port (0 for a host's NIC)
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0, drops = 0;
  double offered_load = 0, accepted_load = 0;           // window bytes in / out over port capacity
  LatencyReport latency;                                // host ports: packets delivered to the host
  double buffer_peak_bytes = 0, buffer_mean_bytes = 0;  // window
  double buffer_peak_bytes_run = 0;                     // whole run
  link::FlowControl::PortStats fc;      // link-level flow control on this port, window start to end
  link::FlowControl::PortStats fc_run;  // the same over the whole run
  uint64_t control_frames_sent = 0;
  uint64_t ecn_marked = 0;  // packets marked CE at this egress port
  uint64_t underruns = 0;   // cut-through frames that waited on the wire for a late cell
  double underrun_ns = 0;   // and how long they waited
};

struct SwitchReport {
  std::string name;
  std::string kind;  // its switch kind (switch_kinds[].name, "switch"); "" when none are assigned
  double buffer_capacity_bytes = 0, buffer_peak_bytes = 0, buffer_mean_bytes = 0;  // window
  double buffer_peak_bytes_run = 0;                                                // whole run
  uint64_t received = 0, departed = 0, dropped = 0, in_flight = 0;
  uint64_t underruns = 0;  // cut-through frames that waited on the wire, all egress ports
  uint64_t cells_switched =
      0;  // buffer cells that crossed the core, whole run (each written, read)
  std::vector<PortReport> ports;
  // ECN: ECT packets seen and marked at the egress queues, and by queue depth.
  uint64_t ecn_packets = 0, ecn_marked = 0;
  int64_t ecn_bin_bytes = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ecn_bins;  // (packets, marked) per depth bin
};

// One direction of a cable: what its sender put on it and what was lost on the way.
struct LinkReport {
  int wire = 0;          // index into the fabric's wires (host links first)
  std::string from, to;  // device names (host7, leaf0, ...)
  int from_port = 0, to_port = 0;
  double rate_gbps = 0;            // the sender's line rate
  uint64_t frames = 0, bytes = 0;  // data frames sent, whole run
  uint64_t lost = 0;               // of those, destroyed by bit errors on the wire
  double utilisation = 0;          // window: frame bytes on the wire over capacity
  double paused_ns = 0;  // window start to end: time the sender was paused (PFC) or out of credits
};

// How evenly a switch spreads traffic over the ports that lead to other switches (its uplinks in a
// leaf, its downlinks to leaves in a spine): utilisation out of each such port over the window.
struct LoadBalanceReport {
  std::string name;
  int ports = 0;
  double mean = 0, max = 0;
};

// The RDMA NICs' transport (nic.enabled): messages and what recovering them cost.
// fct.csv's slowdowns (a message's FCT over its FCT alone on the idle fabric: idle_fabric.h).
struct SlowdownReport {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
  bool exact = true;  // every chip crossed has an exact zero-load closed form
};

struct TransportReport {
  bool on = false;
  nic::Nic::Stats totals;
  uint64_t in_flight = 0;  // posted, neither completed nor failed at the end
  LatencyReport fct;       // ns, completed messages: post to send completion
  SlowdownReport slowdown;
  std::string fct_csv;       // fct.csv, one row per posted message (unless fct_written)
  bool fct_written = false;  // make_report streamed fct.csv to its file (fct_csv empty)
  bool rates_on = false;     // nic.rate_trace_interval > 0
  std::string rates_csv;     // qp_rates.csv
  uint64_t rate_rows_not_recorded = 0;
};

// The ranks' collectives (traffic.pattern workload): collectives.csv and summary.json workload.
struct WorkloadReport {
  bool on = false;
  int32_t ranks = 0;
  uint64_t nodes = 0, unfinished = 0;
  Time end;  // the last node's finish
  std::vector<workload::CollectiveResult> collectives;
  workload::JobResult job;
  // By communicator tag (when the workload tags any): names [0] = "" (untagged) first.
  std::vector<std::string> classes;
  workload::ClassResult by_class;
  std::string ranks_csv;  // ranks.csv: what each rank did when
  std::string steps_csv;  // steps.csv: each step of each call
  // aggregation.csv: a row per switch aggregation unit ("": none, switch.aggregation off)
  std::string aggregation_csv;
  // By network (scale_up: on): messages, bytes, and the time any was in flight.
  struct Share {
    uint64_t messages = 0, bytes = 0;
    Time active;
  };
  bool scale_up_on = false;
  Share scale_up, scale_out;
};

// The run's energy (summary.json `energy`, energy.csv; docs/results.md "Energy"): the switches'
// (models/switch/switch_energy.h) and the cables' modules' (models/link/optics.h) over the run,
// from time 0 to its end, and the fabric's power at the load measured in the window.
struct EnergyReport {
  double span_s = 0, window_s = 0;
  struct Chip {
    std::string name, kind;
    sw::SwitchEnergy energy;  // idle, switching and buffer joules over the run
    uint64_t bits = 0, cell_accesses = 0;
    double window_w = 0;  // at the window's load
  };
  std::vector<Chip> switches;
  struct LinkClass {
    std::string module;
    int cables = 0;
    double watts = 0;   // both modules of every cable (they draw it whatever the load)
    uint64_t bits = 0;  // carried, both directions, whole run
  };
  LinkClass host, fabric;
  uint64_t delivered_bits = 0;  // frame bits that reached hosts, whole run
  struct Call {
    std::string name;
    double joules = 0;
    uint64_t bits = 0;  // the call's bytes on the network: ranks x size x bus factor
  };
  std::vector<Call> collectives;
  double switch_j() const;
  double optics_j() const { return (host.watts + fabric.watts) * span_s; }
  double total_j() const { return switch_j() + optics_j(); }
  double window_w() const;  // the fabric's power at the window's load
  double static_w() const;  // what it draws idle: switches' idle_w and every module
};

struct RunReport {
  std::string config_name;
  nlohmann::json config;  // resolved
  int64_t seed = 0;
  Time window_start, window_end, end_time;
  bool interrupted = false;
  bool drained = true;  // every packet injected in the window left the switch (or was dropped)
  double offered_load = 0, accepted_load = 0;
  LatencyReport latency;
  HalvesReport latency_halves;
  // The switch with the highest buffer peak (the only one in a single-switch run).
  std::string buffer_switch;
  double buffer_capacity_bytes = 0, buffer_peak_bytes = 0, buffer_mean_bytes = 0;  // window
  double buffer_peak_bytes_run = 0;  // that switch's over the whole run
  uint64_t injected = 0, delivered = 0, dropped = 0, in_flight = 0;
  uint64_t link_lost = 0;
  uint64_t reordered = 0;  // delivered after a later packet of their (src, dst) flow
  uint64_t ce_delivered =
      0;  // packets delivered with ECN = CE  // of the dropped: frames lost to bit errors on links
  // Source queues at the hosts: packets that waited for their host's wire, the mean and longest
  // wait, and packets still waiting at the end (not yet injected).
  uint64_t host_queued = 0, host_backlog = 0;
  uint64_t host_refused = 0;  // offered to a full queue (host.queue_limit), never injected
  double host_wait_mean_ns = 0, host_wait_max_ns = 0;
  uint64_t win_injected = 0, win_delivered = 0, win_dropped = 0, win_in_flight = 0;
  std::vector<std::string> violations;
  TransportReport transport;
  WorkloadReport workload;
  EnergyReport energy;
  nlohmann::json counters;  // block statistics from the stats registry, by hierarchical name
  int hosts = 0;
  std::vector<SwitchReport> switches;
  std::vector<BoxReport> boxes;   // multi-chip boxes' roll-ups (box_report.h); empty: none
  std::vector<LinkReport> links;  // two per cable
  // The topology as its builder states it: kind, and per tier its switches, ports facing down
  // (hosts or the tier below) and up, and the oversubscription (down : up capacity).
  std::string topology_kind;
  struct TierReport {
    std::string name;
    int switches = 0, down_ports = 0, up_ports = 0;
    double oversubscription = 0;  // 0 for a top tier
  };
  std::vector<TierReport> tiers;
  int max_switch_hops = 1;
  std::vector<LoadBalanceReport> load_balance;  // switches with switch-facing ports
  std::string flow_control_mode;
  std::vector<link::FlowControl::PortStats> host_fc;      // per host, window start to end
  std::vector<link::FlowControl::PortStats> host_fc_run;  // per host, whole run
  // (The occupancy time series is not here: it is streamed to occupancy.csv during the run,
  // occupancy_writer.h.) Where the writer's cap ended it (Time::max(): it covers the run).
  Time occupancy_capped_at = Time::max();
  // Wall-clock figures (perf.json only; never in summary.json).
  double wall_s = 0;
  uint64_t active_cycles = 0;
  double peak_rss_mb = 0;
  bool helper_threads = false;        // sim.traffic_thread in effect (it needs a second CPU)
  int64_t lookahead_cycles = 1;       // the switches' run-ahead window (sim.lookahead; 1: none)
  int64_t threads = 1;                // threads that ran the fabric (sim.threads, clamped)
  uint64_t worker_windows = 0;        // windows the switches ran on the workers
  uint64_t host_windows = 0;          // windows the hosts ran host by host (HostsModule)
  double main_wait_s = 0;             // the main thread's wall time waiting for the workers
  std::vector<double> worker_wait_s;  // each worker's wall time waiting at window ends
  std::vector<double> worker_idle_s;  // and without a job at all (that wait included)
  uint64_t cross_side_calls = 0;      // calls held between sides (threads, MPI): frames, credits
  int mpi_ranks = 1;                  // processes of the MPI job (1: none)
  uint64_t mpi_exchanges = 0;         // messages rank 0 exchanged with the other ranks
  uint64_t mpi_bytes = 0;             // and their bytes, both ways
  double mpi_cpu_s = 0;               // the other ranks' CPU time
  double mpi_wait_s = 0;              // rank 0's wall time waiting for the others' answers
  double mpi_busy_s = 0;              // the busiest other rank's wall time serving rank 0
  int64_t switch_count = 0, main_thread_switches = 0;  // threads: the switches' split
  std::vector<int> side_switches;                      // switches per side, the main's first
  std::vector<uint64_t> side_runs;  // threads: switch windows each thread ran, the main's first
  double cpu_s = 0;                 // CPU time of the process, user + system, all threads
  // flow_events.csv: the fabric's spans and drops in start order, with the device names they
  // use (switches first, then hosts), and how many the limit left out.
  std::vector<stats::SpanRecord> flow_events;
  std::vector<std::string> device_names;
  uint64_t flow_events_not_recorded = 0;
  bool flow_events_on = false;
};

// Gathers the report of `fabric` after run_phases() (or the user's own sc_start) stopped at
// `outcome.end_time`; runs the end-of-run checks (Fabric::checks) into `violations`. Wall-clock
// figures are left for the caller. `fct`: fct.csv's writer, made by fct_writer before the run
// (the rows it was given while the run went, NicArray::stream_fct, come first); without it,
// fct.csv goes into TransportReport::fct_csv.
RunReport make_report(Fabric& fabric, const std::string& config_name, const RunOutcome& outcome,
                      FctWriter* fct = nullptr);
// fct.csv's writer for the fabric's NICs, to `path` ("": into the report), with the idle
// fabric its slowdowns divide by.
std::unique_ptr<FctWriter> fct_writer(const Fabric& fabric, const std::string& path);
// Switch s's report at the end of the run (closes its window at `end`; loads over `window_s`
// seconds). Its host ports' latencies are the hosts' (which an MPI rank other than 0 lacks).
SwitchReport switch_report(Fabric& f, int s, Time end, double window_s);

}  // namespace fabricsim::sim
