// The fabric: the top-level SystemC module of a run, elaborated from one RunConfig.
//
// Hardware: a whole network of the configuration's switch chips, the links between them and the
// hosts at the edge, wired as the topology says (models/topology/). Each switch is the chip of its
// tier: a switch kind (switch_kinds, assigned by topology.kinds) or the switch: chip, with that
// chip's ports, port speed, buffer and pipeline. Its constructor is the
// elaborator: it turns the topology's netlist (switches, where hosts attach, switch-to-switch
// wires) into modules and bindings, and registers every block's end-of-run checks. It runs no
// simulation itself: `fabricsim run` drives it through models/sim/runner.h, and a user may
// instantiate it in their own sc_main next to other SystemC models and call sc_start themselves
// (testbenches/embed/ does so).
//
// Devices share no mutable state: every interaction between them crosses a PacketPortIf through a
// link (a LinkModule, or a direct binding when links are ideal) with a known latency. That is
// where a parallel simulation would cut the fabric into partitions (docs/architecture.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/common/span_log.h"
#include "models/common/stats.h"
#include "models/common/window_worker.h"
#include "models/host/hosts_module.h"
#include "models/link/flow_control.h"
#include "models/link/link_module.h"
#include "models/nic/nic_array.h"
#include "models/sim/checks.h"
#include "models/sim/remote_fabric.h"
#include "models/sim/run_config.h"
#include "models/switch/switch_module.h"
#include "models/topology/topology.h"
#include "models/workload/innet_plan.h"
#include "models/workload/nic_driver.h"

namespace fabricsim::sim {

// The folder relative input paths (a trace file) resolve against: the configuration file's.
std::string config_dir(const RunConfig& cfg);

// The limits a message of the run must keep (hosts, QPs per pair, classes).
nic::MessageLimits message_limits(const RunConfig& cfg, int hosts);
// Reads a message file (traffic.pattern messages) whole, as the run posts it, and refuses what
// the run would: an RDMA READ under RUD, a pair the topology cannot route. Throws InputError.
void check_message_file(const RunConfig& cfg, const topo::Topology& t);
// The ranks' execution graph of a workload run (traffic.pattern workload); throws InputError.
// `innet`: the switches' aggregation units (switch.aggregation), for allreduce_innet.
workload::ExecGraph build_workload_graph(
    const RunConfig& cfg, int hosts,
    std::shared_ptr<const workload::InNetworkPlan> innet = nullptr);

// One end of a wire: a host's NIC port or a switch port.
struct WireEnd {
  enum class Kind : uint8_t { kNone, kHost, kSwitch };
  Kind kind = Kind::kNone;
  int index = -1;  // host number or switch index
  int port = 0;    // the switch port (0 for a host)
};

// A cable between two devices, both directions. `module` is null for a host link when links are
// ideal (the host binds to its switch port directly).
struct FabricWire {
  WireEnd a, b;
  link::LinkModule* module = nullptr;
};

class Fabric : public sc_core::sc_module {
 public:
  // Elaborates the fabric `cfg` describes (validated: RunConfig::load). Throws InputError for bad
  // input found while building (a trace line, linked ports with different lane counts).
  Fabric(sc_core::sc_module_name name, const RunConfig& cfg);
  ~Fabric() override;

  const RunConfig& config() const { return cfg_; }
  const topo::Topology& topology() const { return topology_; }
  int hosts() const { return topology_.hosts; }
  int switch_count() const { return topology_.switches(); }
  // Switch s's chip: its configuration, its port count, and its switch kind's name ("switch" for
  // the switch: chip; "" when the configuration assigns no kinds: results then leave it out).
  const sw::SwitchConfig& switch_config(int s) const { return *chips_[s]; }
  int ports(int s) const { return topology_.switch_ports[s]; }
  const std::string& switch_kind(int s) const { return kinds_[s]; }

  sw::SwitchModule& switch_module(int s) { return *switches_[s]; }
  const sw::SwitchModule& switch_module(int s) const { return *switches_[s]; }
  // The hosts: each a device with its own MAC, flow control and statistics (models/host/).
  host::HostsModule& hosts_module() { return *hosts_; }
  const host::HostsModule& hosts_module() const { return *hosts_; }

  // Every cable, host links first (host order), then switch-to-switch wires (topology order).
  const std::vector<FabricWire>& wires() const { return wires_; }
  // What switch s's port p is wired to (kind kNone: a terminator).
  const WireEnd& peer(int s, int p) const { return peers_[s][p]; }
  // Device names as results print them: `host7`, or the switch's name.
  std::string device_name(const WireEnd& e) const;
  // The line rate of switch s's port p (its chip's port_speed; breakout: link.port_lanes) and of
  // host h's NIC port (its switch port's).
  BitRate port_rate(int s, int p) const { return port_rates_[s][p]; }
  BitRate host_rate(int h) const { return host_rates_[h]; }
  // Whether the traffic runs on a helper thread (sim.traffic_thread, with a CPU of its own).
  bool helper_threads() const { return helper_threads_; }

  // The switches may run ahead of the simulation's present (DeviceScheduler::set_lookahead) by
  // at most their links' lookahead, and never into cycles that start at or after `t`: the runner
  // sets t to the end of each step, where it reads the fabric's state.
  void set_horizon(Time t);
  // Threads: joins the switches' window in flight, so that every device has run to the
  // present (the runner, after each sc_start, before it reads the fabric).
  void sync();
  // Windows the switches ran on the workers (threads; 0 with one).
  uint64_t worker_windows() const;
  // Windows the hosts ran one host after another (HostsModule::set_window_bound).
  uint64_t host_windows() const { return hosts_ ? hosts_->host_windows() : 0; }
  // The sides' balance with threads: the main thread's wall seconds waiting for the workers at
  // window ends, and each worker's wait there for the main thread (DeviceScheduler).
  double main_wait_s() const;
  std::vector<double> worker_wait_s() const;
  std::vector<double> worker_idle_s() const;  // (DeviceScheduler::worker_idle_s)
  // Switches the main thread runs (threads; all of them with one).
  int main_thread_switches() const;
  // Threads that run the fabric (sim.threads, at most one per switch beside the main thread).
  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Sides the switches are split in: threads, or MPI ranks (one side each); 1 otherwise.
  int sides() const { return sides_; }
  // MPI: whether switch s runs in this process (every switch without MPI), the side this
  // process runs, and rank 0's stand-in for the others (null elsewhere and without MPI).
  bool switch_here(int s) const { return here_.empty() || here_[static_cast<size_t>(s)]; }
  int my_side() const { return my_side_; }
  RemoteFabric* remote() { return remote_.get(); }
  // The switches' scheduler (threads and MPI need one clock: set_threads).
  DeviceScheduler& switch_scheduler() { return *switch_schedulers_[0]; }
  // Direction `dir` (0: a to b) of wire `wire`'s counters (MPI: where its sender runs).
  const link::LinkModule::Counters& wire_counters(int wire, int dir) const;
  // Calls that crossed between sides (perf.json's cross_side_calls).
  uint64_t cross_side_calls() const;
  // MPI, what a rank tells rank 0 of its own switches (fabric_mpi.cpp): their counts; their
  // counters and those of the switch-to-switch link directions they send on (nested as
  // summary.json's counters); the violations of switch s's check `which` (RemoteFabric); their
  // spans, flushed at `now`, in this side's log.
  SwitchCounts local_counts() const;
  nlohmann::json local_counters(Time now);
  std::vector<std::string> switch_violations(int s, int which) const;
  stats::SpanLog& side_spans(int side) { return switch_spans_[static_cast<size_t>(side)]; }
  void flush_local_spans(Time now);
  // summary.json's counters: collect_stats(now), and the other ranks' over their switches'.
  nlohmann::json counters_json(Time now);
  // Switches each side runs, the main thread's first ({all} with one thread).
  std::vector<int> side_switches() const;
  // Threads: the switches' windows each thread ran, the main thread's first (empty with one).
  std::vector<uint64_t> side_runs() const;
  // Cycles of run-ahead of the switches (the least over their clocks; 1: none).
  int64_t lookahead_cycles() const;
  // Flow-control spans and drops of the run (flow_events.csv), devices numbered switches first,
  // then hosts. flush_spans(now) adds the spans still open at the end of the run (once).
  const stats::SpanLog& spans() const { return spans_; }
  void flush_spans(Time now);

  // Packets injected in the measurement window that are still inside the network.
  uint64_t measured_in_flight() const;
  // Work the run must still do before it may stop: packets of a finite workload (a trace) not
  // yet sent, and with NICs the messages posted and not yet completed or failed (the run
  // drains until they are) plus those of a message file not yet posted.
  uint64_t workload_left() const {
    return hosts_->workload_left() +
           (nics_ ? nics_->outstanding() + nics_->unposted() + nics_->driver_left() : 0);
  }
  // The drain's look-ahead: workload_left() stays above 0 until at least this instant (`now`
  // when nothing tells; the NICs' message lists do: NicArray::done_not_before).
  Time drain_not_before(Time now) const {
    return nics_ ? std::max(now, nics_->done_not_before(now)) : now;
  }
  // The ranks' programs (traffic.pattern workload), or null.
  const workload::NicDriver* workload() const { return workload_; }
  // The switches' aggregation units' plan (switch.aggregation; nullptr: none).
  const workload::InNetworkPlan* innet_plan() const { return innet_.get(); }
  // The RDMA NICs (nic.enabled), or null.
  const nic::NicArray* nics() const { return nics_; }
  nic::NicArray* nics() { return nics_; }
  // Packet counts of the whole fabric, over the run and over the window (the conservation law's
  // terms). Dropped includes frames lost to bit errors on links (link_lost).
  struct Totals {
    uint64_t injected = 0, delivered = 0, dropped = 0, in_flight = 0, link_lost = 0;
    uint64_t win_injected = 0, win_delivered = 0, win_dropped = 0, win_in_flight = 0;
  };
  Totals totals() const;
  // The measurement window opens: flow-control statistics are taken from here on.
  void open_window();
  // Flow-control statistics of switch s's port p / of host h since the window opened.
  link::FlowControl::PortStats window_fc(int s, int p, Time now);
  link::FlowControl::PortStats window_host_fc(int h, Time now);
  // The same over the whole run, from 0 to `now` (the counters' span).
  link::FlowControl::PortStats run_fc(int s, int p, Time now);
  link::FlowControl::PortStats run_host_fc(int h, Time now);
  // Stop injecting (the run is over); the network keeps delivering what it holds.
  void stop_traffic() { hosts_->stop(); }

  // The end-of-run checks every block registered (conservation, credits, cells, progress).
  const Checks& checks() const { return checks_; }
  // Liveness: every switch samples its ports' progress at `now` (between sc_start calls, at
  // multiples of progress_interval()); stalls beyond sim.stall_limit fail the run's checks.
  void sample_progress(Time now);
  // The sampling interval: a quarter of sim.stall_limit (Time() when the checks are off).
  Time progress_interval() const;

  // Every block's statistics, each registered by the block that owns it (register_stats): the
  // switches (`<switch>.*`, with `<switch>.port<N>.*`), the links (`<link>.a_to_b.*`), the hosts'
  // flow control (`host<N>.*`), read at `now` (the run's end). summary.json writes it as
  // `counters`. Per-port statistics only when per_port_counters(). The registry reads the blocks'
  // members: use it while the fabric lives.
  stats::Registry collect_stats(Time now);
  // stats.per_port_counters for this fabric's size (docs/results.md).
  bool per_port_counters() const;

 private:
  void make_hosts();
  // Tells the NICs' congestion control what it may know of the paths (nic::CcPath).
  void set_nic_paths(nic::NicArray& nics) const;
  void make_switches();
  void wire_up();
  void register_checks();
  void set_lookahead();
  void set_threads();
  // Host windows (HostsModule::set_window_bound): how far the hosts may run from `t`.
  void set_host_windows();
  Time host_window_end(Time t) const;
  // sim.rebalance in one process (auto: NIC hosts on packet-model switches): the threads take
  // the windows' switches as they are free.
  bool takes_switches() const;
  bool packet_fabric() const;  // every switch of the packet model (switch.model)
  // The switches' scheduler that has the worker threads (sim.threads > 1), or none.
  const DeviceScheduler* threaded_scheduler() const;
  // Threads: the side of each switch for `sides` sides (0: the main thread's).
  std::vector<int> partition(int sides) const;
  // Threads: the switches' spans of a window (or of the end of the run) into spans_ at `at`.
  void put_switch_spans(size_t at);
  link::LinkModule* make_link(const std::string& name, link::LinkClass c, bool fails);
  link::LinkModule* make_link(const std::string& name, const link::LinkConfig& lc);
  // The internal links of box `box` (Topology::boxes).
  link::LinkConfig box_link(int box) const;
  DeviceScheduler* scheduler_for(Time period);  // the switches' scheduler of that clock

  const RunConfig cfg_;
  const topo::Topology topology_;
  std::vector<const sw::SwitchConfig*> chips_;    // per switch, into cfg_
  std::vector<std::string> kinds_;                // per switch
  std::vector<std::vector<BitRate>> port_rates_;  // [switch][port]
  std::vector<BitRate> host_rates_;
  bool helper_threads_ = false;
  // Lane failure (link.phy.lane_failure): the rate after it, when, and which host (-1: all).
  bool failure_ = false;
  BitRate slow_rate_;
  Time change_at_ = Time::max();
  int fail_host_ = -1;
  sw::MacConfig mac_;

  std::unique_ptr<host::HostsModule> hosts_;
  nic::NicArray* nics_ = nullptr;            // hosts_'s endpoint (nic.enabled)
  workload::NicDriver* workload_ = nullptr;  // nics_'s driver (traffic.pattern workload)
  std::shared_ptr<const workload::InNetworkPlan> innet_;
  // Wake the switches: one process per clock period (device_scheduler.h).
  std::vector<std::unique_ptr<DeviceScheduler>> switch_schedulers_;
  stats::SpanLog spans_;
  bool spans_flushed_ = false;
  std::vector<std::unique_ptr<sw::SwitchModule>> switches_;
  std::vector<std::unique_ptr<link::LinkModule>> link_modules_;
  std::vector<std::unique_ptr<link::UnconnectedPort>> unconnected_;
  std::vector<FabricWire> wires_;
  std::vector<std::vector<WireEnd>> peers_;  // [switch][port]

  bool window_open_ = false;
  std::vector<std::vector<link::FlowControl::PortStats>> fc_at_start_;  // [switch][port_slot]
  std::vector<link::FlowControl::PortStats> host_fc_at_start_;
  Checks checks_;
  // Threads (sim.threads P): the switches' windows run on workers_ (set_threads). Last, so
  // that they are stopped before the devices they run are destroyed.
  std::vector<stats::SpanLog> switch_spans_;  // the switches' spans of the window, per side
  size_t span_mark_ = 0;                      // spans_'s size when it began
  Time horizon_;  // set_horizon: the runner's next read of the fabric (host windows stop there)
  std::vector<std::unique_ptr<WindowWorker>> workers_;  // side s on workers_[s - 1]
  // MPI (set_threads): the sides are ranks; this process runs side my_side_.
  int sides_ = 1;
  int my_side_ = 0;
  std::vector<uint8_t> here_;  // per switch: runs here (empty: all)
  std::unique_ptr<RemoteFabric> remote_;
  // MPI: the sides and the checks of set_threads.
  int mpi_sides(int64_t asked) const;
  void set_mpi(const std::vector<int>& side);
};

}  // namespace fabricsim::sim
