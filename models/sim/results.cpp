#include "models/sim/results.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "fabricsim_version.h"
#include "models/common/csv.h"
#include "models/traffic/text_fields.h"

namespace fabricsim::sim {

namespace {

nlohmann::json latency_json(const LatencyReport& l) {
  return {{"count", l.count}, {"mean", l.mean}, {"min", l.min}, {"p50", l.p50},
          {"p99", l.p99},     {"p999", l.p999}, {"max", l.max}};
}

// Into the run's private folder: a failure leaves the published set as it was (output_dir.h).
void write_file(const std::filesystem::path& p, const std::string& text) {
  std::FILE* f = std::fopen(p.c_str(), "wb");
  int err = f ? 0 : errno;
  if (f && std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno;
  if (f && std::fclose(f) != 0 && !err) err = errno;
  if (err)
    throw std::runtime_error("cannot write " + p.filename().string() + ": " + std::strerror(err));
}

}  // namespace

nlohmann::json summary_json(const RunReport& r) {
  nlohmann::json j;
  // Bumped when a documented key changes meaning or goes away (docs/results.md); new keys do not.
  j["schema_version"] = kSummarySchemaVersion;
  j["fabricsim_version"] = FABRICSIM_VERSION;
  j["config_name"] = r.config_name;
  j["seed"] = r.seed;
  j["interrupted"] = r.interrupted;
  j["window"] = {{"start_ns", r.window_start.as_ns()},
                 {"end_ns", r.window_end.as_ns()},
                 {"sim_end_ns", r.end_time.as_ns()},
                 {"drained", r.drained}};
  j["throughput"] = {{"offered_load", r.offered_load}, {"accepted_load", r.accepted_load}};
  j["latency_ns"] = latency_json(r.latency);
  j["latency_ns"]["first_half_count"] = r.latency_halves.first_count;
  j["latency_ns"]["first_half_mean"] = r.latency_halves.first_mean;
  j["latency_ns"]["second_half_count"] = r.latency_halves.second_count;
  j["latency_ns"]["second_half_mean"] = r.latency_halves.second_mean;
  auto port_buffers = [](const SwitchReport& sr) {
    nlohmann::json ports = nlohmann::json::array();
    for (size_t i = 0; i < sr.ports.size(); ++i)
      ports.push_back({{"port", i},
                       {"peak_bytes", sr.ports[i].buffer_peak_bytes},
                       {"peak_bytes_run", sr.ports[i].buffer_peak_bytes_run},
                       {"mean_bytes", sr.ports[i].buffer_mean_bytes}});
    return ports;
  };
  nlohmann::json switches = nlohmann::json::array();
  nlohmann::json hot_ports = nlohmann::json::array();
  for (const auto& sr : r.switches) {
    if (sr.name == r.buffer_switch) hot_ports = port_buffers(sr);
    switches.push_back({{"name", sr.name},
                        {"buffer",
                         {{"capacity_bytes", sr.buffer_capacity_bytes},
                          {"peak_bytes", sr.buffer_peak_bytes},
                          {"peak_bytes_run", sr.buffer_peak_bytes_run},
                          {"mean_bytes", sr.buffer_mean_bytes}}},
                        {"packets",
                         {{"received", sr.received},
                          {"departed", sr.departed},
                          {"dropped", sr.dropped},
                          {"in_flight", sr.in_flight}}},
                        {"egress_underruns", sr.underruns}});
    if (!sr.kind.empty()) switches.back()["kind"] = sr.kind;  // only with switch kinds
  }
  // `buffer` describes the switch with the highest peak (the only one in a single-switch run).
  j["buffer"] = {{"switch", r.buffer_switch},         {"capacity_bytes", r.buffer_capacity_bytes},
                 {"peak_bytes", r.buffer_peak_bytes}, {"peak_bytes_run", r.buffer_peak_bytes_run},
                 {"mean_bytes", r.buffer_mean_bytes}, {"ports", hot_ports}};
  j["hosts"] = r.hosts;
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& t : r.tiers)
    tiers.push_back({{"name", t.name},
                     {"switches", t.switches},
                     {"down_ports", t.down_ports},
                     {"up_ports", t.up_ports},
                     {"oversubscription", t.oversubscription}});
  j["topology"] = {
      {"kind", r.topology_kind}, {"max_switch_hops", r.max_switch_hops}, {"tiers", tiers}};
  j["switches"] = switches;
  nlohmann::json lb = nlohmann::json::array();
  for (const auto& l : r.load_balance)
    lb.push_back({{"switch", l.name},
                  {"switch_ports", l.ports},
                  {"mean_utilisation", l.mean},
                  {"max_utilisation", l.max},
                  {"max_over_mean", l.mean > 0 ? l.max / l.mean : 0.0}});
  j["load_balance"] = lb;
  j["packets"] = {{"injected", r.injected},
                  {"delivered", r.delivered},
                  {"dropped", r.dropped},
                  {"in_flight", r.in_flight},
                  {"lost_on_links", r.link_lost},
                  {"ce_marked_delivered", r.ce_delivered},
                  {"reordered", r.reordered},
                  {"window",
                   {{"injected", r.win_injected},
                    {"delivered", r.win_delivered},
                    {"dropped", r.win_dropped},
                    {"in_flight", r.win_in_flight}}}};
  // Link-level flow control, per switch and for the hosts (sums over ports; peaks are maxima).
  // The counts and times from the window's start to the end, and (`*_run`) over the whole run,
  // the span of `counters`.
  using PortStatsList = std::vector<const link::FlowControl::PortStats*>;
  auto fc_json = [](const PortStatsList& ports, const PortStatsList& ports_run) {
    link::FlowControl::PortStats t, w;
    for (const auto* p : ports) t.add(*p);
    for (const auto* p : ports_run) w.add(*p);
    const std::vector<double> by_prio(std::begin(t.paused_ns_by_prio),
                                      std::end(t.paused_ns_by_prio));
    const std::vector<double> by_vl(std::begin(t.credit_stall_ns_by_vl),
                                    std::end(t.credit_stall_ns_by_vl));
    return nlohmann::json{{"pause_frames_sent", t.pause_sent},
                          {"pause_frames_received", t.pause_received},
                          {"paused_ns", t.paused_ns},
                          {"paused_ns_by_priority", by_prio},
                          {"credit_stall_ns_by_vl", by_vl},
                          {"headroom_peak_bytes", t.headroom_peak_bytes},
                          {"lossless_drops", t.lossless_drops},
                          {"xoff_at_end", t.xoff_pgs},
                          {"paused_at_end", t.paused_prios},
                          {"fc_packets_sent", t.fc_packets_sent},
                          {"credit_stall_ns", t.credit_stall_ns},
                          {"credits_outstanding_at_end", t.credits_outstanding},
                          {"pause_frames_sent_run", w.pause_sent},
                          {"pause_frames_received_run", w.pause_received},
                          {"paused_ns_run", w.paused_ns},
                          {"lossless_drops_run", w.lossless_drops},
                          {"fc_packets_sent_run", w.fc_packets_sent},
                          {"credit_stall_ns_run", w.credit_stall_ns}};
  };
  nlohmann::json fc = {{"mode", r.flow_control_mode}};
  nlohmann::json fc_switches = nlohmann::json::object();
  for (const auto& sr : r.switches) {
    PortStatsList ps, ps_run;
    for (const auto& p : sr.ports) {
      ps.push_back(&p.fc);
      ps_run.push_back(&p.fc_run);
    }
    fc_switches[sr.name] = fc_json(ps, ps_run);
    nlohmann::json bins = nlohmann::json::array();
    for (const auto& [n, m] : sr.ecn_bins) bins.push_back({n, m});
    fc_switches[sr.name]["ecn"] = {{"ect_packets", sr.ecn_packets},
                                   {"marked", sr.ecn_marked},
                                   {"bin_bytes", sr.ecn_bin_bytes},
                                   {"bins_packets_marked", bins}};
  }
  PortStatsList hs, hs_run;
  for (const auto& h : r.host_fc) hs.push_back(&h);
  for (const auto& h : r.host_fc_run) hs_run.push_back(&h);
  fc["switches"] = fc_switches;
  fc["hosts"] = fc_json(hs, hs_run);
  j["flow_control"] = fc;
  j["host_queues"] = {{"packets_waited", r.host_queued},
                      {"wait_mean_ns", r.host_wait_mean_ns},
                      {"wait_max_ns", r.host_wait_max_ns},
                      {"backlog_at_end", r.host_backlog}};
  // Only when a queue was full (a run that never fills one reads as before the limit existed).
  if (r.host_refused) j["host_queues"]["refused_packets"] = r.host_refused;
  // Only when flow_events.csv is not the whole story (stats.flow_events reached).
  if (r.flow_events_not_recorded)
    j["flow_events"] = {{"recorded", r.flow_events.size()},
                        {"not_recorded", r.flow_events_not_recorded}};
  // Only when occupancy.csv stops before the run's end (its cap: occupancy_writer.h).
  if (r.occupancy_capped_at != Time::max())
    j["occupancy_csv_ends_ns"] = r.occupancy_capped_at.as_ns();
  if (r.transport.on) {
    const nic::Nic::Stats& t = r.transport.totals;
    j["transport"] = {{"messages_posted", t.posted},
                      {"messages_completed", t.completed},
                      {"messages_failed", t.failed},
                      {"messages_in_flight", r.transport.in_flight},
                      {"messages_delivered", t.messages_delivered},
                      {"bytes_posted", t.bytes_posted},
                      {"bytes_completed", t.bytes_completed},
                      {"bytes_delivered", t.bytes_delivered},
                      {"data_packets_sent", t.data_packets},
                      {"retransmitted_packets", t.retransmitted},
                      {"acks_sent", t.acks_sent},
                      {"naks_sent", t.naks_sent},
                      {"timeouts", t.timeouts},
                      {"cnps_sent", t.cnps_sent},
                      {"cnps_received", t.cnps_received},
                      {"out_of_order_packets", t.out_of_order},
                      {"duplicate_packets", t.duplicates},
                      {"wqe_fetches", t.wqe_fetches},
                      {"fct_ns", latency_json(r.transport.fct)}};
    const SlowdownReport& sd = r.transport.slowdown;
    j["transport"]["slowdown"] = {{"count", sd.count}, {"mean", sd.mean}, {"p50", sd.p50},
                                  {"p95", sd.p95},     {"p99", sd.p99},   {"max", sd.max},
                                  {"exact", sd.exact}};
    // Only when the run had RDMA READs (a run without reads as before).
    if (t.read_requests) {
      j["transport"]["read_requests_sent"] = t.read_requests;
      j["transport"]["read_responses_sent"] = t.read_responses;
      j["transport"]["read_responses_dropped"] = t.read_responses_dropped;
    }
    if (r.transport.rate_rows_not_recorded)
      j["transport"]["rate_rows_not_recorded"] = r.transport.rate_rows_not_recorded;
  }
  if (r.workload.on) {
    const WorkloadReport& w = r.workload;
    std::vector<double> times, busbw;
    uint64_t finished = 0;
    for (const auto& c : w.collectives)
      if (c.finished) {
        ++finished;
        times.push_back(c.time().as_ns());
        busbw.push_back(c.busbw_GBps());
      }
    auto stats = [](const std::vector<double>& v) {
      nlohmann::json s = {{"count", v.size()}};
      if (v.empty()) return s;
      double sum = 0, lo = v[0], hi = v[0];
      for (double x : v) {
        sum += x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      s["mean"] = sum / static_cast<double>(v.size());
      s["min"] = lo;
      s["max"] = hi;
      return s;
    };
    // Iterations (at most 1,000 listed) and the ranks' compute and exposed communication.
    nlohmann::json its = nlohmann::json::array();
    std::vector<double> it_times;
    for (const auto& it : w.job.iterations) {
      if (it.finished) it_times.push_back((it.end - it.start).as_ns());
      if (its.size() < 1000)
        its.push_back({{"start_ns", it.start.as_ns()},
                       {"end_ns", it.finished ? nlohmann::json(it.end.as_ns()) : nlohmann::json()},
                       {"time_ns", it.finished ? nlohmann::json((it.end - it.start).as_ns())
                                               : nlohmann::json()}});
    }
    std::vector<double> compute, exposed;
    size_t worst = 0;
    for (size_t rk = 0; rk < w.job.busy.size(); ++rk) {
      compute.push_back(w.job.compute[rk].as_ns());
      exposed.push_back(w.job.exposed(rk).as_ns());
      if (exposed.back() > exposed[worst]) worst = rk;
    }
    j["workload"] = {{"ranks", w.ranks},
                     {"nodes", w.nodes},
                     {"nodes_unfinished", w.unfinished},
                     {"end_ns", w.end.as_ns()},
                     {"collectives", w.collectives.size()},
                     {"collectives_finished", finished},
                     {"collective_time_ns", stats(times)},
                     {"busbw_GBps", stats(busbw)},
                     {"iterations", its},
                     {"iteration_time_ns", stats(it_times)},
                     {"compute_ns", stats(compute)},
                     {"exposed_comm_ns", stats(exposed)},
                     {"exposed_comm_worst_rank", exposed.empty() ? -1 : static_cast<int>(worst)}};
  }
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
          {"switches", r.switch_count},
          {"main_thread_switches", r.main_thread_switches},
          {"interrupted", r.interrupted}};
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
  std::string csv =
      "switch,port,host,in_packets_run,in_bytes_run,out_packets_run,out_bytes_run,drops_run,"
      "offered_load_in,accepted_load_out,latency_count_out,latency_mean_ns_out,"
      "latency_p50_ns_out,latency_p99_ns_out,latency_p999_ns_out,latency_max_ns_out,"
      "buffer_peak_bytes_out,buffer_mean_bytes_out,pause_frames_sent,pause_frames_received,"
      "paused_ns,"
      "headroom_peak_bytes,lossless_drops,fc_packets_sent,credit_stall_ns,control_frames_sent,ecn_"
      "marked,underruns_run,underrun_ns_run,peer,peer_port\n";
  for (const auto& sr : r.switches)
    for (size_t i = 0; i < sr.ports.size(); ++i) {
      const auto& p = sr.ports[i];
      csv += fmt::format(
          "{},{},{},{},{},{},{},{},{:.6f},{:.6f},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.0f},"
          "{:.1f},{},{},{:.3f},{},{},{},{:.3f},{},{},{},{:.3f},{},{}\n",
          csv_field(sr.name), i, p.host, p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes,
          p.drops, p.offered_load, p.accepted_load, p.latency.count, p.latency.mean, p.latency.p50,
          p.latency.p99, p.latency.p999, p.latency.max, p.buffer_peak_bytes, p.buffer_mean_bytes,
          p.fc.pause_sent, p.fc.pause_received, p.fc.paused_ns, p.fc.headroom_peak_bytes,
          p.fc.lossless_drops, p.fc.fc_packets_sent, p.fc.credit_stall_ns, p.control_frames_sent,
          p.ecn_marked, p.underruns, p.underrun_ns, csv_field(p.peer), p.peer_port);
    }
  write_file(d / "ports.csv", csv);

  // One row per direction of every cable (host links first, then switch-to-switch wires).
  std::string links =
      "wire,from,from_port,to,to_port,rate_gbps,frames_run,bytes_run,lost_frames_run,utilisation,"
      "paused_ns\n";
  for (const auto& l : r.links)
    links += fmt::format("{},{},{},{},{},{:.3f},{},{},{},{:.6f},{:.3f}\n", l.wire,
                         csv_field(l.from), l.from_port, csv_field(l.to), l.to_port, l.rate_gbps,
                         l.frames, l.bytes, l.lost, l.utilisation, l.paused_ns);
  write_file(d / "links.csv", links);

  // One row per posted message (nic.enabled; docs/results.md, fct.csv).
  if (r.transport.on) write_file(d / "fct.csv", r.transport.fct_csv);
  // One row per sample and QP (nic.rate_trace_interval > 0; docs/results.md, qp_rates.csv).
  if (r.transport.rates_on) write_file(d / "qp_rates.csv", r.transport.rates_csv);

  // One row per collective call (traffic.pattern workload; docs/results.md, collectives.csv). A
  // call's name is the workload's (a Chakra node name holds commas, even newlines): csv_field.
  if (r.workload.on) {
    std::string c =
        "name,algorithm,ranks,bytes,start_ns,end_ns,time_ns,algbw_GBps,busbw_GBps,"
        "slowest_rank,state,first_node,last_node\n";
    for (const auto& x : r.workload.collectives)
      c += fmt::format("{},{},{},{},{:.3f},{},{},{:.3f},{:.3f},{},{},{},{}\n", csv_field(x.name),
                       csv_field(x.algorithm), x.ranks, x.bytes, x.start.as_ns(),
                       x.finished ? fmt::format("{:.3f}", x.end.as_ns()) : "",
                       x.finished ? fmt::format("{:.3f}", x.time().as_ns()) : "", x.algbw_GBps(),
                       x.busbw_GBps(), x.slowest_rank, x.finished ? "finished" : "unfinished",
                       x.first_node, x.last_node);
    write_file(d / "collectives.csv", c);
    write_file(d / "ranks.csv", r.workload.ranks_csv);
    write_file(d / "steps.csv", r.workload.steps_csv);
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
