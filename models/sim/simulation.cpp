#include "models/sim/simulation.h"

#include <fmt/format.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include "models/common/error.h"
#include "models/sim/aggregation_setup.h"
#include "models/sim/fabric.h"
#include "models/sim/occupancy_writer.h"
#include "models/topology/bisection.h"
#include "models/topology/topology.h"
#include "models/topology/traffic_routes.h"

namespace fabricsim::sim {

namespace {

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

}  // namespace

void check_inputs(const RunConfig& cfg) {
  // The NICs' inputs, read whole as the run reads them (a message file, a workload's text or
  // Chakra traces), so that `check` refuses what `run` would.
  if (cfg.nic.enabled && cfg.traffic.pattern == "messages") {
    check_message_file(
        cfg, topo::build_topology(cfg.topology, cfg.tier_ports(), cfg.sim.seed, cfg.box_specs()));
    return;
  }
  if (cfg.nic.enabled && cfg.traffic.pattern == "workload") {
    const int hosts = static_cast<int>(cfg.topology.hosts(cfg.tier_ports()));
    std::shared_ptr<const workload::InNetworkPlan> innet;
    if (cfg.sw.aggregation.enabled || !cfg.switch_kinds.empty()) {  // the units, as run has them
      const topo::Topology t = with_aggregation_units(
          topo::build_topology(cfg.topology, cfg.tier_ports(), cfg.sim.seed), cfg);
      innet = aggregation_plan(
          t, cfg,
          workload_hosts(cfg, cfg.workload.ranks ? static_cast<int>(cfg.workload.ranks) : hosts));
    }
    build_workload_graph(cfg, hosts, innet);
    return;
  }
  if (cfg.traffic.pattern != "trace") return;  // synthetic traffic: RunConfig::validate did it all
  traffic::make_traffic(cfg.traffic, static_cast<int>(cfg.topology.hosts(cfg.tier_ports())),
                        cfg.host_chip().port_speed, static_cast<int>(cfg.sw.traffic_classes),
                        static_cast<uint64_t>(cfg.sim.seed), config_dir(cfg), {}, {},
                        cfg.packet_limit());
  if (cfg.topology.all_pairs_routable()) return;  // rail_only: every line needs a route
  const std::string& f = cfg.traffic.trace_file;
  topo::check_trace_routes(
      topo::build_topology(cfg.topology, cfg.tier_ports(), cfg.sim.seed, cfg.box_specs()),
      f.front() == '/' ? f : config_dir(cfg) + "/" + f, static_cast<int>(cfg.sw.traffic_classes),
      cfg.packet_limit(),
      [](const std::string& k, const std::string& m) { throw InputError(k + ": " + m); });
}

std::string topology_summary(const RunConfig& cfg) {
  const topo::Topology t =
      topo::build_topology(cfg.topology, cfg.tier_ports(), cfg.sim.seed, cfg.box_specs());
  std::string s =
      fmt::format("# topology: {}: {} switch{}, {} hosts, {} switch-to-switch cable{}\n",
                  cfg.topology.kind, t.switches(), t.switches() == 1 ? "" : "es", t.hosts,
                  t.wires.size(), t.wires.size() == 1 ? "" : "s");
  for (const topo::Tier& tier : t.tiers) {
    s += fmt::format("#   {}: {} switch{}, {} port{} down", tier.name, tier.switches,
                     tier.switches == 1 ? "" : "es", tier.down, tier.down == 1 ? "" : "s");
    s += tier.up > 0
             ? fmt::format(" and {} up each, oversubscribed {:.3g}:1\n", tier.up, tier.ratio())
             : std::string(" each (top tier)\n");
  }
  for (const topo::Box& b : t.boxes)
    s += fmt::format(
        "#   box {}: {} leaf + {} spine chips of {} ports, {} front ports, {} internal links per "
        "{} pair\n",
        b.name, b.spec.leaves, b.spec.spines, b.spec.chip_ports, b.spec.front_ports,
        b.spec.links_per_pair, b.spec.mesh() ? "leaf" : "leaf-spine");
  std::vector<uint64_t> speed(static_cast<size_t>(t.switches()));
  for (int s = 0; s < t.switches(); ++s)
    speed[s] = cfg.tier_chip(static_cast<size_t>(t.switch_tier[s])).port_speed.as_bps();
  const topo::Bisection b = topo::bisection(t, speed);
  const auto rate = [](uint64_t bps) {
    return bps >= 1000000000000ull ? fmt::format("{:.4g} Tb/s", bps * 1e-12)
                                   : fmt::format("{:.4g} Gb/s", bps * 1e-9);
  };
  if (b.full_bps > 0)
    s += fmt::format(
        "#   bisection bandwidth: {} ({:.3g} of full: hosts/2 x line rate = {}; the minimum "
        "cut halving the hosts {}{})\n",
        rate(b.bps), static_cast<double>(b.bps) / static_cast<double>(b.full_bps), rate(b.full_bps),
        b.split, t.rail_of_host.empty() ? "" : ", with no route across rails");
  const sw::RoutingConfig& r = cfg.sw.routing;
  s += fmt::format("#   longest minimal path: {} switch{}; routing {}{}\n", t.max_switch_hops,
                   t.max_switch_hops == 1 ? "" : "es", r.mode,
                   r.mode == "ecmp" ? " (hash of " + r.hash_fields + ")" : std::string());
  return s;
}

RunReport run_simulation(const RunConfig& cfg, const std::string& config_name,
                         const RunOptions& opt) {
  if (!cfg.topology.all_pairs_routable()) check_inputs(cfg);  // a trace's unroutable pairs
  const auto wall0 = std::chrono::steady_clock::now();
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  // Not destroyed: SystemC's object registries remove an object by a linear search, so tearing
  // down a fabric of 1,024 hosts took 3 G instructions, more than elaborating it and simulating
  // a microsecond (4.7 G in all). SystemC allows one elaboration per process, and the process
  // ends once the results are written; the helper threads are ended first.
  Fabric& fabric = *new Fabric("fabric", cfg);
  // occupancy.csv is written while the run goes, at the runner's steps (occupancy_writer.h).
  RunOptions o = opt;
  std::vector<std::unique_ptr<OccupancySource>> own_sources;
  std::unique_ptr<OccupancyWriter> occupancy;
  std::unique_ptr<FctWriter> fct;  // fct.csv, its rows written as the run goes (fct_writer.h)
  if (!opt.out_dir.empty()) {
    if (nic::NicArray* nics = fabric.nics()) {
      fct = fct_writer(fabric, (std::filesystem::path(opt.out_dir) / "fct.csv").string());
      nics->keep_fct_order();
    }
    // (MPI: the samples of another rank's switch come from that rank: RemoteFabric.)
    std::vector<OccupancySource*> sources;
    for (int s = 0; s < fabric.switch_count(); ++s) {
      if (fabric.switch_here(s))
        sources.push_back(
            own_sources.emplace_back(new CoreOccupancy(&fabric.switch_module(s).core())).get());
      else
        sources.push_back(fabric.remote()->occupancy(s));
    }
    // Test-only: a smaller batch (in values), so that tests see the runner cut its steps short.
    size_t batch = OccupancyWriter::kBatchValues;
    if (const char* b = std::getenv("FABRICSIM_OCCUPANCY_BATCH")) batch = std::stoul(b);
    occupancy = std::make_unique<OccupancyWriter>(
        sources, occupancy_columns(fabric.topology().switch_names, fabric.topology().switch_ports),
        cfg.stats.occupancy_interval,
        (std::filesystem::path(opt.out_dir) / "occupancy.csv").string(), batch);
    o.max_step = occupancy->max_step();
    o.after_step = [&occupancy, &fct, &fabric](Time now) {
      occupancy->advance(now);
      if (fct) fabric.nics()->stream_fct([&fct](const nic::NicArray::Fct& r) { fct->row(r); });
    };
  }
  const RunOutcome outcome = run_phases(fabric, o, wall0);
  if (occupancy) occupancy->finish(outcome.end_time);
  RunReport r = make_report(fabric, config_name, outcome, fct.get());
  if (occupancy) r.occupancy_capped_at = occupancy->capped_at();
  fabric.hosts_module().end_threads();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.peak_rss_mb = peak_rss_mb();
  r.cpu_s = cpu_seconds();
  return r;
}

}  // namespace fabricsim::sim
