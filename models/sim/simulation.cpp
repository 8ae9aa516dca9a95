#include "models/sim/simulation.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "models/switch/switch_module.h"
#include "models/traffic/endpoint_module.h"
#include "models/traffic/prefetch_source.h"

namespace fabricsim::sim {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_sigint(int) {
  g_interrupted = 1;
}

LatencyReport latency_report(const stats::Histogram& h) {
  LatencyReport r;
  r.count = h.count();
  if (r.count == 0) return r;
  constexpr double kNs = 1e-6;  // histograms hold femtoseconds
  r.mean = h.mean() * kNs;
  r.min = static_cast<double>(h.min()) * kNs;
  r.p50 = static_cast<double>(h.percentile(0.5)) * kNs;
  r.p99 = static_cast<double>(h.percentile(0.99)) * kNs;
  r.p999 = static_cast<double>(h.percentile(0.999)) * kNs;
  r.max = static_cast<double>(h.max()) * kNs;
  return r;
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

RunReport run_simulation(const RunConfig& cfg_in, const std::string& config_name,
                         const RunOptions& opt) {
  RunConfig cfg = cfg_in;
  const auto wall0 = std::chrono::steady_clock::now();
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);

  const int n = static_cast<int>(cfg.sw.ports);
  const Time win_start = cfg.sim.warmup, win_end = cfg.sim.duration;
  const auto seed = static_cast<uint64_t>(cfg.sim.seed);
  const std::string base_dir =
      cfg.source_path.empty() ? "." : std::filesystem::path(cfg.source_path).parent_path().string();

  auto source = traffic::make_traffic(cfg.traffic, n, cfg.sw.port_speed,
                                      static_cast<int>(cfg.sw.traffic_classes), seed,
                                      base_dir.empty() ? "." : base_dir);
  if (cfg.sim.traffic_thread) source = std::make_unique<traffic::PrefetchSource>(std::move(source));
  traffic::TrafficSourceModule src("hosts_tx", std::move(source), n, cfg.sw.port_speed, win_start,
                                   win_end);
  sw::SwitchModule sw("switch", cfg.sw, sw::ForwardingTable::identity(n), seed);
  traffic::TrafficSinkModule sink("hosts_rx", n, win_start, win_end,
                                  static_cast<int>(cfg.stats.histogram_bits));
  for (int i = 0; i < n; ++i) {
    src.out[i].bind(sw.in[i]);
    sw.out[i].bind(sink.in[i]);
  }
  sw.core().set_window(win_start, win_end);
  // Test-only fault injection, so that tests can prove a broken model fails the run.
  if (const char* fault = std::getenv("FABRICSIM_FAULT");
      fault && std::string(fault) == "leak_cell")
    sw.core().inject_cell_leak();
  sw.core().set_occupancy_interval(cfg.stats.occupancy_interval);

  g_interrupted = 0;
  auto old_handler = std::signal(SIGINT, on_sigint);
  const bool tty = opt.progress && isatty(fileno(stderr));
  const Time limit = cfg.sim.duration + cfg.sim.drain_limit;
  const Time chunk = Time::fs(std::max<int64_t>(cfg.sim.duration.as_fs() / 200, 1));
  auto now = [] { return from_sc(sc_core::sc_time_stamp()); };
  auto progress = [&](const char* phase) {
    if (!tty) return;
    const double frac = std::min(1.0, now().as_s() / cfg.sim.duration.as_s());
    const double el =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const double eta = frac > 0 ? el * (1 - frac) / frac : 0;
    std::fprintf(stderr, "\r[fabricsim] %s %s / %s  %5.1f%%  ETA %.0fs   ", phase,
                 now().str().c_str(), cfg.sim.duration.str().c_str(), frac * 100, eta);
  };

  while (now() < cfg.sim.duration && !g_interrupted) {
    sc_core::sc_start(to_sc(std::min(chunk, cfg.sim.duration - now())));
    progress("run");
  }
  // Drain: traffic keeps flowing (so measured packets see the same load) until every packet that
  // arrived inside the window has left or been dropped, or the drain limit is reached.
  while (sw.core().measured_in_flight() > 0 && now() < limit && !g_interrupted) {
    sc_core::sc_start(to_sc(std::min(chunk, limit - now())));
    progress("drain");
  }
  src.stop();
  if (tty) std::fprintf(stderr, "\n");
  std::signal(SIGINT, old_handler);

  RunReport r;
  r.config_name = config_name;
  r.config = config::to_json(cfg);
  r.seed = cfg.sim.seed;
  r.interrupted = g_interrupted != 0;
  r.end_time = now();
  r.window_start = win_start;
  r.window_end = std::min(win_end, std::max(win_start, r.end_time));
  auto& core = sw.core();
  const Time until = core.finalize_window(r.end_time);
  const double window_s = (r.window_end - r.window_start).as_s();
  const double port_bps = static_cast<double>(cfg.sw.port_speed.as_bps());
  auto load = [&](uint64_t bytes, int ports) {
    return window_s > 0 ? static_cast<double>(bytes) * 8.0 / (port_bps * ports * window_s) : 0.0;
  };

  uint64_t off = 0, acc = 0;
  r.ports.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto& pc = core.port_counters()[i];
    PortReport& p = r.ports[i];
    p.rx_packets = pc.rx_packets;
    p.rx_bytes = pc.rx_bytes;
    p.tx_packets = pc.tx_packets;
    p.tx_bytes = pc.tx_bytes;
    p.drops = pc.drops;
    p.offered_load = load(src.win_injected_bytes()[i], 1);
    p.accepted_load = load(sink.win_delivered_bytes()[i], 1);
    p.latency = latency_report(sink.port_latency_fs(i));
    p.buffer_peak_bytes = core.port_peak_bytes(i);
    p.buffer_mean_bytes = core.port_mean_bytes(i, until);
    off += src.win_injected_bytes()[i];
    acc += sink.win_delivered_bytes()[i];
  }
  r.offered_load = load(off, n);
  r.accepted_load = load(acc, n);
  r.latency = latency_report(sink.latency_fs());
  r.buffer_capacity_bytes = static_cast<double>(core.buffer().total_cells()) *
                            static_cast<double>(cfg.sw.cell_size.count());
  r.buffer_peak_bytes = core.buffer_peak_bytes();
  r.buffer_mean_bytes = core.buffer_mean_bytes(until);
  r.injected = src.injected();
  r.delivered = sink.delivered();
  r.dropped = core.dropped();
  r.in_flight = core.in_flight();
  r.win_injected = src.win_injected();
  r.win_delivered = sink.win_delivered();
  r.win_dropped = core.win_dropped();
  r.win_in_flight = core.measured_in_flight();
  r.drained = r.win_in_flight == 0;
  stats::Registry counters;
  core.register_stats(counters, "switch");
  r.counters = counters.to_json();

  // Conservation laws across the whole run.
  r.violations = core.check_invariants();
  if (r.injected != core.received())
    r.violations.push_back(fmt::format("hosts injected {} packets but the switch received {}",
                                       r.injected, core.received()));
  if (r.delivered != core.departed())
    r.violations.push_back(
        fmt::format("switch sent {} packets but hosts received {}", core.departed(), r.delivered));
  if (r.injected != r.delivered + r.dropped + r.in_flight)
    r.violations.push_back(fmt::format("injected {} != delivered {} + dropped {} + in flight {}",
                                       r.injected, r.delivered, r.dropped, r.in_flight));
  if (r.win_injected != r.win_delivered + r.win_dropped + r.win_in_flight)
    r.violations.push_back(
        fmt::format("window: injected {} != delivered {} + dropped {} + in flight {}",
                    r.win_injected, r.win_delivered, r.win_dropped, r.win_in_flight));

  for (const auto& s : core.occupancy_samples(r.end_time))
    r.occupancy.push_back({s.t.as_ns(), s.total_bytes, s.port_bytes});

  r.active_cycles = sw.active_cycles();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.peak_rss_mb = peak_rss_mb();
  return r;
}

}  // namespace fabricsim::sim
