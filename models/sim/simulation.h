// Runs one simulation: elaborates the SystemC design (traffic sources -> switches and links ->
// sinks, as the topology wires them), runs it
// through warm-up, measurement window and drain, checks the conservation laws, and returns a plain
// report that results.h turns into summary.json, perf.json, ports.csv and occupancy.csv.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/link/flow_control.h"
#include "models/sim/run_config.h"

namespace fabricsim::sim {

struct LatencyReport {
  uint64_t count = 0;
  double mean = 0, min = 0, p50 = 0, p99 = 0, p999 = 0, max = 0;  // ns
};

struct PortReport {
  int host = -1;  // the host attached to this port, or -1 (a link to another switch, or nothing)
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0, drops = 0;
  double offered_load = 0, accepted_load = 0;  // window bytes in / out over port capacity
  LatencyReport latency;                       // host ports: packets delivered to the host
  double buffer_peak_bytes = 0, buffer_mean_bytes = 0;
  link::FlowControl::PortStats fc;  // link-level flow control on this port
  uint64_t control_frames_sent = 0;
  uint64_t ecn_marked = 0;  // packets marked CE at this egress port
  uint64_t underruns = 0;   // cut-through frames that waited on the wire for a late cell
  double underrun_ns = 0;   // and how long they waited
};

struct SwitchReport {
  std::string name;
  double buffer_capacity_bytes = 0, buffer_peak_bytes = 0, buffer_mean_bytes = 0;
  uint64_t received = 0, departed = 0, dropped = 0, in_flight = 0;
  uint64_t underruns = 0;  // cut-through frames that waited on the wire, all egress ports
  std::vector<PortReport> ports;
  // ECN: ECT packets seen and marked at the egress queues, and by queue depth.
  uint64_t ecn_packets = 0, ecn_marked = 0;
  int64_t ecn_bin_bytes = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ecn_bins;  // (packets, marked) per depth bin
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
  // The switch with the highest buffer peak (the only one in a single-switch run).
  std::string buffer_switch;
  double buffer_capacity_bytes = 0, buffer_peak_bytes = 0, buffer_mean_bytes = 0;
  uint64_t injected = 0, delivered = 0, dropped = 0, in_flight = 0;
  uint64_t link_lost = 0;
  uint64_t ce_delivered =
      0;  // packets delivered with ECN = CE  // of the dropped: frames lost to bit errors on links
  uint64_t reordered = 0;  // delivered after a later packet of their (src, dst) flow
  // Source queues at the hosts: packets that waited for their host's wire, the mean and longest
  // wait, and packets still waiting at the end (not yet injected).
  uint64_t host_queued = 0, host_backlog = 0;
  double host_wait_mean_ns = 0, host_wait_max_ns = 0;
  uint64_t win_injected = 0, win_delivered = 0, win_dropped = 0, win_in_flight = 0;
  std::vector<std::string> violations;
  nlohmann::json counters;  // block statistics from the stats registry, by hierarchical name
  int hosts = 0;
  std::vector<SwitchReport> switches;
  std::string flow_control_mode;
  std::vector<link::FlowControl::PortStats> host_fc;  // per host
  // Occupancy time series: total over all switches, and one column per switch port
  // (occupancy_columns names them).
  std::vector<std::string> occupancy_columns;
  struct Sample {
    double t_ns;
    int64_t total_bytes;
    std::vector<int64_t> port_bytes;
  };
  std::vector<Sample> occupancy;
  // Wall-clock figures (perf.json only; never in summary.json).
  double wall_s = 0;
  uint64_t active_cycles = 0;
  double peak_rss_mb = 0;
  bool helper_threads = false;  // sim.traffic_thread in effect (it needs a second CPU)
};

struct RunOptions {
  bool progress = false;  // progress line on stderr
};

// While one exists, SIGINT, SIGTERM and SIGHUP (Ctrl-C, `kill`, `timeout`, a closed terminal) do
// not kill the process: they ask the run to stop at its next step, and run_simulation() returns
// the partial results (RunReport::interrupted). Hold it until those results are written, so that
// a second signal while they are being written cannot leave them half done.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // The first signal received since the guard was made (0: none).
  static int signal_received();
};

// Checks the inputs a configuration names besides itself (a trace file: every line), as the run
// would; throws InputError naming the file and line. `fabricsim check` calls it.
void check_inputs(const RunConfig& cfg);

// Elaborates and runs. Throws InputError for bad input found while building (e.g. a trace).
// May be called once per process (SystemC allows one elaboration).
RunReport run_simulation(const RunConfig& cfg, const std::string& config_name,
                         const RunOptions& opt);

}  // namespace fabricsim::sim
