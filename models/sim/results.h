// Result files of a run, written into the output directory:
//   summary.json   - deterministic: same config + seed => byte-identical file
//   perf.json      - wall-clock figures (wall_s, cycles_per_s, packets_per_s, peak_rss_mb, ...)
//   ports.csv      - per-port throughput, latency, drops, buffer use, and the port's peer
//   links.csv      - per direction of every cable: frames, bytes, losses, utilisation, pause time
// and, written during the run by OccupancyWriter (occupancy_writer.h, started by run_simulation
// with RunOptions::out_dir):
//   occupancy.csv  - buffer occupancy time series (total and per egress port)
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/sim/simulation.h"

namespace fabricsim::sim {

// summary.json's schema_version, which the CSV files follow (docs/results.md): 1 was every file
// before the fabric step (no schema_version key); 2 from it; 3 since names say their units
// (workload.busbw_GBps, collectives.csv algbw_GBps and busbw_GBps, ports.csv
// pause_frames_sent and pause_frames_received, links.csv lost_frames_run, qp_rates.csv Swift's
// cwnd_packets).
constexpr int kSummarySchemaVersion = 3;
// perf.json's schema_version (1: the first with the key), bumped by the same rule.
constexpr int kPerfSchemaVersion = 1;

nlohmann::json summary_json(const RunReport& r);
nlohmann::json perf_json(const RunReport& r, Time cycle);
// Writes summary.json, perf.json, ports.csv and links.csv into `dir` (the run's private folder,
// output_dir.h, which is published as a set once they are all written); throws
// std::runtime_error naming the file and the reason ("No space left on device").
void write_results(const RunReport& r, Time cycle, const std::string& dir);
// The fewest bytes occupancy.csv of `cfg` can take (every value a single digit, rows up to
// sim.duration only): a run whose folder has less free space cannot finish, and is refused
// before it simulates. 0 without the time series.
uint64_t occupancy_min_bytes(const RunConfig& cfg);
// A short human-readable summary for the terminal.
std::string format_summary(const RunReport& r);

}  // namespace fabricsim::sim
