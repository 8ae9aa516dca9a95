// Result files of a run, written into the output directory:
//   summary.json   - deterministic: same config + seed => byte-identical file
//   perf.json      - wall-clock figures (wall_s, cycles_per_s, packets_per_s, peak_rss_mb, ...)
//   ports.csv      - per-port throughput, latency, drops, buffer use
//   occupancy.csv  - buffer occupancy time series (total and per egress port)
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/sim/simulation.h"

namespace fabricsim::sim {

nlohmann::json summary_json(const RunReport& r);
nlohmann::json perf_json(const RunReport& r, Time cycle);
// Writes the four files; throws std::runtime_error if the directory cannot be written.
void write_results(const RunReport& r, Time cycle, const std::string& dir);
// A short human-readable summary for the terminal.
std::string format_summary(const RunReport& r);

}  // namespace fabricsim::sim
