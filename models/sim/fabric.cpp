#include "models/sim/fabric.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "models/common/cpu_budget.h"
#include "models/common/error.h"
#include "models/common/stop_signal.h"
#include "models/link/credit_unit.h"
#include "models/sim/aggregation_setup.h"
#include "models/sim/idle_fabric.h"
#include "models/sim/runner.h"
#include "models/traffic/prefetch_source.h"

namespace fabricsim::sim {

std::string config_dir(const RunConfig& cfg) {
  // Relative trace paths resolve against the configuration file's folder.
  const std::string d =
      cfg.source_path.empty() ? "." : std::filesystem::path(cfg.source_path).parent_path().string();
  return d.empty() ? "." : d;
}

Fabric::Fabric(sc_core::sc_module_name name, const RunConfig& cfg)
    : sc_core::sc_module(name),
      cfg_(cfg),
      topology_(with_aggregation_units(
          topo::build_topology(cfg.topology, cfg.tier_ports(), static_cast<uint64_t>(cfg.sim.seed),
                               cfg.box_specs()),
          cfg)) {
  // Each switch is its tier's chip; with no kinds in use every switch is `switch:`.
  const std::vector<int> used = cfg_.used_chips();
  const bool named = used.size() > 1 || used[0] >= 0;
  for (int s = 0; s < topology_.switches(); ++s) {
    const int k = cfg_.tier_kind_index(static_cast<size_t>(topology_.switch_tier[s]));
    chips_.push_back(&cfg_.chip(k));
    kinds_.push_back(!named  ? ""
                     : k < 0 ? "switch"
                             : cfg_.switch_kinds[static_cast<size_t>(k)].name);
  }
  make_hosts();
  make_switches();
  wire_up();
  register_checks();
  set_lookahead();
  if (cfg_.stats.flow_events > 0) {
    spans_ = stats::SpanLog(static_cast<uint64_t>(cfg_.stats.flow_events));
    const int nsw = switch_count();
    for (int s = 0; s < nsw; ++s) switches_[s]->core().set_span_sink({&spans_, s});
    for (int h = 0; h < hosts(); ++h)
      if (auto* fc = hosts_->host(h).flow_control()) fc->set_span_sink({&spans_, nsw + h});
  }
  set_threads();
  set_host_windows();
}

Fabric::~Fabric() {
  // The main thread's span log (threads that steal switches: set_threads) dies with this fabric.
  if (!switch_spans_.empty() && stats::t_thread_log == &switch_spans_[0])
    stats::t_thread_log = nullptr;
}

nic::MessageLimits message_limits(const RunConfig& cfg, int hosts) {
  nic::MessageLimits lim;
  lim.hosts = hosts;
  lim.qps_per_pair = static_cast<int>(cfg.nic.qps_per_pair);
  lim.traffic_classes = static_cast<int>(cfg.sw.traffic_classes);
  return lim;
}

void check_message_file(const RunConfig& cfg, const topo::Topology& t) {
  auto scan =
      nic::make_messages(cfg.traffic, message_limits(cfg, t.hosts), cfg.host_chip().port_speed,
                         static_cast<uint64_t>(cfg.sim.seed), config_dir(cfg), Time::max());
  nic::Message m;
  while (scan->next(m)) {
    if ((m.id & 0xffff) == 0) check_stop("checking the message file");
    // RUD carries no READ (its reliability is for writes and sends: rud_transport.h).
    if (m.verb == nic::Verb::kRead && cfg.nic.transport == "rud")
      throw InputError(
          fmt::format("traffic.messages.file: {}: message {} ({} -> {}) is an RDMA READ, which "
                      "nic.transport rud does not carry (go_back_n and selective_repeat do)",
                      cfg.traffic.messages_file, m.id, m.src, m.dst));
    // A message the topology cannot route (rail_only across rails) is refused, as a trace's
    // packet is, rather than dropped in the switch.
    if (!t.routable(m.src, m.dst))
      throw InputError(fmt::format(
          "traffic.messages.file: {}: message {} goes from host {} to host {}, which the "
          "topology cannot route: {}",
          cfg.traffic.messages_file, m.id, m.src, m.dst, t.unroutable_rule));
  }
}

workload::ExecGraph build_workload_graph(const RunConfig& cfg, int hosts,
                                         std::shared_ptr<const workload::InNetworkPlan> innet) {
  workload::WorkloadConfig w = cfg.workload;
  w.max_channels = cfg.nic.qps_per_pair;
  w.innet = std::move(innet);
  w.scale_up_reduce = cfg.scale_up.on() && cfg.scale_up.reduce;
  if (cfg.scale_up.on()) {  // each rank's domain, for the hierarchical algorithms
    const int ranks = w.ranks ? static_cast<int>(w.ranks) : hosts;
    for (const int h : workload_hosts(cfg, ranks))
      w.rank_domain.push_back(h / static_cast<int>(cfg.scale_up.domain_gpus()));
  }
  try {
    return workload::build_workload(w, hosts, config_dir(cfg));
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("workload: {}", e.what()));
  }
}

void Fabric::make_hosts() {
  const int hosts = topology_.hosts;
  const auto seed = static_cast<uint64_t>(cfg_.sim.seed);
  const FrameOverhead overhead = cfg_.link.overhead();
  const sw::SwitchConfig& host_chip = cfg_.host_chip();
  // Each switch port's rate: its chip's port_speed, or by breakout (link.port_lanes, only with
  // the switch: chip); each host's is its port's.
  port_rates_.resize(chips_.size());
  for (size_t s = 0; s < chips_.size(); ++s)
    for (int p = 0; p < ports(static_cast<int>(s)); ++p)
      port_rates_[s].push_back(cfg_.link.port_rate(p, chips_[s]->port_speed));
  for (int h = topology_.job_hosts(); h < hosts; ++h)  // aggregation units: their reduce rate
    port_rates_[topology_.host_port[h].sw][topology_.host_port[h].port] =
        unit_rate(*chips_[topology_.host_port[h].sw]);
  for (const auto& w : topology_.wires)
    if (cfg_.link.lanes_of(w.a.port) != cfg_.link.lanes_of(w.b.port))
      throw InputError(fmt::format(
          "link.port_lanes: switch ports {} and {} are linked but have {} and {} lanes", w.a.port,
          w.b.port, cfg_.link.lanes_of(w.a.port), cfg_.link.lanes_of(w.b.port)));
  std::vector<uint32_t> host_slowdown;
  for (int h = 0; h < hosts; ++h) {
    const int lanes = cfg_.link.lanes_of(topology_.host_port[h].port);
    host_rates_.push_back(port_rates_[topology_.host_port[h].sw][topology_.host_port[h].port]);
    host_slowdown.push_back(static_cast<uint32_t>(cfg_.link.phy.lanes_per_subport() / lanes));
  }
  // Open-loop packets, or with NICs messages (the NICs make the packets).
  std::unique_ptr<traffic::TrafficSource> source;
  std::unique_ptr<nic::NicArray> nics;
  if (cfg_.nic.enabled) {
    const nic::MessageLimits lim = message_limits(cfg_, hosts);
    // Generated messages start before sim.duration; a message file is posted whole (the run
    // drains until it is, as a packet trace is sent whole).
    const Time until = cfg_.traffic.pattern == "messages" ? Time::max() : cfg_.sim.duration;
    if (cfg_.traffic.pattern == "messages") check_message_file(cfg_, topology_);
    const bool ect = cfg_.nic.data_ect(cfg_.traffic.ect);
    // The NICs write an entropy when any switch of the run hashes it.
    const bool entropy = [this] {
      for (const int k : cfg_.used_chips())
        if (cfg_.chip(k).routing.hash_field_mask() & sw::kHashEntropy) return true;
      return false;
    }();
    if (cfg_.traffic.pattern == "workload") {
      // The ranks' programs, closed loop over the NICs: rank r on host r.
      const workload::WorkloadConfig& w = cfg_.workload;
      // Rank r on host_of[r]; the aggregation units' ranks (if any) after the job's, on theirs.
      const int jobs = w.ranks ? static_cast<int>(w.ranks) : topology_.job_hosts();
      std::vector<int> host_of = workload_hosts(cfg_, jobs);
      innet_ = aggregation_plan(topology_, cfg_, host_of);
      workload::ExecGraph g = build_workload_graph(cfg_, topology_.job_hosts(), innet_);
      for (int h = topology_.job_hosts(); h < hosts; ++h) host_of.push_back(h);
      std::vector<double> slowdown(static_cast<size_t>(g.ranks()), 1.0);
      if (w.straggler_rank >= 0) slowdown[w.straggler_rank] = w.straggler_slowdown;
      nic::Verb verb = nic::Verb::kWriteImm;
      nic::parse_verb(w.verb, verb);
      std::unique_ptr<workload::ScaleUpNetwork> up;  // scale_up: domains beside the NICs
      if (cfg_.scale_up.on())
        up = std::make_unique<workload::ScaleUpNetwork>(
            hosts, static_cast<int>(cfg_.scale_up.domain_gpus()), cfg_.scale_up.port_rate(),
            cfg_.scale_up.port_latency(), cfg_.scale_up.reduce, cfg_.scale_up.reduce_bandwidth);
      auto driver = std::make_unique<workload::NicDriver>(
          std::move(g), std::move(host_of), verb, static_cast<int>(w.tc), slowdown, std::move(up));
      workload_ = driver.get();
      nics =
          std::make_unique<nic::NicArray>(cfg_.nic, host_rates_, ect, std::move(driver), entropy);
    } else {
      nics = std::make_unique<nic::NicArray>(
          cfg_.nic, host_rates_, ect,
          nic::make_messages(cfg_.traffic, lim, host_chip.port_speed, seed, config_dir(cfg_),
                             until),
          entropy);
    }
    nics_ = nics.get();
    if (cfg_.nic.cc != "none") set_nic_paths(*nics_);
    // At most 4M rows (~400 MB of text): sample less often, or fewer QPs, beyond that.
    nics_->trace_rates(cfg_.nic.rate_trace_interval, 4000000);
  } else {
    source = traffic::make_traffic(cfg_.traffic, hosts, host_chip.port_speed,
                                   static_cast<int>(cfg_.sw.traffic_classes), seed,
                                   config_dir(cfg_), overhead, host_slowdown, cfg_.packet_limit());
  }
  // The helper threads only pay with a CPU of their own: on one they took turns with the
  // simulation and ran it ~1.5x slower (results are the same either way).
  helper_threads_ = cfg_.sim.traffic_thread && usable_cpus() >= 2;
  if (helper_threads_ && source)
    source = std::make_unique<traffic::PrefetchSource>(std::move(source));
  const Time win_start = cfg_.sim.warmup, win_end = cfg_.sim.duration;
  mac_.overhead = overhead;
  mac_.flow_control = &cfg_.flow_control;
  mac_.headroom_per_pg = cfg_.pfc_headroom(host_chip);  // the hosts'; each switch: its chip's
  if (cfg_.flow_control.credit_mode() && cfg_.flow_control.credit.impl != "model")
    mac_.credit_unit =  // a registered implementation (rtl: the Verilated credit unit), per sender
        link::CreditUnitRegistry::global().at(cfg_.flow_control.credit.impl).make;
  // An IB flow-control packet on the wire, less the framing the MAC adds; a CBFC credit update
  // is a minimum Ethernet frame (the MAC adds preamble and gap).
  mac_.fc_frame_bytes = cfg_.flow_control.credit.cbfc()
                            ? 64u
                            : static_cast<uint32_t>(std::max<int64_t>(
                                  1, cfg_.link.ib_fc_packet_bytes - overhead.lead - overhead.gap));

  // Lane failure (link.phy.lane_failure): one host's link, or every link, drops to fewer lanes at
  // one time, for the ports and hosts on the failed links.
  failure_ = !cfg_.link.ideal() && cfg_.link.phy.lane_failure();
  fail_host_ = static_cast<int>(cfg_.link.phy.fail_host);  // < hosts (RunConfig::validate)
  slow_rate_ = failure_ ? cfg_.link.phy.degraded_wire_format().mac_rate() : host_chip.port_speed;
  change_at_ = failure_ ? cfg_.link.phy.fail_time : Time::max();

  // Each host: its NIC port's MAC and its own flow control. PFC hosts obey pauses (and never send
  // one: they consume at line rate); credit hosts send with credits and return credits for what
  // they receive.
  std::vector<host::Host> devices;
  devices.reserve(static_cast<size_t>(hosts));
  for (int h = 0; h < hosts; ++h) {
    host::HostConfig hc;
    hc.id = h;
    const bool fails = failure_ && (fail_host_ < 0 || fail_host_ == h);
    hc.mac = link::Mac(host_rates_[h], fails ? slow_rate_ : host_rates_[h],
                       fails ? change_at_ : Time::max(), overhead);
    hc.link_latency = cfg_.link.latency(link::LinkClass::kHost);
    hc.window_start = win_start;
    hc.window_end = win_end;
    hc.ect = cfg_.traffic.ect && !nics;  // a NIC marks its data packets itself
    hc.queue_limit = cfg_.host.limit();
    devices.emplace_back(hc, std::make_unique<link::FlowControl>(
                                 cfg_.flow_control, 1, host_chip.port_speed, mac_.headroom_per_pg,
                                 host_chip.buffer_size, mac_.fc_frame_bytes, mac_.credit_unit));
  }
  host::HostsModuleConfig mc;
  mc.window_start = win_start;
  mc.window_end = win_end;
  mc.link_latency = cfg_.link.latency(link::LinkClass::kHost);
  mc.histogram_bits = static_cast<int>(cfg_.stats.histogram_bits);
  mc.stats_thread = helper_threads_;
  hosts_ = std::make_unique<host::HostsModule>("hosts", std::move(devices), std::move(source), mc,
                                               std::move(nics));
}

void Fabric::set_nic_paths(nic::NicArray& nics) const {
  // Zero-load round trips of a full data frame and its ACK, as the NIC sends them.
  nic::Packetizer pk(cfg_.nic.packet);
  if (cfg_.nic.telemetry()) pk.add_header(IntStack::kWireBytes);
  const uint64_t data = pk.mtu() + pk.header_bytes(nic::BthOpcode::kWriteMiddle);
  const uint64_t ack = pk.header_bytes(nic::BthOpcode::kAck);
  auto route = std::make_shared<IdleFabric::RouteOf>(IdleFabric::topology_routes(
      topology_, [this](int s) -> const sw::SwitchConfig& { return *chips_[s]; },
      [this](int s, int p) { return port_rates_[s][p]; }));
  const FrameOverhead o = cfg_.link.overhead();
  const link::ClassLatency latency = cfg_.link.class_latency();
  // Shared, not copied: every NIC holds a copy of the function (a copied vector of the hosts'
  // rates was 16 B x hosts per NIC, 1.07 GB for the 8,192 NICs of a k = 32 fat tree).
  auto rates = std::make_shared<const std::vector<BitRate>>(host_rates_);
  auto rtt = [route, rates, o, latency, data, ack](int a, int b, int* hops) {
    const IdleFabric::Route there = (*route)(a, b);  // (a copy: the next call may reuse it)
    const IdleFabric::Route& back = (*route)(b, a);
    if (hops) *hops = static_cast<int>(there.size());
    return IdleFabric::one_way(there, data, (*rates)[a], o, latency) +
           IdleFabric::one_way(back, ack, (*rates)[b], o, latency);
  };
  // The fabric's largest: from host 0 to every other (the topologies are symmetric).
  Time longest;
  for (int h = 1; h < static_cast<int>(rates->size()); ++h)
    longest = std::max(longest, rtt(0, h, nullptr));
  nics.set_paths([rtt, longest](int32_t h, int32_t peer) {
    nic::CcPath p;
    p.base_rtt = rtt(h, peer, &p.hops);
    p.max_base_rtt = longest;
    return p;
  });
}

void Fabric::make_switches() {
  const auto seed = static_cast<uint64_t>(cfg_.sim.seed);
  // Once per chip: the headroom's cell expansion walks every frame size up to the MTU.
  std::map<const sw::SwitchConfig*, Bytes> headroom;
  // SystemC ports only up to each chip's last wired port (wire_up sends the rest to a sink).
  std::vector<int> wired(static_cast<size_t>(topology_.switches()), 0);
  auto wire = [&wired](int s, int p) {
    wired[static_cast<size_t>(s)] = std::max(wired[static_cast<size_t>(s)], p + 1);
  };
  for (int h = 0; h < topology_.hosts; ++h)
    wire(topology_.host_port[h].sw, topology_.host_port[h].port);
  for (const auto& t : topology_.wires) {
    wire(t.a.sw, t.a.port);
    wire(t.b.sw, t.b.port);
  }
  for (int s = 0; s < topology_.switches(); ++s) {
    const sw::SwitchConfig& chip = *chips_[s];
    sw::MacConfig m = mac_;
    m.port_rates = port_rates_[s];
    auto hr = headroom.find(&chip);
    if (hr == headroom.end()) hr = headroom.emplace(&chip, cfg_.pfc_headroom(chip)).first;
    m.headroom_per_pg = hr->second;
    m.rates_change_at = change_at_;
    m.port_rates_after = port_rates_[s];
    for (int p = 0; p < ports(s) && failure_; ++p)
      if (fail_host_ < 0) m.port_rates_after[p] = slow_rate_;
    if (failure_ && fail_host_ >= 0 && topology_.host_port[fail_host_].sw == s)
      m.port_rates_after[topology_.host_port[fail_host_].port] = slow_rate_;
    std::string name = topology_.switch_names[s];
    std::replace(name.begin(), name.end(), '.', '_');  // SystemC names hold no '.'
    switches_.push_back(std::make_unique<sw::SwitchModule>(name.c_str(), chip, topology_.tables[s],
                                                           seed, m, scheduler_for(chip.cycle()),
                                                           wired[static_cast<size_t>(s)]));
    auto& core = switches_.back()->core();
    core.set_window(cfg_.sim.warmup, cfg_.sim.duration);
    // The occupancy time series is sampled only for a run that streams it (OccupancyWriter sets
    // the interval): samples nobody releases would pile up in the cores.
  }
}

DeviceScheduler* Fabric::scheduler_for(Time period) {
  for (auto& d : switch_schedulers_)
    if (d->period() == period) return d.get();
  const std::string name = "clock" + std::to_string(switch_schedulers_.size());
  switch_schedulers_.push_back(std::make_unique<DeviceScheduler>(name.c_str(), period));
  return switch_schedulers_.back().get();
}

link::LinkModule* Fabric::make_link(const std::string& name, link::LinkClass c, bool fails) {
  link::LinkConfig lc = cfg_.link.of_class(c);
  if (!fails) lc.phy.fail_lanes_left = 0;  // a healthy link in a run with a lane failure
  return make_link(name, lc);
}

link::LinkConfig Fabric::box_link(int box) const {
  const auto tier = static_cast<size_t>(topology_.boxes[static_cast<size_t>(box)].tier);
  return cfg_.switch_kinds[static_cast<size_t>(cfg_.tier_box_index(tier))].box.internal(cfg_.link);
}

link::LinkModule* Fabric::make_link(const std::string& name, const link::LinkConfig& lc) {
  link_modules_.push_back(std::make_unique<link::LinkModule>(
      name.c_str(), lc, static_cast<uint64_t>(cfg_.sim.seed), cfg_.sim.warmup, cfg_.sim.duration));
  return link_modules_.back().get();
}

void Fabric::wire_up() {
  // Hosts (through links unless those are ideal), then switch-to-switch links, then terminators
  // on the ports left over.
  const int nsw = topology_.switches();
  peers_.resize(nsw);
  for (int s = 0; s < nsw; ++s) peers_[s].resize(static_cast<size_t>(ports(s)));
  for (int h = 0; h < topology_.hosts; ++h) {
    const auto [s, p] = topology_.host_port[h];
    FabricWire w{{WireEnd::Kind::kHost, h, 0}, {WireEnd::Kind::kSwitch, s, p}, nullptr};
    if (cfg_.link.ideal()) {  // nothing to model: bind the ports directly (saves a call a hop)
      hosts_->out[h].bind(switches_[s]->in[p]);
      switches_[s]->out[p].bind(hosts_->in[h]);
    } else {
      std::string name = fmt::format("link_host{}_{}_p{}", h, topology_.switch_names[s], p);
      std::replace(name.begin(), name.end(), '.', '_');
      w.module = make_link(name, link::LinkClass::kHost, fail_host_ < 0 || fail_host_ == h);
      hosts_->out[h].bind(w.module->from_a);
      w.module->to_b.bind(switches_[s]->in[p]);
      switches_[s]->out[p].bind(w.module->from_b);
      w.module->to_a.bind(hosts_->in[h]);
    }
    peers_[s][p] = w.a;
    wires_.push_back(w);
  }
  for (const auto& t : topology_.wires) {
    // (SystemC names hold no '.': a box's chip box.leaf0 is box_leaf0 there)
    std::string name = fmt::format("link_{}_p{}_{}_p{}", topology_.switch_names[t.a.sw], t.a.port,
                                   topology_.switch_names[t.b.sw], t.b.port);
    std::replace(name.begin(), name.end(), '.', '_');
    auto* l = t.box >= 0 ? make_link(name, box_link(t.box))
                         : make_link(name, link::LinkClass::kFabric, fail_host_ < 0);
    switches_[t.a.sw]->out[t.a.port].bind(l->from_a);
    l->to_b.bind(switches_[t.b.sw]->in[t.b.port]);
    switches_[t.b.sw]->out[t.b.port].bind(l->from_b);
    l->to_a.bind(switches_[t.a.sw]->in[t.a.port]);
    const WireEnd a{WireEnd::Kind::kSwitch, t.a.sw, t.a.port};
    const WireEnd b{WireEnd::Kind::kSwitch, t.b.sw, t.b.port};
    peers_[t.a.sw][t.a.port] = b;
    peers_[t.b.sw][t.b.port] = a;
    wires_.push_back({a, b, l});
  }
  // One terminator per switch takes all its idle ports: a fat tree of 64-port chips at k = 16
  // leaves 48 of every switch's ports idle (15,360 modules, one per port, before).
  for (int s = 0; s < nsw; ++s) {
    link::UnconnectedPort* idle = nullptr;
    for (int p = 0; p < ports(s); ++p) {
      if (peers_[s][p].kind != WireEnd::Kind::kNone) continue;
      if (!idle) {
        std::string n = fmt::format("{}_unconnected", topology_.switch_names[s]);
        std::replace(n.begin(), n.end(), '.', '_');
        unconnected_.push_back(std::make_unique<link::UnconnectedPort>(n.c_str()));
        idle = unconnected_.back().get();
      }
      if (static_cast<size_t>(p) < switches_[s]->out.size())
        switches_[s]->out[p].bind(idle->in);
      else
        switches_[s]->set_idle_sink(idle);
    }
  }
  // Test-only fault injection, so that tests can prove a broken model fails the run.
  if (const char* fault = std::getenv("FABRICSIM_FAULT");
      fault && std::string(fault) == "leak_cell")
    switches_.back()->core().inject_cell_leak();
  if (const char* fault = std::getenv("FABRICSIM_FAULT");
      fault && std::string(fault) == "nic_payload" && nics_)
    nics_->inject_payload_fault();
}

std::string Fabric::device_name(const WireEnd& e) const {
  switch (e.kind) {
    case WireEnd::Kind::kHost:
      return fmt::format("host{}", e.index);
    case WireEnd::Kind::kSwitch:
      return topology_.switch_names[e.index];
    case WireEnd::Kind::kNone:
      break;
  }
  return "";
}

uint64_t Fabric::measured_in_flight() const {
  uint64_t n = 0;
  for (int s = 0; s < switch_count(); ++s)
    if (switch_here(s)) n += switches_[s]->core().measured_in_flight();
  return n + (remote_ ? remote_->counts().win_in_flight : 0);
}

void Fabric::open_window() {
  if (window_open_) return;
  window_open_ = true;
  const Time t = cfg_.sim.warmup;
  fc_at_start_.assign(switches_.size(), {});
  for (size_t s = 0; s < switches_.size(); ++s) {
    // One snapshot per port with state of its own (the unwired ports share the idle port's).
    sw::SwitchCore& core = switches_[s]->core();
    const int kept = core.port_slot(ports(static_cast<int>(s)) - 1) + 1;
    for (int p = 0; p < kept; ++p) fc_at_start_[s].push_back(core.port_fc(p, t));
  }
  for (int h = 0; h < topology_.hosts; ++h)
    host_fc_at_start_.push_back(hosts_->host(h).flow_control()->port_stats(0, t));
  if (remote_) remote_->open_window();
}

link::FlowControl::PortStats Fabric::window_fc(int s, int p, Time now) {
  sw::SwitchCore& core = switches_[s]->core();
  return core.port_fc(p, now).since(fc_at_start_[s][static_cast<size_t>(core.port_slot(p))]);
}

link::FlowControl::PortStats Fabric::window_host_fc(int h, Time now) {
  return hosts_->host(h).flow_control()->port_stats(0, now).since(host_fc_at_start_[h]);
}

link::FlowControl::PortStats Fabric::run_fc(int s, int p, Time now) {
  return switches_[s]->core().port_fc(p, now);
}

link::FlowControl::PortStats Fabric::run_host_fc(int h, Time now) {
  return hosts_->host(h).flow_control()->port_stats(0, now);
}

void Fabric::register_checks() {
  // Each switch: its packet slots, cells and per-port counters.
  // (MPI: rank 0 asks the rank that runs the switch; fabric_mpi.cpp.)
  for (int s = 0; s < switch_count(); ++s)
    checks_.add(switches_[s]->core().name() + ": packets and cells",
                [this, s](std::vector<std::string>& v) {
                  auto w = switch_violations(s, 0);
                  v.insert(v.end(), w.begin(), w.end());
                });
  // Each switch: progress (liveness), from the samples the runner takes (sim.stall_limit).
  if (cfg_.sim.stall_limit > Time())
    for (int s = 0; s < switch_count(); ++s)
      checks_.add(switches_[s]->core().name() + ": progress",
                  [this, s](std::vector<std::string>& v) {
                    auto w = switch_violations(s, 1);
                    v.insert(v.end(), w.begin(), w.end());
                  });
  // Per link direction: handed over = delivered + lost. Links carry what the switches and hosts
  // send and deliver what they receive (with ideal links, hosts bind to switches directly: then
  // the links carry only switch-to-switch traffic).
  checks_.add("links: frames handed over = delivered + lost", [this](std::vector<std::string>& v) {
    uint64_t received = 0, departed = 0, entered = 0, lost = 0;
    for (int s = 0; s < switch_count(); ++s)
      if (switch_here(s)) {
        received += switches_[s]->core().received();
        departed += switches_[s]->core().departed();
      }
    // (MPI: the directions other ranks' switches send on never ran here: their counts are 0.)
    for (const auto& l : link_modules_)
      for (const auto* d : {&l->a_to_b(), &l->b_to_a()}) {
        entered += d->frames;
        lost += d->lost;
      }
    if (remote_) {
      const SwitchCounts c = remote_->counts();
      received += c.received;
      departed += c.departed;
      entered += c.link_frames;
      lost += c.link_lost;
    }
    const uint64_t injected = hosts_->injected(), delivered = hosts_->delivered();
    const bool ideal = cfg_.link.ideal();
    const uint64_t should_enter = ideal ? departed - delivered : departed + injected;
    const uint64_t should_leave = ideal ? received - injected : received + delivered;
    if (entered != should_enter || entered - lost != should_leave)
      v.push_back(fmt::format(
          "links: handed {} packets, delivered {}, lost {}; but the switches sent {} and "
          "received {}, the hosts injected {} and received {}",
          entered, entered - lost, lost, departed, received, injected, delivered));
  });
  // End to end, over the whole run and over the measurement window.
  checks_.add(
      "end to end: injected = delivered + dropped + in flight",
      [this](std::vector<std::string>& v) {
        const Totals t = totals();
        if (t.injected != t.delivered + t.dropped + t.in_flight)
          v.push_back(fmt::format("injected {} != delivered {} + dropped {} + in flight {}",
                                  t.injected, t.delivered, t.dropped, t.in_flight));
        if (t.win_injected != t.win_delivered + t.win_dropped + t.win_in_flight)
          v.push_back(fmt::format("window: injected {} != delivered {} + dropped {} + in flight {}",
                                  t.win_injected, t.win_delivered, t.win_dropped, t.win_in_flight));
      });
  // Liveness: a finite workload (a trace) was sent whole; the run drains until it is, so packets
  // left over mean the drain limit cut it short (an interrupted run is partial by choice).
  if (hosts_->workload() > 0)
    checks_.add("traffic: every packet of the trace sent", [this](std::vector<std::string>& v) {
      if (InterruptGuard::signal_received()) return;
      const std::string m = host::unsent_workload(hosts_->workload(), hosts_->injected());
      if (!m.empty()) v.push_back(m);
    });
  // NICs: every posted message delivered exactly once and intact, or in flight, or failed after
  // its retries; a message file posted whole.
  if (nics_) {
    checks_.add("nic: every message delivered once and intact",
                [this](std::vector<std::string>& v) { nics_->check(v); });
    // Liveness: the run drains until every posted message completed or failed, so a message
    // still in flight means the drain limit cut it short; a failed one is work not done.
    checks_.add("nic: every posted message completed", [this](std::vector<std::string>& v) {
      if (InterruptGuard::signal_received()) return;
      nics_->check_done(v, fmt::format("at sim.duration + sim.drain_limit = {}: the fabric is "
                                       "stuck, or the work needs a longer sim.drain_limit",
                                       (cfg_.sim.duration + cfg_.sim.drain_limit).str()));
    });
    if (workload_)
      checks_.add("workload: every rank's program finished", [this](std::vector<std::string>& v) {
        const workload::WorkloadEngine& e = workload_->engine();
        if (InterruptGuard::signal_received() || e.finished()) return;
        std::string nodes;
        for (uint32_t i : e.stuck(3)) nodes += "; " + workload_->graph().describe(i);
        v.push_back(
            fmt::format("workload: {} of {} nodes never finished (the run ended at sim.duration + "
                        "sim.drain_limit first: raise sim.drain_limit){}",
                        e.unfinished(), workload_->graph().size(), nodes));
      });
    checks_.add("nic: every message of the workload posted", [this](std::vector<std::string>& v) {
      if (InterruptGuard::signal_received() || nics_->unposted() == 0) return;
      v.push_back(fmt::format(
          "traffic: {} of the workload's {} messages were never posted (the run ended at "
          "sim.duration + sim.drain_limit first): raise sim.duration or sim.drain_limit",
          nics_->unposted(), nics_->total_messages()));
    });
  }
  // Flow control: credits returned, pause state consistent, buffer accounts matching.
  for (int h = 0; h < topology_.hosts; ++h)
    checks_.add(fmt::format("host{}: flow control", h), [this, h](std::vector<std::string>& v) {
      std::vector<std::string> w;
      hosts_->host(h).flow_control()->check_invariants(w);
      for (auto& m : w) v.push_back(fmt::format("host{}: {}", h, m));
    });
  for (int s = 0; s < switch_count(); ++s)
    checks_.add(switches_[s]->core().name() + ": flow control",
                [this, s](std::vector<std::string>& v) {
                  auto w = switch_violations(s, 2);
                  v.insert(v.end(), w.begin(), w.end());
                });
}

Time Fabric::progress_interval() const {
  return cfg_.sim.stall_limit > Time()
             ? Time::fs(std::max<int64_t>(cfg_.sim.stall_limit.as_fs() / 4, 1))
             : Time();
}

void Fabric::sample_progress(Time now) {
  if (cfg_.sim.stall_limit <= Time()) return;
  for (int s = 0; s < switch_count(); ++s)
    if (switch_here(s)) switches_[s]->core().sample_progress(now, cfg_.sim.stall_limit);
  if (remote_) remote_->sample_progress(now);
}

bool Fabric::per_port_counters() const {
  int64_t ports = 0;
  for (const int p : topology_.switch_ports) ports += p;
  return cfg_.stats.per_port(ports);
}

stats::Registry Fabric::collect_stats(Time now) {
  stats::Registry r(now, per_port_counters());
  for (int s = 0; s < topology_.switches(); ++s)
    switches_[s]->core().register_stats(r, topology_.switch_names[s]);
  if (r.per_port()) {
    for (const auto& l : link_modules_) l->register_stats(r, l->basename());
    for (int h = 0; h < topology_.hosts; ++h)
      hosts_->host(h).register_stats(r, device_name({WireEnd::Kind::kHost, h, 0}));
    if (nics_)
      for (int h = 0; h < topology_.hosts; ++h)
        nics_->nic(h).register_stats(r, fmt::format("nic{}", h));
  }
  if (workload_ && workload_->scale_up()) workload_->scale_up()->register_stats(r, "scaleup");
  return r;
}

Fabric::Totals Fabric::totals() const {
  Totals t;
  t.injected = hosts_->injected();
  t.delivered = hosts_->delivered();
  t.win_injected = hosts_->win_injected();
  t.win_delivered = hosts_->win_delivered();
  for (int s = 0; s < switch_count(); ++s) {
    if (!switch_here(s)) continue;
    const auto& core = switches_[s]->core();
    t.dropped += core.dropped();
    t.in_flight += core.in_flight();
    t.win_dropped += core.win_dropped();
    t.win_in_flight += core.measured_in_flight();
  }
  for (const auto& l : link_modules_)
    for (const auto* d : {&l->a_to_b(), &l->b_to_a()}) {
      t.link_lost += d->lost;
      t.win_dropped += d->win_lost;
    }
  if (remote_) {
    const SwitchCounts c = remote_->counts();
    t.dropped += c.dropped;
    t.in_flight += c.in_flight;
    t.win_dropped += c.win_dropped + c.link_win_lost;
    t.win_in_flight += c.win_in_flight;
    t.link_lost += c.link_lost;
  }
  t.dropped += t.link_lost;
  return t;
}

}  // namespace fabricsim::sim
