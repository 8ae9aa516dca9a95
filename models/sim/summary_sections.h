// summary.json's sections (docs/results.md), each written by a function beside the figures it
// reports: the run and the fabric (summary_fabric.cpp), link-level flow control
// (summary_flow_control.cpp), the NICs' transport (summary_transport.cpp), the workload
// (summary_workload.cpp), energy (summary_energy.cpp). summary_json (results.cpp) writes the
// header, then every section of summary_sections() in turn, then the counters, the invariants
// and the configuration: a new figure goes into its section's function, a new section into the
// table.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/sim/report.h"

namespace fabricsim::sim {

struct SummarySection {
  const char* name;  // what it writes, for the reader (its top-level keys)
  void (*write)(const RunReport& r, nlohmann::json& summary);
};

// The sections in the order summary_json writes them.
const std::vector<SummarySection>& summary_sections();

// A latency distribution's figures (count, mean, min, percentiles, max), in ns.
nlohmann::json latency_json(const LatencyReport& l);

void write_run_section(const RunReport& r, nlohmann::json& j);
void write_fabric_sections(const RunReport& r, nlohmann::json& j);
void write_host_sections(const RunReport& r, nlohmann::json& j);
void write_flow_control_section(const RunReport& r, nlohmann::json& j);
void write_transport_section(const RunReport& r, nlohmann::json& j);
void write_workload_section(const RunReport& r, nlohmann::json& j);
void write_energy_section(const RunReport& r, nlohmann::json& j);
// energy.csv: a row per switch, per link class, per collective call and the fabric's total.
std::string energy_csv(const RunReport& r);

}  // namespace fabricsim::sim
