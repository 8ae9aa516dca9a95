#include "models/sim/simulation.h"

#include <sys/resource.h>

#include <chrono>

#include "models/common/error.h"
#include "models/sim/fabric.h"
#include "models/topology/topology.h"
#include "models/topology/traffic_routes.h"

namespace fabricsim::sim {

namespace {

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

void check_inputs(const RunConfig& cfg) {
  if (cfg.traffic.pattern != "trace") return;  // synthetic traffic: RunConfig::validate did it all
  traffic::make_traffic(cfg.traffic, static_cast<int>(cfg.topology.hosts(cfg.tier_ports())),
                        cfg.host_chip().port_speed, static_cast<int>(cfg.sw.traffic_classes),
                        static_cast<uint64_t>(cfg.sim.seed), config_dir(cfg), {}, {},
                        cfg.packet_limit());
  if (cfg.topology.all_pairs_routable()) return;  // rail_only: every line needs a route
  const std::string& f = cfg.traffic.trace_file;
  topo::check_trace_routes(
      topo::build_topology(cfg.topology, cfg.tier_ports(), cfg.sim.seed),
      f.front() == '/' ? f : config_dir(cfg) + "/" + f, static_cast<int>(cfg.sw.traffic_classes),
      cfg.packet_limit(),
      [](const std::string& k, const std::string& m) { throw InputError(k + ": " + m); });
}

RunReport run_simulation(const RunConfig& cfg, const std::string& config_name,
                         const RunOptions& opt) {
  if (!cfg.topology.all_pairs_routable()) check_inputs(cfg);  // a trace's unroutable pairs
  const auto wall0 = std::chrono::steady_clock::now();
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  Fabric fabric("fabric", cfg);
  const RunOutcome outcome = run_phases(fabric, opt, wall0);
  RunReport r = make_report(fabric, config_name, outcome);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.peak_rss_mb = peak_rss_mb();
  return r;
}

}  // namespace fabricsim::sim
