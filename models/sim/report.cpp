#include "models/sim/report.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "models/common/csv.h"
#include "models/common/stats.h"
#include "models/sim/aggregation_setup.h"
#include "models/sim/energy_report.h"
#include "models/sim/idle_fabric.h"

namespace fabricsim::sim {

namespace {

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

// Nearest-rank percentiles of the messages' slowdowns.
SlowdownReport slowdown_report(std::vector<double>& v) {
  SlowdownReport r;
  r.count = v.size();
  if (v.empty()) return r;
  std::sort(v.begin(), v.end());
  auto rank = [&v](double q) {
    const auto i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
  };
  double sum = 0;
  for (double x : v) sum += x;
  r.mean = sum / static_cast<double>(v.size());
  r.p50 = rank(0.5);
  r.p95 = rank(0.95);
  r.p99 = rank(0.99);
  r.max = v.back();
  return r;
}

// Per switch port: what its core counted, and its place in the netlist.
PortReport port_report(Fabric& f, int s, int p, Time until, Time end,
                       const std::function<double(double, double)>& load) {
  const auto& core = f.switch_module(s).core();
  const auto& pc = core.port_counters(p);
  const double rate = static_cast<double>(f.port_rate(s, p).as_bps());
  PortReport pr;
  const WireEnd& peer = f.peer(s, p);
  pr.host = peer.kind == WireEnd::Kind::kHost ? peer.index : -1;
  pr.peer = f.device_name(peer);
  pr.peer_port = peer.kind == WireEnd::Kind::kNone ? -1 : peer.port;
  pr.rx_packets = pc.rx_packets;
  pr.rx_bytes = pc.rx_bytes;
  pr.tx_packets = pc.tx_packets;
  pr.tx_bytes = pc.tx_bytes;
  pr.drops = pc.drops;
  pr.offered_load = load(pc.win_rx_bytes.total(), rate);
  pr.accepted_load = load(pc.win_tx_bytes.total(), rate);
  if (pr.host >= 0) pr.latency = latency_report(f.hosts_module().host(pr.host).rx().latency);
  pr.buffer_peak_bytes = core.port_peak_bytes(p);
  pr.buffer_peak_bytes_run = core.port_peak_bytes_run(p);
  pr.buffer_mean_bytes = core.port_mean_bytes(p, until);
  pr.fc = f.window_fc(s, p, end);
  pr.fc_run = f.run_fc(s, p, end);
  pr.control_frames_sent = core.control_frames_sent(p);
  pr.ecn_marked = core.ecn_marked(p);
  pr.underruns = pc.underruns;
  pr.underrun_ns = pc.underrun_time.as_ns();
  return pr;
}

}  // namespace

SwitchReport switch_report(Fabric& f, int s, Time end, double window_s) {
  auto load = [window_s](double bytes, double capacity_bps) {
    return window_s > 0 ? bytes * 8.0 / (capacity_bps * window_s) : 0.0;
  };
  auto& core = f.switch_module(s).core();
  const Time until = core.finalize_window(end);
  SwitchReport sr;
  sr.name = f.topology().switch_names[s];
  sr.kind = f.switch_kind(s);
  sr.buffer_capacity_bytes = static_cast<double>(core.buffer().total_cells()) *
                             static_cast<double>(f.switch_config(s).cell_size.count());
  sr.buffer_peak_bytes = core.buffer_peak_bytes();
  sr.buffer_peak_bytes_run = core.buffer_peak_bytes_run();
  sr.buffer_mean_bytes = core.buffer_mean_bytes(until);
  sr.received = core.received();
  sr.departed = core.departed();
  sr.dropped = core.dropped();
  sr.in_flight = core.in_flight();
  sr.underruns = core.underruns();
  sr.cells_switched = core.cells_switched();
  sr.ecn_packets = core.ecn_packets();
  sr.ecn_marked = core.ecn_marked();
  sr.ecn_bin_bytes = core.ecn_bin_bytes();
  for (const auto& b : core.ecn_bins()) sr.ecn_bins.emplace_back(b.packets, b.marked);
  sr.ports.reserve(static_cast<size_t>(f.ports(s)));
  for (int p = 0; p < f.ports(s); ++p) sr.ports.push_back(port_report(f, s, p, until, end, load));
  return sr;
}

namespace {

// Both directions of every cable, from the senders' counters (a switch port's egress, a host's
// MAC) and the link's losses. A host's frames sent are those its switch port received plus those
// the link lost.
void link_reports(Fabric& f, RunReport& r, const std::function<double(double, double)>& load) {
  const auto& wires = f.wires();
  for (size_t i = 0; i < wires.size(); ++i) {
    const FabricWire& w = wires[i];
    for (int dir = 0; dir < 2; ++dir) {
      const WireEnd& from = dir == 0 ? w.a : w.b;
      const WireEnd& to = dir == 0 ? w.b : w.a;
      LinkReport lr;
      lr.wire = static_cast<int>(i);
      lr.from = f.device_name(from);
      lr.to = f.device_name(to);
      lr.from_port = from.port;
      lr.to_port = to.port;
      if (w.module) {
        const auto& n = f.wire_counters(static_cast<int>(i), dir);
        lr.lost = n.lost;
      }
      if (from.kind == WireEnd::Kind::kSwitch) {
        const auto& s = r.switches[from.index].ports[from.port];
        lr.rate_gbps = static_cast<double>(f.port_rate(from.index, from.port).as_bps()) * 1e-9;
        lr.frames = s.tx_packets;
        lr.bytes = s.tx_bytes;
        lr.utilisation = s.accepted_load;
        lr.paused_ns = s.fc.paused_ns + s.fc.credit_stall_ns;
      } else {  // a host: to is its switch port
        const auto& s = r.switches[to.index].ports[to.port];
        const int h = from.index;
        lr.rate_gbps = static_cast<double>(f.host_rate(h).as_bps()) * 1e-9;
        lr.frames = s.rx_packets + lr.lost;
        lr.bytes = s.rx_bytes + (w.module ? w.module->a_to_b().lost_bytes : 0);
        lr.utilisation = load(f.hosts_module().host(h).tx().win_bytes.total(),
                              static_cast<double>(f.host_rate(h).as_bps()));
        const auto& hfc = r.host_fc[h];
        lr.paused_ns = hfc.paused_ns + hfc.credit_stall_ns;
      }
      r.links.push_back(std::move(lr));
    }
  }
  // Load balance: utilisation out of every switch-facing port, per switch.
  for (int s = 0; s < f.switch_count(); ++s) {
    LoadBalanceReport lb;
    lb.name = r.switches[s].name;
    double sum = 0;
    for (int p = 0; p < f.ports(s); ++p)
      if (f.peer(s, p).kind == WireEnd::Kind::kSwitch) {
        const double u = r.switches[s].ports[p].accepted_load;
        ++lb.ports;
        sum += u;
        lb.max = std::max(lb.max, u);
      }
    if (lb.ports == 0) continue;
    lb.mean = sum / lb.ports;
    r.load_balance.push_back(lb);
  }
}

}  // namespace

namespace {

void transport_report(const nic::NicArray& nics, TransportReport& t, FctWriter& w) {
  t.on = true;
  t.totals = nics.totals();
  t.in_flight = nics.outstanding();
  // The rows not written while the run went (NicArray::stream_fct), all after those that were.
  nics.for_each_fct([&w](const nic::NicArray::Fct& row) { w.row(row); }, false);
  w.finish();
  t.fct_written = w.to_file();
  if (!t.fct_written) t.fct_csv = std::move(w.text());
  t.fct = latency_report(w.fct());
  t.slowdown = slowdown_report(w.slowdowns());
  t.slowdown.exact = w.idle().exact();
  // The rate trace: one row per sample and QP; the algorithm's state names as the last columns.
  const auto& rows = nics.rate_rows();
  t.rate_rows_not_recorded = nics.rate_rows_not_recorded();
  std::string& rc = t.rates_csv;
  rc = "time_ns,nic,peer,qp,rate_gbps";
  if (!rows.empty())
    for (const auto& [name, v] : rows.front().qp.state) rc += "," + name;
  rc += "\n";
  for (const auto& r : rows) {
    rc += fmt::format("{:.3f},{},{},{},{:.6f}", r.t.as_ns(), r.nic, r.qp.peer, r.qp.index,
                      r.qp.rate.as_gbps());
    for (const auto& [name, v] : r.qp.state) rc += fmt::format(",{:.6g}", v);
    rc += "\n";
  }
}

}  // namespace

std::unique_ptr<FctWriter> fct_writer(const Fabric& f, const std::string& path) {
  // The slowdown's denominator: each completed message again, alone on the idle fabric.
  const RunConfig& cfg = f.config();
  auto idle = std::make_unique<IdleFabric>(
      cfg.nic, cfg.link.overhead(), cfg.link.class_latency(), cfg.nic.data_ect(cfg.traffic.ect),
      IdleFabric::topology_routes(
          f.topology(), [&f](int s) -> const sw::SwitchConfig& { return f.switch_config(s); },
          [&f](int s, int p) { return f.port_rate(s, p); }),
      [&f](int h) { return f.host_rate(h); });
  return std::make_unique<FctWriter>(std::move(idle), path);
}

RunReport make_report(Fabric& f, const std::string& config_name, const RunOutcome& outcome,
                      FctWriter* fct) {
  const RunConfig& cfg = f.config();
  const int hosts = f.hosts(), nsw = f.switch_count();
  RunReport r;
  r.config_name = config_name;
  RunConfig resolved = cfg;  // (the visitor that prints it walks a mutable configuration)
  r.config = config::to_json(resolved);
  r.seed = cfg.sim.seed;
  r.interrupted = outcome.interrupted;
  r.end_time = outcome.end_time;
  r.window_start = cfg.sim.warmup;
  r.window_end = std::min(cfg.sim.duration, std::max(r.window_start, r.end_time));
  r.hosts = hosts;
  r.topology_kind = cfg.topology.kind;
  for (const auto& t : f.topology().tiers)
    r.tiers.push_back({t.name, t.switches, t.down, t.up, t.ratio()});
  r.max_switch_hops = f.topology().max_switch_hops;
  const double window_s = (r.window_end - r.window_start).as_s();
  // Loads are fractions of capacity: of a port's own rate, and of all hosts' links together.
  auto load = [window_s](double bytes, double capacity_bps) {
    return window_s > 0 ? bytes * 8.0 / (capacity_bps * window_s) : 0.0;
  };

  const host::HostsModule& hm = f.hosts_module();
  double off = 0, acc = 0, host_capacity = 0;
  for (int h = 0; h < hosts; ++h) {
    off += hm.host(h).tx().win_bytes.total();
    acc += hm.host(h).rx().win_bytes.total();
    host_capacity += static_cast<double>(f.host_rate(h).as_bps());
  }
  r.offered_load = load(off, host_capacity);
  r.accepted_load = load(acc, host_capacity);
  r.latency = latency_report(hm.latency_fs());
  r.latency_halves.first_count = hm.half_count(0);
  r.latency_halves.second_count = hm.half_count(1);
  r.latency_halves.first_mean = hm.half_mean_fs(0) * 1e-6;  // fs -> ns
  r.latency_halves.second_mean = hm.half_mean_fs(1) * 1e-6;
  const Fabric::Totals t = f.totals();
  r.injected = t.injected;
  r.delivered = t.delivered;
  r.dropped = t.dropped;
  r.in_flight = t.in_flight;
  r.link_lost = t.link_lost;
  r.win_injected = t.win_injected;
  r.win_delivered = t.win_delivered;
  r.win_dropped = t.win_dropped;
  r.win_in_flight = t.win_in_flight;
  r.drained = r.win_in_flight == 0;
  r.ce_delivered = hm.ce_marked();
  r.reordered = hm.reordered();
  r.flow_control_mode = cfg.flow_control.mode;
  for (int h = 0; h < hosts; ++h) {
    r.host_fc.push_back(f.window_host_fc(h, r.end_time));
    r.host_fc_run.push_back(f.run_host_fc(h, r.end_time));
  }

  // MPI: rank 0 finds the other ranks' switches' reports with them (ports to hosts take the
  // hosts' latencies here, where the hosts are).
  if (f.remote()) f.remote()->finish(r.end_time, window_s);
  for (int s = 0; s < nsw; ++s) {
    SwitchReport sr;
    if (f.switch_here(s)) {
      sr = switch_report(f, s, r.end_time, window_s);
    } else {
      sr = f.remote()->switch_report(s);
      for (PortReport& pr : sr.ports)
        if (pr.host >= 0) pr.latency = latency_report(f.hosts_module().host(pr.host).rx().latency);
    }
    if (s == 0 || sr.buffer_peak_bytes > r.buffer_peak_bytes) {
      r.buffer_switch = sr.name;
      r.buffer_capacity_bytes = sr.buffer_capacity_bytes;
      r.buffer_peak_bytes = sr.buffer_peak_bytes;
      r.buffer_peak_bytes_run = sr.buffer_peak_bytes_run;
      r.buffer_mean_bytes = sr.buffer_mean_bytes;
    }
    r.switches.push_back(std::move(sr));
  }
  r.boxes = box_reports(f.topology(), r.switches);
  // Every block's counters, as the blocks registered them (after the windows are closed).
  f.flush_spans(r.end_time);
  r.counters = f.counters_json(r.end_time);
  r.flow_events_on = cfg.stats.flow_events > 0;
  r.flow_events = f.spans().records();
  r.flow_events_not_recorded = f.spans().not_recorded();
  std::sort(r.flow_events.begin(), r.flow_events.end(), stats::SpanLog::before);
  for (int s = 0; s < nsw; ++s)
    r.device_names.push_back(f.device_name(WireEnd{WireEnd::Kind::kSwitch, s, 0}));
  for (int h = 0; h < hosts; ++h)
    r.device_names.push_back(f.device_name(WireEnd{WireEnd::Kind::kHost, h, 0}));
  link_reports(f, r, load);

  r.violations = f.checks().run();
  if (const nic::NicArray* nics = f.nics()) {
    std::unique_ptr<FctWriter> own;
    if (!fct) fct = (own = fct_writer(f, "")).get();
    transport_report(*nics, r.transport, *fct);
    r.transport.rates_on = cfg.nic.rate_trace_interval > Time();
  }
  if (const workload::NicDriver* w = f.workload()) {
    WorkloadReport& wr = r.workload;
    wr.on = true;
    wr.ranks = w->graph().ranks();
    wr.nodes = w->graph().size();
    wr.unfinished = w->engine().unfinished();
    for (uint32_t i = 0; i < w->graph().size(); ++i)
      if (w->engine().ended(i) != Time::max()) wr.end = std::max(wr.end, w->engine().ended(i));
    wr.collectives = workload::collective_results(w->graph(), w->engine());
    wr.scale_out = {w->nic_messages(), w->nic_bytes(), w->nic_active()};
    if (const workload::ScaleUpNetwork* up = w->scale_up()) {
      wr.scale_up_on = true;
      wr.scale_up = {up->messages(), up->bytes(), up->active()};
    }
    wr.job = workload::job_result(w->graph(), w->engine());
    if (w->graph().classes().size() > 1) {
      wr.classes = w->graph().classes();
      wr.by_class = workload::class_result(w->graph(), w->engine());
    }
    const workload::ExecGraph& g = w->graph();
    if (const workload::InNetworkPlan* plan = f.innet_plan())
      wr.aggregation_csv = unit_stats_csv(unit_stats(*plan, g, w->engine()));
    // Names are the workload's (a Chakra node's, a text workload's communicator): csv_field.
    wr.steps_csv = "name,step,start_ns,end_ns,time_ns,messages,bytes,state\n";
    for (const auto& x : workload::step_results(g, w->engine()))
      wr.steps_csv +=
          fmt::format("{},{},{:.3f},{},{},{},{},{}\n", csv_field(g.spans()[x.call].name), x.step,
                      x.start.as_ns(), x.finished ? fmt::format("{:.3f}", x.end.as_ns()) : "",
                      x.finished ? fmt::format("{:.3f}", (x.end - x.start).as_ns()) : "",
                      x.messages, x.bytes, x.finished ? "finished" : "unfinished");
    wr.ranks_csv = "rank,kind,name,start_ns,end_ns\n";
    for (const auto& x : workload::rank_spans(g, w->engine())) {
      // A compute span is one graph node: its name when the workload gave one (a Chakra
      // COMP_NODE's), else its index.
      std::string name = x.compute ? std::string(g.name(x.call)) : g.spans()[x.call].name;
      if (x.compute && name.empty()) name = fmt::format("node{}", x.call);
      wr.ranks_csv +=
          fmt::format("{},{},{},{:.3f},{:.3f}\n", x.rank, x.compute ? "compute" : "collective",
                      csv_field(name), x.start.as_ns(), x.end.as_ns());
    }
  }
  Time wait_total, wait_max;
  for (int h = 0; h < hosts; ++h) {
    const auto& tx = hm.host(h).tx();
    r.host_queued += tx.queued;
    wait_total += tx.wait_total;
    wait_max = std::max(wait_max, tx.wait_max);
  }
  r.energy = energy_report(f, r);
  r.host_backlog = hm.backlog();
  r.host_refused = hm.refused();
  r.host_wait_mean_ns =
      r.host_queued ? wait_total.as_ns() / static_cast<double>(r.host_queued) : 0.0;
  r.host_wait_max_ns = wait_max.as_ns();

  for (int s = 0; s < nsw; ++s)
    if (f.switch_here(s)) r.active_cycles += f.switch_module(s).active_cycles();
  if (f.remote()) {
    r.active_cycles += f.remote()->counts().active_cycles;
    r.mpi_exchanges = f.remote()->exchanges();
    r.mpi_bytes = f.remote()->bytes();
    r.mpi_cpu_s = f.remote()->cpu_s();
    r.mpi_wait_s = f.remote()->wait_s();
    r.mpi_busy_s = f.remote()->busy_s();
  }
  r.mpi_ranks = g_mpi_world.size;
  r.cross_side_calls = f.cross_side_calls();
  r.helper_threads = f.helper_threads();
  r.lookahead_cycles = f.lookahead_cycles();
  r.threads = f.threads();
  r.worker_windows = f.worker_windows();
  r.host_windows = f.host_windows();
  r.main_wait_s = f.main_wait_s();
  r.worker_wait_s = f.worker_wait_s();
  r.worker_idle_s = f.worker_idle_s();
  r.switch_count = f.switch_count();
  r.main_thread_switches = f.main_thread_switches();
  r.side_switches = f.side_switches();
  r.side_runs = f.side_runs();
  return r;
}

}  // namespace fabricsim::sim
