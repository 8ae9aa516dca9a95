// The run's energy from its report and its fabric's configuration (summary.json `energy`,
// energy.csv; docs/results.md "Energy"). Not hardware: arithmetic on the counters the run kept.
#pragma once

#include "models/sim/fabric.h"
#include "models/sim/report.h"

namespace fabricsim::sim {

// `r` holds the switches', links' and workload's reports already.
EnergyReport energy_report(const Fabric& f, const RunReport& r);

}  // namespace fabricsim::sim
