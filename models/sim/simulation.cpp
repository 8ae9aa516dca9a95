#include "models/sim/simulation.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>

#include "models/common/cpu_budget.h"
#include "models/link/link_module.h"
#include "models/switch/switch_module.h"
#include "models/topology/topology.h"
#include "models/traffic/endpoint_module.h"
#include "models/traffic/prefetch_source.h"
#include "rtl/credit_unit_rtl.h"

namespace fabricsim::sim {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_saved[std::size(kStopSignals)];  // the handlers an InterruptGuard replaced
volatile std::sig_atomic_t g_interrupted = 0;       // the first stop signal received, or 0
void on_stop_signal(int sig) {
  if (!g_interrupted) g_interrupted = sig;
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

// Relative trace paths resolve against the configuration file's folder.
std::string config_dir(const RunConfig& cfg) {
  const std::string d =
      cfg.source_path.empty() ? "." : std::filesystem::path(cfg.source_path).parent_path().string();
  return d.empty() ? "." : d;
}

}  // namespace

void check_inputs(const RunConfig& cfg) {
  if (cfg.traffic.pattern != "trace") return;  // synthetic traffic: RunConfig::validate did it all
  traffic::make_traffic(cfg.traffic, static_cast<int>(cfg.topology.hosts(cfg.sw.ports)),
                        cfg.sw.port_speed, static_cast<int>(cfg.sw.traffic_classes),
                        static_cast<uint64_t>(cfg.sim.seed), config_dir(cfg), {}, {},
                        cfg.packet_limit());
}

InterruptGuard::InterruptGuard() {
  g_interrupted = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &sa, &g_saved[i]);
}

InterruptGuard::~InterruptGuard() {
  for (size_t i = 0; i < std::size(kStopSignals); ++i)
    sigaction(kStopSignals[i], &g_saved[i], nullptr);
}

int InterruptGuard::signal_received() {
  return g_interrupted;
}

RunReport run_simulation(const RunConfig& cfg_in, const std::string& config_name,
                         const RunOptions& opt) {
  RunConfig cfg = cfg_in;
  const auto wall0 = std::chrono::steady_clock::now();
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);

  const int ports = static_cast<int>(cfg.sw.ports);
  const Time win_start = cfg.sim.warmup, win_end = cfg.sim.duration;
  const auto seed = static_cast<uint64_t>(cfg.sim.seed);
  const topo::Topology topology = topo::build_topology(cfg.topology, ports, seed);
  const int hosts = topology.hosts;
  const int nsw = topology.switches();

  const FrameOverhead overhead = cfg.link.overhead();
  const Time link_latency = cfg.link.latency();
  // Breakout (link.port_lanes): each switch port's rate, and each host's (its port's).
  std::vector<BitRate> port_rates;
  for (int p = 0; p < ports; ++p) port_rates.push_back(cfg.link.port_rate(p, cfg.sw.port_speed));
  for (const auto& w : topology.wires)
    if (cfg.link.lanes_of(w.a.port) != cfg.link.lanes_of(w.b.port))
      throw InputError(fmt::format(
          "link.port_lanes: switch ports {} and {} are linked but have {} and {} lanes", w.a.port,
          w.b.port, cfg.link.lanes_of(w.a.port), cfg.link.lanes_of(w.b.port)));
  std::vector<BitRate> host_rates;
  std::vector<uint32_t> host_slowdown;
  for (int h = 0; h < hosts; ++h) {
    const int lanes = cfg.link.lanes_of(topology.host_port[h].port);
    host_rates.push_back(port_rates[topology.host_port[h].port]);
    host_slowdown.push_back(static_cast<uint32_t>(cfg.link.phy.lanes_per_subport() / lanes));
  }
  auto source = traffic::make_traffic(cfg.traffic, hosts, cfg.sw.port_speed,
                                      static_cast<int>(cfg.sw.traffic_classes), seed,
                                      config_dir(cfg), overhead, host_slowdown, cfg.packet_limit());
  // The helper threads only pay with a CPU of their own: on one they took turns with the
  // simulation and ran it ~1.5x slower (results are the same either way).
  const bool helper_threads = cfg.sim.traffic_thread && usable_cpus() >= 2;
  if (helper_threads) source = std::make_unique<traffic::PrefetchSource>(std::move(source));
  traffic::TrafficSourceModule src("hosts_tx", std::move(source), hosts, cfg.sw.port_speed,
                                   win_start, win_end, overhead, link_latency);
  sw::MacConfig mac;
  mac.port_rates = port_rates;
  mac.overhead = overhead;
  mac.flow_control = &cfg.flow_control;
  mac.headroom_per_pg = cfg.pfc_headroom();
  // An IB flow-control packet on the wire, less the framing the MAC adds.
  if (cfg.flow_control.credit_mode() && cfg.flow_control.credit.impl == "rtl")
    mac.credit_unit = [](int, uint16_t initial) -> std::unique_ptr<link::CreditUnitIf> {
      return rtl::CreditUnitRtl::create(initial);  // the Verilated credit unit, per sender
    };
  mac.fc_frame_bytes = static_cast<uint32_t>(
      std::max<int64_t>(1, cfg.link.ib_fc_packet_bytes - overhead.lead - overhead.gap));
  // Lane failure (link.phy.lane_failure): one host's link, or every link, drops to fewer lanes.
  const bool failure = !cfg.link.ideal() && cfg.link.phy.lane_failure();
  const int64_t fail_host = cfg.link.phy.fail_host;  // < hosts (RunConfig::validate)
  link::LinkConfig healthy_link = cfg.link;
  healthy_link.phy.fail_lanes_left = 0;
  // The failure is a change of rate at one time, for the ports and hosts on the failed links.
  const BitRate slow_rate =
      failure ? cfg.link.phy.degraded_wire_format().mac_rate() : cfg.sw.port_speed;
  const Time change_at = failure ? cfg.link.phy.fail_time : Time::max();
  std::vector<BitRate> host_rates_after = host_rates;
  for (int h = 0; h < hosts && failure; ++h)
    if (fail_host < 0 || fail_host == h) host_rates_after[h] = slow_rate;
  src.set_host_rates(host_rates, host_rates_after, change_at);
  std::vector<std::unique_ptr<sw::SwitchModule>> switches;
  for (int s = 0; s < nsw; ++s) {
    sw::MacConfig m = mac;
    m.rates_change_at = change_at;
    m.port_rates_after = port_rates;
    for (int p = 0; p < ports && failure; ++p)
      if (fail_host < 0) m.port_rates_after[p] = slow_rate;
    if (failure && fail_host >= 0 && topology.host_port[fail_host].sw == s)
      m.port_rates_after[topology.host_port[fail_host].port] = slow_rate;
    switches.push_back(std::make_unique<sw::SwitchModule>(topology.switch_names[s].c_str(), cfg.sw,
                                                          topology.tables[s], seed, m));
  }
  // The hosts' MACs: PFC hosts obey pauses (and never send one: they consume at line rate);
  // credit hosts send with credits and return credits for what they receive.
  link::FlowControl host_fc(cfg.flow_control, hosts, cfg.sw.port_speed, mac.headroom_per_pg,
                            cfg.sw.buffer_size, mac.fc_frame_bytes, mac.credit_unit);
  src.set_flow_control(&host_fc);
  src.set_ect(cfg.traffic.ect);
  traffic::TrafficSinkModule sink("hosts_rx", hosts, win_start, win_end,
                                  static_cast<int>(cfg.stats.histogram_bits), link_latency,
                                  helper_threads);
  if (host_fc.enabled()) sink.set_rx_handler(&src, host_fc.credit());
  // Wiring: hosts (through links unless those are ideal), then switch-to-switch links, then
  // terminators on the ports left over.
  std::vector<std::vector<int>> port_host(nsw, std::vector<int>(ports, -1));
  std::vector<std::vector<bool>> wired(nsw, std::vector<bool>(ports, false));
  std::vector<std::unique_ptr<link::LinkModule>> links;
  auto make_link = [&](const std::string& name, bool fails) {
    links.push_back(std::make_unique<link::LinkModule>(
        name.c_str(), fails ? cfg.link : healthy_link, seed, win_start, win_end));
    return links.back().get();
  };
  for (int h = 0; h < hosts; ++h) {
    const auto [s, p] = topology.host_port[h];
    if (cfg.link.ideal()) {  // nothing to model: bind the ports directly (saves a call a hop)
      src.out[h].bind(switches[s]->in[p]);
      switches[s]->out[p].bind(sink.in[h]);
    } else {
      auto* l = make_link(fmt::format("link_host{}_{}_p{}", h, topology.switch_names[s], p),
                          fail_host < 0 || fail_host == h);
      src.out[h].bind(l->from_a);
      l->to_b.bind(switches[s]->in[p]);
      switches[s]->out[p].bind(l->from_b);
      l->to_a.bind(sink.in[h]);
    }
    port_host[s][p] = h;
    wired[s][p] = true;
  }
  for (const auto& w : topology.wires) {
    auto* l = make_link(fmt::format("link_{}_p{}_{}_p{}", topology.switch_names[w.a.sw], w.a.port,
                                    topology.switch_names[w.b.sw], w.b.port),
                        fail_host < 0);
    switches[w.a.sw]->out[w.a.port].bind(l->from_a);
    l->to_b.bind(switches[w.b.sw]->in[w.b.port]);
    switches[w.b.sw]->out[w.b.port].bind(l->from_b);
    l->to_a.bind(switches[w.a.sw]->in[w.a.port]);
    wired[w.a.sw][w.a.port] = wired[w.b.sw][w.b.port] = true;
  }
  std::vector<std::unique_ptr<link::UnconnectedPort>> unconnected;
  for (int s = 0; s < nsw; ++s)
    for (int p = 0; p < ports; ++p)
      if (!wired[s][p]) {
        const std::string name = fmt::format("{}_p{}_unconnected", topology.switch_names[s], p);
        unconnected.push_back(std::make_unique<link::UnconnectedPort>(name.c_str()));
        switches[s]->out[p].bind(unconnected.back()->in);
      }
  for (auto& sw : switches) {
    sw->core().set_window(win_start, win_end);
    sw->core().set_occupancy_interval(cfg.stats.occupancy_interval);
  }
  // Test-only fault injection, so that tests can prove a broken model fails the run.
  if (const char* fault = std::getenv("FABRICSIM_FAULT");
      fault && std::string(fault) == "leak_cell")
    switches.back()->core().inject_cell_leak();
  auto measured_in_flight = [&] {
    uint64_t n = 0;
    for (auto& sw : switches) n += sw->core().measured_in_flight();
    return n;
  };

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

  // Flow-control statistics at the start of the measurement window, so that the figures in the
  // results cover the window like every other statistic.
  std::vector<std::vector<link::FlowControl::PortStats>> fc_at_start(nsw);
  std::vector<link::FlowControl::PortStats> host_fc_at_start;
  bool window_open = false;
  auto snapshot = [&] {
    window_open = true;
    for (int s = 0; s < nsw; ++s)
      for (int p = 0; p < ports; ++p)
        fc_at_start[s].push_back(switches[s]->core().flow_control().port_stats(p, win_start));
    for (int h = 0; h < hosts; ++h) host_fc_at_start.push_back(host_fc.port_stats(h, win_start));
  };
  while (now() < cfg.sim.duration && !g_interrupted) {
    const Time stop = window_open ? cfg.sim.duration : win_start;
    sc_core::sc_start(to_sc(std::min(chunk, stop - now())));
    if (!window_open && now() >= win_start) snapshot();
    progress("run");
  }
  if (!window_open) snapshot();  // interrupted before the window opened
  // Drain: traffic keeps flowing (so measured packets see the same load) until every packet that
  // was injected inside the window has left or been dropped, or the drain limit is reached.
  while (measured_in_flight() > 0 && now() < limit && !g_interrupted) {
    sc_core::sc_start(to_sc(std::min(chunk, limit - now())));
    progress("drain");
  }
  src.stop();
  if (tty) std::fprintf(stderr, "\n");

  RunReport r;
  r.config_name = config_name;
  r.config = config::to_json(cfg);
  r.seed = cfg.sim.seed;
  r.interrupted = g_interrupted != 0;
  r.end_time = now();
  r.window_start = win_start;
  r.window_end = std::min(win_end, std::max(win_start, r.end_time));
  r.hosts = hosts;
  const double window_s = (r.window_end - r.window_start).as_s();
  // Loads are fractions of capacity: of a port's own rate, and of all hosts' links together.
  auto load = [&](double bytes, double capacity_bps) {
    return window_s > 0 ? bytes * 8.0 / (capacity_bps * window_s) : 0.0;
  };

  double off = 0, acc = 0;
  double host_capacity = 0;
  for (int h = 0; h < hosts; ++h) {
    off += src.win_injected_bytes()[h].total();
    acc += sink.win_delivered_bytes()[h].total();
    host_capacity += static_cast<double>(host_rates[h].as_bps());
  }
  r.offered_load = load(off, host_capacity);
  r.accepted_load = load(acc, host_capacity);
  r.latency = latency_report(sink.latency_fs());
  r.injected = src.injected();
  r.delivered = sink.delivered();
  r.ce_delivered = sink.ce_marked();
  r.reordered = sink.reordered();
  r.win_injected = src.win_injected();
  r.win_delivered = sink.win_delivered();
  stats::Registry counters;
  Time until;
  for (int s = 0; s < nsw; ++s) {
    auto& core = switches[s]->core();
    until = core.finalize_window(r.end_time);
    SwitchReport sr;
    sr.name = topology.switch_names[s];
    sr.buffer_capacity_bytes = static_cast<double>(core.buffer().total_cells()) *
                               static_cast<double>(cfg.sw.cell_size.count());
    sr.buffer_peak_bytes = core.buffer_peak_bytes();
    sr.buffer_mean_bytes = core.buffer_mean_bytes(until);
    sr.received = core.received();
    sr.departed = core.departed();
    sr.dropped = core.dropped();
    sr.in_flight = core.in_flight();
    sr.underruns = core.underruns();
    sr.ecn_packets = core.ecn_packets();
    sr.ecn_marked = core.ecn_marked();
    sr.ecn_bin_bytes = core.ecn_bin_bytes();
    for (const auto& b : core.ecn_bins()) sr.ecn_bins.emplace_back(b.packets, b.marked);
    for (int p = 0; p < ports; ++p) {
      const auto& pc = core.port_counters()[p];
      PortReport pr;
      pr.host = port_host[s][p];
      pr.rx_packets = pc.rx_packets;
      pr.rx_bytes = pc.rx_bytes;
      pr.tx_packets = pc.tx_packets;
      pr.tx_bytes = pc.tx_bytes;
      pr.drops = pc.drops;
      pr.offered_load = load(pc.win_rx_bytes.total(), static_cast<double>(port_rates[p].as_bps()));
      pr.accepted_load = load(pc.win_tx_bytes.total(), static_cast<double>(port_rates[p].as_bps()));
      if (pr.host >= 0) pr.latency = latency_report(sink.port_latency_fs(pr.host));
      pr.buffer_peak_bytes = core.port_peak_bytes(p);
      pr.buffer_mean_bytes = core.port_mean_bytes(p, until);
      pr.fc = core.flow_control().port_stats(p, r.end_time).since(fc_at_start[s][p]);
      pr.control_frames_sent = core.control_frames_sent(p);
      pr.ecn_marked = core.ecn_marked(p);
      pr.underruns = pc.underruns;
      pr.underrun_ns = pc.underrun_time.as_ns();
      sr.ports.push_back(pr);
    }
    r.dropped += sr.dropped;
    r.in_flight += sr.in_flight;
    r.win_dropped += core.win_dropped();
    r.win_in_flight += core.measured_in_flight();
    if (s == 0 || sr.buffer_peak_bytes > r.buffer_peak_bytes) {
      r.buffer_switch = sr.name;
      r.buffer_capacity_bytes = sr.buffer_capacity_bytes;
      r.buffer_peak_bytes = sr.buffer_peak_bytes;
      r.buffer_mean_bytes = sr.buffer_mean_bytes;
    }
    core.register_stats(counters, sr.name);
    r.switches.push_back(std::move(sr));
  }
  r.counters = counters.to_json();

  // Conservation laws across the whole run: per switch (in the switch's own checks), per link
  // (every frame handed to a link came from a source or a switch, and every frame it delivered
  // went to a switch or a sink) and end to end.
  uint64_t received = 0, departed = 0, entered = 0, lost = 0, win_lost = 0;
  for (int s = 0; s < nsw; ++s) {
    auto v = switches[s]->core().check_invariants();
    r.violations.insert(r.violations.end(), v.begin(), v.end());
    received += switches[s]->core().received();
    departed += switches[s]->core().departed();
  }
  for (const auto& l : links)
    for (const auto* d : {&l->a_to_b(), &l->b_to_a()}) {
      entered += d->frames;
      lost += d->lost;
      win_lost += d->win_lost;
    }
  r.link_lost = lost;
  r.dropped += lost;
  r.win_dropped += win_lost;
  r.drained = r.win_in_flight == 0;
  // Per link direction: handed over = delivered + lost. Links carry what the switches and hosts
  // send and deliver what they receive (with ideal links, hosts bind to switches directly: then
  // the links carry only switch-to-switch traffic).
  const bool ideal = cfg.link.ideal();
  const uint64_t should_enter = ideal ? departed - r.delivered : departed + r.injected;
  const uint64_t should_leave = ideal ? received - r.injected : received + r.delivered;
  if (entered != should_enter || entered - lost != should_leave)
    r.violations.push_back(fmt::format(
        "links: handed {} packets, delivered {}, lost {}; but the switches sent {} and received "
        "{}, the hosts injected {} and received {}",
        entered, entered - lost, lost, departed, received, r.injected, r.delivered));
  if (r.injected != r.delivered + r.dropped + r.in_flight)
    r.violations.push_back(fmt::format("injected {} != delivered {} + dropped {} + in flight {}",
                                       r.injected, r.delivered, r.dropped, r.in_flight));
  if (r.win_injected != r.win_delivered + r.win_dropped + r.win_in_flight)
    r.violations.push_back(
        fmt::format("window: injected {} != delivered {} + dropped {} + in flight {}",
                    r.win_injected, r.win_delivered, r.win_dropped, r.win_in_flight));
  r.flow_control_mode = cfg.flow_control.mode;
  for (int h = 0; h < hosts; ++h)
    r.host_fc.push_back(host_fc.port_stats(h, r.end_time).since(host_fc_at_start[h]));
  host_fc.check_invariants(r.violations);
  for (auto& sw : switches) {
    std::vector<std::string> v;
    sw->core().flow_control().check_invariants(v);
    for (auto& m : v) r.violations.push_back(sw->core().name() + ": " + m);
  }
  r.host_queued = src.queued_packets();
  r.host_backlog = src.backlog();
  r.host_wait_mean_ns =
      r.host_queued ? src.queue_wait_total().as_ns() / static_cast<double>(r.host_queued) : 0.0;
  r.host_wait_max_ns = src.queue_wait_max().as_ns();

  // Occupancy: every switch samples at the same instants; columns are per switch port.
  for (int s = 0; s < nsw; ++s)
    for (int p = 0; p < ports; ++p)
      r.occupancy_columns.push_back(
          nsw == 1 ? fmt::format("port{}_bytes", p)
                   : fmt::format("{}.port{}_bytes", topology.switch_names[s], p));
  for (int s = 0; s < nsw; ++s) {
    const auto& samples = switches[s]->core().occupancy_samples(r.end_time);
    if (s == 0) r.occupancy.resize(samples.size());
    for (size_t k = 0; k < samples.size() && k < r.occupancy.size(); ++k) {
      auto& o = r.occupancy[k];
      o.t_ns = samples[k].t.as_ns();
      o.total_bytes += samples[k].total_bytes;
      o.port_bytes.insert(o.port_bytes.end(), samples[k].port_bytes.begin(),
                          samples[k].port_bytes.end());
    }
  }

  for (auto& sw : switches) r.active_cycles += sw->active_cycles();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.helper_threads = helper_threads;
  r.peak_rss_mb = peak_rss_mb();
  return r;
}

}  // namespace fabricsim::sim
