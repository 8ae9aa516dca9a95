#include "models/sim/results.h"
#include "models/sim/summary_sections.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "fabricsim_version.h"
#include "models/common/csv.h"
#include "models/common/huge_pages.h"
#include "models/traffic/text_fields.h"

namespace fabricsim::sim {

namespace {

// Into the run's private folder: a failure leaves the published set as it was (output_dir.h).
void write_file(const std::filesystem::path& p, std::string_view text) {
  std::FILE* f = std::fopen(p.c_str(), "wb");
  int err = f ? 0 : errno;
  if (f && std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno;
  if (f && std::fclose(f) != 0 && !err) err = errno;
  if (err)
    throw std::runtime_error("cannot write " + p.filename().string() + ": " + std::strerror(err));
}

// ports.csv's columns from in_packets_run to underrun_ns_run, and how they print.
auto port_figure_values(const PortReport& p) {
  return std::make_tuple(
      p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes, p.drops, p.offered_load, p.accepted_load,
      p.latency.count, p.latency.mean, p.latency.p50, p.latency.p99, p.latency.p999, p.latency.max,
      p.buffer_peak_bytes, p.buffer_mean_bytes, p.fc.pause_sent, p.fc.pause_received,
      p.fc.paused_ns, p.fc.headroom_peak_bytes, p.fc.lossless_drops, p.fc.fc_packets_sent,
      p.fc.credit_stall_ns, p.control_frames_sent, p.ecn_marked, p.underruns, p.underrun_ns);
}

void port_figures(fmt::memory_buffer& out, const PortReport& p) {
  // (FMT_COMPILE: the format parsed at build time; parsing it per row was half the cost of a
  // 64-port chip's rows.)
  std::apply(
      [&out](const auto&... v) {
        fmt::format_to(std::back_inserter(out),
                       FMT_COMPILE("{},{},{},{},{},{:.6f},{:.6f},{},{:.3f},{:.3f},{:.3f},{:.3f},"
                                   "{:.3f},{:.0f},{:.1f},{},{},{:.3f},{},{},{},{:.3f},{},{},{},"
                                   "{:.3f}"),
                       v...);
      },
      port_figure_values(p));
}

// Equal to the bit (a -0.0 prints as "-0.000", unlike 0.0).
template <class T>
bool same_bits_one(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  else
    return a == b;
}
template <class... T>
bool same_bits(const std::tuple<T...>& a, const std::tuple<T...>& b) {
  return std::apply(
      [&b](const auto&... x) {
        return std::apply([&x...](const auto&... y) { return (same_bits_one(x, y) && ...); }, b);
      },
      a);
}

}  // namespace

const std::vector<SummarySection>& summary_sections() {
  static const std::vector<SummarySection> kSections = {
      {"window, throughput, latency_ns", write_run_section},
      {"buffer, switches, hosts, topology, load_balance, packets", write_fabric_sections},
      {"flow_control", write_flow_control_section},
      {"host_queues, flow_events, occupancy_csv_ends_ns", write_host_sections},
      {"transport", write_transport_section},
      {"workload", write_workload_section},
      {"energy", write_energy_section},
  };
  return kSections;
}

nlohmann::json summary_json(const RunReport& r) {
  nlohmann::json j;
  // Bumped when a documented key changes meaning or goes away (docs/results.md); new keys do not.
  j["schema_version"] = kSummarySchemaVersion;
  j["fabricsim_version"] = FABRICSIM_VERSION;
  j["config_name"] = r.config_name;
  j["seed"] = r.seed;
  j["interrupted"] = r.interrupted;
  for (const SummarySection& s : summary_sections()) s.write(r, j);
  j["counters"] = r.counters;
  j["invariants"] = {{"ok", r.violations.empty()}, {"violations", r.violations}};
  j["config"] = r.config;
  return j;
}

nlohmann::json perf_json(const RunReport& r, Time cycle) {
  const double sim_s = r.end_time.as_s();
  const auto sim_cycles = static_cast<uint64_t>(r.end_time.as_fs() / cycle.as_fs());
  return {{"schema_version", kPerfSchemaVersion},
          {"wall_s", r.wall_s},
          {"sim_ns", r.end_time.as_ns()},
          {"sim_cycles", sim_cycles},
          {"active_cycles", r.active_cycles},
          {"cycles_per_s", r.wall_s > 0 ? static_cast<double>(sim_cycles) / r.wall_s : 0.0},
          {"packets_per_s", r.wall_s > 0 ? static_cast<double>(r.delivered) / r.wall_s : 0.0},
          {"slowdown", sim_s > 0 ? r.wall_s / sim_s : 0.0},
          {"cpu_s", r.cpu_s},
          {"cpu_slowdown", sim_s > 0 ? r.cpu_s / sim_s : 0.0},
          {"peak_rss_mb", r.peak_rss_mb},
          {"helper_threads", r.helper_threads},
          {"lookahead_cycles", r.lookahead_cycles},
          {"threads", r.threads},
          {"worker_windows", r.worker_windows},
          {"host_windows", r.host_windows},
          {"main_wait_s", r.main_wait_s},
          {"worker_wait_s", r.worker_wait_s},
          {"worker_idle_s", r.worker_idle_s},
          {"switches", r.switch_count},
          {"main_thread_switches", r.main_thread_switches},
          {"side_switches", r.side_switches},
          {"side_runs", r.side_runs},
          {"cross_side_calls", r.cross_side_calls},
          {"mpi_ranks", r.mpi_ranks},
          {"mpi_exchanges", r.mpi_exchanges},
          {"mpi_bytes", r.mpi_bytes},
          {"mpi_cpu_s", r.mpi_cpu_s},
          {"mpi_wait_s", r.mpi_wait_s},
          {"mpi_busy_s", r.mpi_busy_s},
          {"interrupted", r.interrupted},
          {"heap_huge_pages", heap_huge_pages()}};
}

uint64_t occupancy_min_bytes(const RunConfig& cfg) {
  if (cfg.stats.occupancy_interval == Time()) return 0;
  const topo::TierPorts ports = cfg.tier_ports();
  int64_t fewest = ports[0];
  for (size_t t = 1; t < cfg.tiers(); ++t) fewest = std::min(fewest, ports[t]);
  // A row: the time ("0.000" at least), total_bytes and a value per port, each ",0" at least.
  const double values = 1.0 + static_cast<double>(cfg.topology.switch_count(ports) * fewest);
  const double rows = std::floor(cfg.sim.duration.as_s() / cfg.stats.occupancy_interval.as_s());
  return static_cast<uint64_t>(rows * (5.0 + 2.0 * values + 1.0));
}

void write_results(const RunReport& r, Time cycle, const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  write_file(d / "summary.json", summary_json(r).dump(2) + "\n");
  write_file(d / "perf.json", perf_json(r, cycle).dump(2) + "\n");

  // One row per switch port. Column groups: whole-run counters (in_* at the ingress, out_* at the
  // egress of this port); window figures: load into this port and out of it (fraction of port
  // capacity), latency of packets delivered to the host on this port, and the buffer held for it.
  // (fmt's own buffer, not a std::string: a string grows through resize per field.)
  fmt::memory_buffer csv;
  csv.append(std::string_view(
      "switch,port,host,in_packets_run,in_bytes_run,out_packets_run,out_bytes_run,drops_run,"
      "offered_load_in,accepted_load_out,latency_count_out,latency_mean_ns_out,"
      "latency_p50_ns_out,latency_p99_ns_out,latency_p999_ns_out,latency_max_ns_out,"
      "buffer_peak_bytes_out,buffer_mean_bytes_out,pause_frames_sent,pause_frames_received,"
      "paused_ns,"
      "headroom_peak_bytes,lossless_drops,fc_packets_sent,credit_stall_ns,control_frames_sent,ecn_"
      "marked,underruns_run,underrun_ns_run,peer,peer_port\n"));
  // A chip's idle ports (a k = 8 fat tree wires 8 of 128) all print the same figures: those of
  // a default PortReport, formatted once.
  fmt::memory_buffer idle;
  port_figures(idle, PortReport{});
  const auto idle_figures = port_figure_values(PortReport{});
  for (const auto& sr : r.switches) {
    const std::string name = csv_field(sr.name);
    for (size_t i = 0; i < sr.ports.size(); ++i) {
      const auto& p = sr.ports[i];
      fmt::format_to(std::back_inserter(csv), FMT_COMPILE("{},{},{},"), name, i, p.host);
      if (same_bits(port_figure_values(p), idle_figures))
        csv.append(idle);
      else
        port_figures(csv, p);
      fmt::format_to(std::back_inserter(csv), FMT_COMPILE(",{},{}\n"), csv_field(p.peer),
                     p.peer_port);
    }
  }
  write_file(d / "ports.csv", {csv.data(), csv.size()});

  // One row per direction of every cable (host links first, then switch-to-switch wires).
  fmt::memory_buffer links;
  links.append(std::string_view(
      "wire,from,from_port,to,to_port,rate_gbps,frames_run,bytes_run,lost_frames_run,utilisation,"
      "paused_ns\n"));
  for (const auto& l : r.links)
    fmt::format_to(std::back_inserter(links),
                   FMT_COMPILE("{},{},{},{},{},{:.3f},{},{},{},{:.6f},{:.3f}\n"), l.wire,
                   csv_field(l.from), l.from_port, csv_field(l.to), l.to_port, l.rate_gbps,
                   l.frames, l.bytes, l.lost, l.utilisation, l.paused_ns);
  write_file(d / "links.csv", {links.data(), links.size()});
  write_file(d / "energy.csv", energy_csv(r));

  // One row per posted message (nic.enabled; docs/results.md, fct.csv).
  if (r.transport.on && !r.transport.fct_written) write_file(d / "fct.csv", r.transport.fct_csv);
  // One row per sample and QP (nic.rate_trace_interval > 0; docs/results.md, qp_rates.csv).
  if (r.transport.rates_on) write_file(d / "qp_rates.csv", r.transport.rates_csv);

  // One row per collective call (traffic.pattern workload; docs/results.md, collectives.csv). A
  // call's name is the workload's (a Chakra node name holds commas, even newlines): csv_field.
  if (r.workload.on) {
    // A workload that tags its communicators (tp, dp, ...) adds a last column, `tag`.
    const auto& tags = r.workload.classes;
    std::string c =
        "name,algorithm,ranks,bytes,start_ns,end_ns,time_ns,algbw_GBps,busbw_GBps,"
        "slowest_rank,state,first_node,last_node";
    c += tags.empty() ? "\n" : ",tag\n";
    for (const auto& x : r.workload.collectives) {
      c += fmt::format("{},{},{},{},{:.3f},{},{},{:.3f},{:.3f},{},{},{},{}", csv_field(x.name),
                       csv_field(x.algorithm), x.ranks, x.bytes, x.start.as_ns(),
                       x.finished ? fmt::format("{:.3f}", x.end.as_ns()) : "",
                       x.finished ? fmt::format("{:.3f}", x.time().as_ns()) : "", x.algbw_GBps(),
                       x.busbw_GBps(), x.slowest_rank, x.finished ? "finished" : "unfinished",
                       x.first_node, x.last_node);
      c += tags.empty() ? "\n" : fmt::format(",{}\n", csv_field(tags[x.tag_class]));
    }
    write_file(d / "collectives.csv", c);
    write_file(d / "ranks.csv", r.workload.ranks_csv);
    write_file(d / "steps.csv", r.workload.steps_csv);
    if (!r.workload.aggregation_csv.empty())
      write_file(d / "aggregation.csv", r.workload.aggregation_csv);
  }

  // One row per flow-control span or drop, in start order (docs/results.md, flow_events.csv).
  if (r.flow_events_on) {
    std::string ev = "kind,device,port,class,start_ns,end_ns\n";
    for (const auto& e : r.flow_events)
      ev += fmt::format("{},{},{},{},{:.6f},{:.6f}\n", stats::span_kind_name(e.kind),
                        csv_field(r.device_names[static_cast<size_t>(e.device)]), e.port, e.cls,
                        e.start.as_ns(), e.end.as_ns());
    write_file(d / "flow_events.csv", ev);
  }
}

namespace {

// The console's messages and transport lines (nic.enabled): what was asked and what it cost.
std::string transport_lines(const RunReport& r) {
  const TransportReport& t = r.transport;
  const nic::Nic::Stats& n = t.totals;
  std::string s = fmt::format("  messages      completed {} of {}  failed {}  in flight {}{}\n",
                              n.completed, n.posted, n.failed, t.in_flight,
                              n.failed || t.in_flight ? "  ** WORK NOT DONE **" : "");
  if (t.fct.count)
    s += fmt::format(
        "  FCT (us)      p50 {:.2f}  p99 {:.2f}  max {:.2f}  slowdown p50 {:.2f}  p99 {:.2f}\n",
        t.fct.p50 * 1e-3, t.fct.p99 * 1e-3, t.fct.max * 1e-3, t.slowdown.p50, t.slowdown.p99);
  double paused_ns = 0;  // the hosts' transmitters, paused (PFC) or out of credits, whole run
  for (const auto& h : r.host_fc_run) paused_ns += h.paused_ns + h.credit_stall_ns;
  s += fmt::format(
      "  transport     retransmitted {}  timeouts {}  NAKs {}  CNPs {}  hosts paused {:.1f} us\n",
      n.retransmitted, n.timeouts, n.naks_sent, n.cnps_sent, paused_ns * 1e-3);
  return s;
}

// The console's collectives lines (traffic.pattern workload): the calls, the first few each.
std::string collectives_lines(const WorkloadReport& w) {
  size_t finished = 0;
  for (const auto& c : w.collectives) finished += c.finished;
  std::string s = fmt::format(
      "  collectives   {} call{}, {} finished{}; the job ends at {:.1f} us\n", w.collectives.size(),
      w.collectives.size() == 1 ? "" : "s", finished,
      finished < w.collectives.size() ? "  ** WORK NOT DONE **" : "", w.end.as_ns() * 1e-3);
  constexpr size_t kListed = 4;
  for (size_t i = 0; i < std::min(w.collectives.size(), kListed); ++i) {
    const auto& c = w.collectives[i];
    // A call's name is the workload's (a Chakra node's may hold a newline, or be KBs long): one
    // console line each, the name clipped and escaped as error messages show it.
    const std::string name = traffic::shown(c.name);
    s += c.finished
             ? fmt::format(
                   "    {}  {} ranks  {} B  {:.2f} us  algbw {:.2f} GB/s  busbw "
                   "{:.2f} GB/s\n",
                   name, c.ranks, c.bytes, c.time().as_ns() * 1e-3, c.algbw_GBps(), c.busbw_GBps())
             : fmt::format("    {}  {} ranks  {} B  unfinished\n", name, c.ranks, c.bytes);
  }
  if (w.collectives.size() > kListed)
    s += fmt::format("    ... {} more in collectives.csv\n", w.collectives.size() - kListed);
  if (w.scale_up_on)
    for (const auto& [name, x] :
         {std::pair{"scale-up ", &w.scale_up}, std::pair{"scale-out", &w.scale_out}})
      s += fmt::format("  {}     {} messages  {:.3f} MB  in flight {:.2f} us\n", name, x->messages,
                       static_cast<double>(x->bytes) * 1e-6, x->active.as_ns() * 1e-3);
  return s;
}

}  // namespace

std::string format_summary(const RunReport& r) {
  std::string s;
  s += fmt::format("FabricSim {} - {} (seed {}){}\n", FABRICSIM_VERSION, r.config_name, r.seed,
                   r.interrupted ? "  ** INTERRUPTED: partial results **" : "");
  s += fmt::format("  window        {:.1f} ns .. {:.1f} ns (simulated to {:.1f} ns{})\n",
                   r.window_start.as_ns(), r.window_end.as_ns(), r.end_time.as_ns(),
                   r.drained       ? ""
                   : r.interrupted ? fmt::format(", interrupted with {} measured packets still "
                                                 "inside",
                                                 r.win_in_flight)
                                   : fmt::format(", NOT drained: {} measured packets still inside "
                                                 "at sim.drain_limit",
                                                 r.win_in_flight));
  // A workload's window is a formality (its collectives run in the drain): its calls say what
  // happened, where the window's packet figures would read 0.
  if (r.workload.on) {
    s += collectives_lines(r.workload);
  } else {
    s += fmt::format("  throughput    offered {:.4f}  accepted {:.4f}  (fraction of capacity)\n",
                     r.offered_load, r.accepted_load);
    s += fmt::format(
        "  latency (ns)  mean {:.1f}  p50 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}  ({} "
        "pkts)\n",
        r.latency.mean, r.latency.p50, r.latency.p99, r.latency.p999, r.latency.max,
        r.latency.count);
  }
  if (r.transport.on) s += transport_lines(r);
  s += fmt::format("  buffer        peak {:.0f} B  mean {:.0f} B  of {:.0f} B{}\n",
                   r.buffer_peak_bytes, r.buffer_mean_bytes, r.buffer_capacity_bytes,
                   r.switches.size() > 1 ? "  (" + r.buffer_switch + ", the fullest of " +
                                               std::to_string(r.switches.size()) + " switches)"
                                         : std::string());
  // The line above is the window's; a fuller buffer in the warm-up or the drain is said apart.
  if (r.buffer_peak_bytes_run > r.buffer_peak_bytes)
    s += fmt::format("  buffer (run)  peak {:.0f} B over the whole run (warm-up and drain)\n",
                     r.buffer_peak_bytes_run);
  s += fmt::format("  packets       injected {}  delivered {}  dropped {}  in flight {}\n",
                   r.injected, r.delivered, r.dropped, r.in_flight);
  for (const BoxReport& b : r.boxes) s += "  " + format_boxes({b});
  const EnergyReport& e = r.energy;
  if (e.span_s > 0)
    s += fmt::format(
        "  energy        {:.4g} J  mean {:.1f} W (switches {:.1f}, optics {:.1f})  {:.1f} pJ per "
        "bit delivered\n",
        e.total_j(), e.total_j() / e.span_s, e.switch_j() / e.span_s, e.optics_j() / e.span_s,
        e.delivered_bits ? e.total_j() * 1e12 / static_cast<double>(e.delivered_bits) : 0.0);
  if (r.host_refused)
    s += fmt::format(
        "  host queues   {} packets refused: a host's queue was full (host.queue_limit)\n",
        r.host_refused);
  if (r.violations.empty()) {
    s += "  invariants    ok\n";
  } else {
    s += fmt::format("  invariants    {} VIOLATED\n", r.violations.size());
    for (const auto& v : r.violations) s += "    - " + v + "\n";
  }
  return s;
}

}  // namespace fabricsim::sim
