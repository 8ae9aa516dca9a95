// Runs one simulation as `fabricsim run` does: elaborates the Fabric from the configuration
// (models/sim/fabric.h), runs it through warm-up, window and drain (runner.h), and gathers the
// report with its conservation verdict (report.h); results.h writes the files.
#pragma once

#include <string>

#include "models/sim/report.h"
#include "models/sim/run_config.h"
#include "models/sim/runner.h"

namespace fabricsim::sim {

// Checks the inputs a configuration names besides itself (a trace file: every line), as the run
// would; throws InputError naming the file and line. `fabricsim check` calls it.
void check_inputs(const RunConfig& cfg);

// What the topology builder makes of `cfg`, as YAML comment lines for `fabricsim check`: the
// kind, switches, hosts and cables; per tier its switches, ports down and up and its
// oversubscription; the bisection bandwidth (topology/bisection.h); the longest minimal path and
// the routing in use.
std::string topology_summary(const RunConfig& cfg);

// Elaborates and runs. With opt.out_dir, streams occupancy.csv into it during the run (the other
// result files are results.h's). Throws InputError for bad input found while building (e.g. a
// trace), std::runtime_error if occupancy.csv cannot be written.
// May be called once per process (SystemC allows one elaboration).
RunReport run_simulation(const RunConfig& cfg, const std::string& config_name,
                         const RunOptions& opt);

}  // namespace fabricsim::sim
