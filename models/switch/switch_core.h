// The switch chip's data path, cycle-accurate at the core clock, as a plain C++ class.
//
// Hardware modelled: ingress ports that receive packets at line rate and cut them into cells; the
// shared cell buffer with admission control (shared_buffer.h); per-input queues - virtual output
// queues per (output, class), one FIFO per input, or none for ideal output queueing; a crossbar
// that moves at most one cell per input and per output in each crossbar slot (speedup slots per
// cell time), matched by a VoqScheduler; per-port egress class queues with strict-priority or DWRR
// arbitration (egress_port.h); and the MAC that serialises packets at port rate.
//
// Timing rules (period P, cycle c starts at c*P):
//  - cell k of a packet whose first bit arrives at t0 is received at t0 + ser(min((k+1)*cell,
//  size));
//    the switch sees it at the next cycle edge, and it is eligible for the crossbar ingress_cycles
//    later (cut_through), or together with the last cell (store_and_forward);
//  - the packet is admitted or dropped whole when its first cell is seen; packets seen in the
//    same cycle are admitted in round-robin order of their ingress ports, at most
//    switch.ingress.admissions_per_cycle per ingress pipeline (the rest wait for a later cycle,
//    oldest first: ingress_admission.h);
//  - switch.buffer.allocation packet: admission takes all of the packet's cell ids; cell: it
//    takes the first cell's, and each later cell takes its id when it is seen (or, when the cell
//    ahead of it waits for its bank, once that one is written: a packet's cells are written in
//    order), which names the bank its write goes to. A later cell that finds no room drops the
//    packet mid-way, counted once, there: a packet not yet in its ingress queue (store-and-forward
//    joins it with its last cell) returns its cells at once; one in its queue, whose cells may
//    have crossed and whose frame may be on the wire, is cut after the cells it has and sent as a
//    stomped frame (bad FCS), which is never delivered; its cells return as it leaves;
//  - the buffer holds a cell from the cycle it is written: cell k when it is seen (cell 0 at
//    admission), or later when its memory bank has no write left in that cycle (buffer_banks.h);
//    a cell is eligible for the crossbar only once written, and reading it out (crossing; with
//    shared_memory, going to its egress) takes a read of its bank in that cycle;
//  - the crossbar moves cells on core clock edges, at most once per cycle, paced so that a slot
//    (ser(cell) / speedup) passes per cell: an idle crossbar starts at once; when a slot is
//    shorter than a cycle the crossbar is ceil(cycle / slot) cells wide (a matched pair moves up
//    to that many cells of its queue at once);
//  - a matching takes iterations x cycles_per_iteration cycles from its request snapshot to its
//    grant (0: none); one at a time, its cells cross at the first crossbar slot at or after the
//    grant, or pipelined (a matching per slot, each on the requests less the cells in-flight ones
//    granted) they cross when it completes; in packet mode a pair that started a packet is held
//    (out of the matchings) and its cells cross as they become eligible, a slot of its own apart,
//    until the packet's last one;
//    a cell moved in cycle c is at the egress in cycle c + crossbar_cycles + egress_cycles;
//  - an egress starts a packet at max(wire free, cycle edge + preamble) once its first cell is
//    there (store_and_forward, and single-cell packets) or one cycle later (cut_through: a
//    one-cycle elastic buffer between the core clock and the serialiser, so a packet arriving at
//    line rate never underruns), and sends back to back at port rate; a cell that is late all the
//    same stalls the wire until it comes (switch.egress.start first_cell). With no_underrun it
//    starts once every cell has crossed, at the earliest time at which each cell is at the egress
//    before the wire needs it (the egress pipeline has a fixed latency, so that time is known when
//    the last cell crosses); with all_cells once every cell is at the egress;
//  - a packet's cells are freed in the cycle its last bit leaves.
// The core only works in cycles that have work: next_work_cycle() tells the SystemC wrapper when to
// wake it, so an idle switch costs nothing. switch.model packet: no cells between admission and
// egress, only packet events (packet_core.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/event_wheel.h"
#include "models/common/fast_div.h"
#include "models/common/packet.h"
#include "models/common/port_set.h"
#include "models/common/rng.h"
#include "models/common/stats.h"
#include "models/common/telemetry.h"
#include "models/link/flow_control.h"
#include "models/link/mac.h"
#include "models/switch/buffer_banks.h"
#include "models/switch/egress_port.h"
#include "models/switch/forwarding_table.h"
#include "models/switch/ingress_admission.h"
#include "models/switch/load_balancer.h"
#include "models/switch/packet_core.h"
#include "models/switch/shared_buffer.h"
#include "models/switch/switch_config.h"
#include "models/switch/switch_core_ports.h"
#include "models/switch/switch_core_records.h"
#include "models/switch/voq_scheduler.h"

namespace fabricsim::sw {

class SwitchCore {
 public:
  // `mac`: the framing on every port (padding, preamble, inter-frame gap) and the link-level flow
  // control; none by default. `wired`: how many of the chip's ports, from port 0, a netlist wires
  // (-1: all). Where the rest can do nothing at all (no crossbar, whose arbiters would count
  // them; no credits, whose timers send on every port), they share one idle port's state: a k = 8
  // fat tree of 128-port chips wires 8, and 120 ports' records spread a switch's working set over
  // 16x the pages. Results are the same: every per-port reading of a port past the wired ones is
  // the idle port's (port_slot()), and what depends on the chip's size (buffer reserves, PFC
  // headroom, ingress pipelines, occupancy columns) keeps cfg.ports.
  SwitchCore(const SwitchConfig& cfg, ForwardingTable table, uint64_t seed, std::string name,
             const MacConfig& mac = {}, int wired = -1);
  ~SwitchCore();

  const std::string& name() const { return name_; }
  Time cycle_time() const { return period_; }
  // cycle_of: the first cycle edge at or after t; cycle_at: the cycle containing t (both divide by
  // the period with a multiply); time_of: a cycle's start.
  int64_t cycle_of(Time t) const {
    return static_cast<int64_t>(period_div_.ceil(static_cast<uint64_t>(t.as_fs())));
  }
  int64_t cycle_at(Time t) const {
    return static_cast<int64_t>(period_div_.floor(static_cast<uint64_t>(t.as_fs())));
  }
  Time time_of(int64_t cycle) const { return period_ * cycle; }

  // A packet's first bit arrives at ingress `port` at `first_bit`. If its first cell was due
  // before `now` (the caller's present) or in a cycle already processed, it is taken in the
  // first cycle that can still run instead and counted in late_arrivals(). The same port must not
  // receive overlapping packets. Returns the cycle in which the switch first has work for this
  // packet.
  [[gnu::always_inline]] int64_t receive(int port, const Packet& p, Time first_bit,
                                         Time now = Time());
  // The same for a packet with an INT header (models/common/telemetry.h): its stack travels
  // with it, a hop pushed at its egress (switch.int_telemetry), and it leaves through
  // DepartureSink::on_departure_int.
  int64_t receive_int(int port, const Packet& p, const IntStack& tel, Time first_bit,
                      Time now = Time());
  // A control frame from the peer on `port`, its last bit arriving at `arrival`. Returns the cycle
  // in which the switch has work because of it (or EventWheel::kNone).
  int64_t receive_control(int port, const ControlFrame& f, Time arrival, int64_t earliest_cycle);

  // Process cycle `cycle` (which must be >= next_work_cycle() and > every cycle processed so far).
  void run_cycle(int64_t cycle, DepartureSink& sink);
  // The next cycle with work to do, or EventWheel::kNone when idle.
  int64_t next_work_cycle() const;
  // A hint before a run of cycles (a window; DeviceScheduler::Client::prefetch_window, asked
  // while the device before it runs): asks the CPU for the records of the frames on the wires,
  // of each busy port's next frame and of the next admissions. The switch last ran a window
  // ago, its memory since pushed out of the caches by the other devices'; found one by one, each
  // would be a miss in turn, asked for together they overlap.
  void prefetch_window() const;

  // Measurement window [start, end): the warm-up before it is excluded from statistics. Set before
  // the run. finalize_window(now) closes the time averages at min(now, end) and returns that time.
  void set_window(Time start, Time end);
  Time finalize_window(Time now);
  bool in_window(Time t) const { return t >= win_start_ && t < win_end_; }

  // Buffer occupancy time series: with an interval (0: none, the default), sample k is the buffer
  // at k x interval as the cycles up to that instant left it: the cells held in all, then per
  // egress port (ports() + 1 values; bytes are cells x occupancy_cell_bytes(), which the writer
  // multiplies for the nonzero values only: a mostly idle switch's row is mostly zeros). A sample
  // is taken lazily, at the first buffer change after its instant (or when asked): the state is
  // piecewise constant between changes, so nothing is done per cycle. Samples wait in the core
  // until the owner releases them (the run's occupancy writer, models/sim/occupancy_writer.h,
  // streams them to occupancy.csv during the run): the core keeps only what was taken since the
  // last release. Set before the first cycle.
  void set_occupancy_interval(Time interval) { occ_interval_ = interval; }
  // Run-ahead (models/common/device_scheduler.h): `port`'s peer is a switch, which needs a frame
  // one link latency after its first bit, while this switch hands it over as its last bit
  // leaves (later by the frame's wire time and any underrun stall). The first bit of the oldest
  // data frame on such a wire bounds how far the fabric may run ahead.
  void watch_handover(int port);
  // That first bit (Time::max(): no data frame on a watched wire).
  Time oldest_watched_frame() const { return oldest_watched_; }
  // Takes every sample before `t`. Only valid once every cycle starting before `t` has run and
  // none before it can still come (between sc_start calls that reached `t`, or at the end).
  void take_occupancy_samples_before(Time t) {
    if (occ_interval_ > Time() && occ_next_ < t) sample_occupancy_until(t);
  }
  // The samples taken and not released, oldest first: sample occupancy_first() + k, a row of
  // occupancy_row_size() values (total cells, then per port).
  int64_t occupancy_first() const { return occ_first_; }
  int64_t occupancy_cell_bytes() const { return cell_bytes_; }
  size_t occupancy_pending() const { return occ_used_ / occ_row_size(); }
  size_t occupancy_row_size() const { return occ_row_size(); }
  const int64_t* occupancy_row(size_t k) const { return occ_rows_.data() + k * occ_row_size(); }
  // Drops the oldest `count` pending samples (count <= occupancy_pending()); the storage is kept
  // for the next ones.
  void release_occupancy(size_t count);

  // End-of-run checks: packets received = departed + dropped + resident, buffer accounting.
  std::vector<std::string> check_invariants() const;
  // Test hook: the next departing packet does not return its cells (a leak the checks must catch).
  void inject_cell_leak() { leak_next_ = true; }

  // Liveness (progress) checks, which conservation cannot make: a switch that holds every packet
  // forever conserves them all. The owner samples the core at coarse instants of its choice
  // (between cycles: every cycle before `now` has run), so nothing is done per packet or cycle:
  //  - a port stalls when, from one sample to the next, its egress has a frame to send (queued or
  //    on the wire) and no packet left, except while flow control holds it (nothing on the wire:
  //    paused, or without credits, which is the peer's doing); a stall longer than `limit` is a
  //    violation;
  //  - a frame stalls on the wire when it has been on it longer than `limit` plus ports x its own
  //    wire time (a fair crossbar interleaves at worst one cell of every other input per cell of
  //    its own, so a frame legitimately takes up to ports x its wire time under a full incast).
  // A stall is measured from the sample that last saw progress, so it may read up to one sample
  // interval short: sample at a fraction of `limit`.
  void sample_progress(Time now, Time limit);
  // The stalls beyond the limit seen by the samples, one message per port (the longest).
  std::vector<std::string> check_progress() const;

  // Statistics for results, registered under `prefix` (the switch's name): the crossbar's and
  // ingress's counters, the load balancer's, and when r.per_port() each port's as
  // `<prefix>.port<N>.*` (PortCounters, control frames, ECN marks, flow control). Not const:
  // flow control's pause times are read up to r.read_at().
  void register_stats(stats::Registry& r, const std::string& prefix);
  const PortCounters& port_counters(int port) const { return ports_[port_slot(port)]; }
  // Where port `port`'s state is kept: itself, or for a port past the wired ones when they share
  // the idle port's state (see the constructor), that port.
  int port_slot(int port) const { return port < n_ ? port : n_ - 1; }
  // Totals are sums of the per-port counters; in flight is what the packet pool holds.
  uint64_t received() const { return sum_ports(&PortCounters::rx_packets); }
  uint64_t departed() const { return sum_ports(&PortCounters::tx_packets); }
  uint64_t dropped() const { return sum_ports(&PortCounters::drops); }
  uint64_t underruns() const { return sum_ports(&PortCounters::underruns); }
  // (Packets dropped mid-way whose slot waits for an event or for their stomped frame to leave
  // are counted as dropped already.)
  uint64_t in_flight() const { return pool_.size() - free_slots_.size() - zombies_; }
  // Packets dropped after admission, when a later cell found no room (cell allocation).
  uint64_t mid_packet_drops() const { return mid_drops_; }
  uint64_t win_dropped() const { return win_dropped_; }
  // Crossbar: matchings run (begun, in a scheduler that takes time) and cells moved.
  uint64_t matchings() const { return matchings_; }
  uint64_t cells_switched() const { return cells_switched_; }
  uint64_t late_arrivals() const { return late_arrivals_; }
  uint64_t trimmed() const { return trimmed_; }  // switch.trimming: packets cut, not dropped
  // Packets that arrived inside the window and are still in the switch.
  uint64_t measured_in_flight() const { return win_received_ - win_departed_ - win_dropped_; }
  // Buffer occupancy in bytes (cells x cell size) over the window (after finalize_window).
  double buffer_mean_bytes(Time now) const { return buffer_avg_.mean(now) * cell_bytes_; }
  double buffer_peak_bytes() const { return static_cast<double>(buffer_avg_.peak() * cell_bytes_); }
  double port_mean_bytes(int port, Time now) const {
    return port_avg_[port_slot(port)].mean(now) * cell_bytes_;
  }
  double port_peak_bytes(int port) const {
    return static_cast<double>(port_avg_[port_slot(port)].peak() * cell_bytes_);
  }
  // The same peaks over the whole run (warm-up and drain included): an incast can fill the buffer
  // before the window opens or after it closes, where the window's peak does not see it.
  double buffer_peak_bytes_run() const {
    return static_cast<double>(run_peak_cells_ * cell_bytes_);
  }
  double port_peak_bytes_run(int port) const {
    return static_cast<double>(port_run_peak_[port_slot(port)] * cell_bytes_);
  }
  const SharedBuffer& buffer() const { return buffer_; }
  // The cells the buffer holds now (written: a packet's grow as its cells arrive; the buffer's
  // own accounts hold a packet's cells from admission with packet allocation, from each cell's
  // arrival with cell allocation), in all and per egress port: what the occupancy statistics and
  // samples see.
  int64_t cells_held() const { return total_cells_used_; }
  int64_t port_cells_held(int port) const { return port_cells_[port_slot(port)]; }
  const LoadBalancer& load_balancer() const { return balancer_; }
  link::FlowControl& flow_control() { return fc_; }
  // Port `port`'s flow-control readings at `now` (its slot's, as every per-port reading here).
  link::FlowControl::PortStats port_fc(int port, Time now) {
    return fc_.port_stats(port_slot(port), now);
  }
  // Flow-control spans (FlowControl::set_span_sink) and admission drops go to `sink`.
  void set_span_sink(const stats::SpanSink& sink) {
    spans_ = sink;
    fc_.set_span_sink(sink);
  }
  const link::FlowControl& flow_control() const { return fc_; }
  uint64_t control_frames_sent(int port) const { return ctrl_sent_[port_slot(port)]; }
  // ECN: ECT packets seen and marked CE at the egress queues, and the same by queue depth
  // (bins of ecn_bin_bytes(), the last one open-ended).
  struct EcnBin {
    uint64_t packets = 0, marked = 0;
  };
  const std::vector<EcnBin>& ecn_bins() const { return ecn_bins_; }
  int64_t ecn_bin_bytes() const { return ecn_bin_bytes_; }
  // Packets marked CE at egress port `port` (all its classes), and at all ports; the counts are
  // the marker's.
  uint64_t ecn_marked(int port) const {
    uint64_t n = 0;
    if (ecn_)
      for (int t = 0; t < tcs_; ++t) n += ecn_->marked(port_slot(port) * tcs_ + t);
    return n;
  }
  uint64_t ecn_marked() const {
    uint64_t n = 0;
    for (int port = 0; port < n_; ++port) n += ecn_marked(port);
    return n;
  }
  uint64_t ecn_packets() const {
    uint64_t n = 0;
    if (ecn_)
      for (int q = 0; q < n_ * tcs_; ++q) n += ecn_->packets(q);
    return n;
  }

 private:
  // The per-packet records and queues of the data path (switch_core_records.h).
  static constexpr uint32_t kNil = core::kNil;
  // Admissions whose records prefetch_window asks for (a window holds ~25 events a switch in
  // the 1,024-rank all-to-all).
  static constexpr size_t kWindowAdmissions = 8;
  static constexpr int64_t kWaitWrite = core::kWaitWrite;
  static constexpr uint32_t kControl = core::kControl;
  using Ev = core::Ev;
  using Event = core::Event;
  using Pkt = core::Pkt;
  using CellCursor = core::CellCursor;
  using List = core::List;
  using SlotRing = core::SlotRing;
  using Join = core::Join;
  using Egress = core::Egress;
  using PendingControl = core::PendingControl;
  using DueAdmission = core::DueAdmission;
  using LateAdmission = core::LateAdmission;
  using Progress = core::Progress;

  // The cells an admitted packet holds in the buffer.
  uint32_t held_cells(const Pkt& pk) const { return cell_alloc_ ? pk.taken : pk.cells; }
  // Asks the CPU for packet slot i's record (both lines) and cursor. Only a hint: `i` may be any
  // number (an event's port), and nothing in the model changes.
  // Write: for a record about to be written whole (a slot being taken).
  template <bool Write = false>
  void prefetch_pkt(uint32_t i) const {
    if (i >= pool_.size()) return;
    const char* r = reinterpret_cast<const char*>(&pool_[i]);
    __builtin_prefetch(r, Write);
    __builtin_prefetch(r + 64, Write);
    if (cursors_) __builtin_prefetch(&cursor_[i], Write);
  }
  // The last cell of packet i's list, where it is known without a walk (cell allocation: the
  // last it took); else SharedBuffer::kNoCell.
  uint32_t last_cell(uint32_t i) const {
    return cell_alloc_ ? cursor_[i].write_cell : SharedBuffer::kNoCell;
  }
  [[gnu::always_inline]] uint32_t alloc_pkt();
  int admission_queue(const Pkt& pk) const { return pk.out * tcs_ + pk.p.tc; }
  // What flow control accounts for a packet: PFC pools hold cells, IB credits count the frame.
  uint32_t fc_bytes(const Pkt& pk) const {
    return fc_.pfc() ? static_cast<uint32_t>(pk.cells * cell_bytes_)
                     : static_cast<uint32_t>(pk.p.size.count());
  }
  uint64_t sum_ports(uint64_t PortCounters::*field) const;
  [[gnu::always_inline]] void free_pkt(uint32_t i);
  // Cycle in which cell k of a packet becomes eligible at the crossbar (kept in Pkt::ready_at
  // for the next cell: computed once per cell, as it crosses).
  int64_t compute_ready_cycle(const Pkt& pk, uint32_t k) const;
  // Bytes of the frame that must be in before cell k is eligible.
  uint64_t ready_bytes(const Pkt& pk, uint32_t k) const;
  int ingress_queue(int in, int out, int tc) const;

  void handle(const Event& e, int64_t c, DepartureSink& sink);
  // The per-packet steps are always_inline: each is on every packet's path, and a call's register
  // saves and restores were ~8% of the slotted benchmark's instructions (-O3 keeps them as calls).
  [[gnu::always_inline]] void admit(uint32_t i, int64_t c);
  // Takes the packet's cells at admission (packet allocation: all; cell: the first), under the
  // buffer's admission policy (`policy`) or none (flow control decided). False: no room.
  [[gnu::always_inline]] bool take_first(Pkt& pk, bool policy);
  // Counts the packet as dropped at its ingress port in cycle c.
  void count_drop(const Pkt& pk, int64_t c);
  bool trim(Pkt& pk);
  // Cell allocation: the packet's next cell found no room in cycle c (see the timing rules).
  void drop_mid_packet(uint32_t i, int64_t c);
  void admit_due(int64_t c);
  // Runs cycle c's next event, of the wheel's and the line of joins' (whichever was scheduled
  // first: EventWheel::take_order); false when c has none left.
  [[gnu::always_inline]] bool run_event(int64_t c, DepartureSink& sink);
  // Packets that waited for an admission slot of their pipeline, oldest first.
  void admit_waiting(int64_t c);
  // Writes the packet's cells seen by cycle c (as far as the banks allow) and schedules the next
  // write; a packet waiting for one of them becomes eligible.
  void write_cells(uint32_t i, int64_t c);
  template <bool kCellAlloc>
  void write_cells_as(uint32_t i, int64_t c);
  // Bytes cell k of the packet carries (the last one its remainder).
  uint32_t cell_payload(const Pkt& pk, uint32_t k) const {
    const uint64_t rest = pk.p.size.count() - static_cast<uint64_t>(k) * cell_bytes_;
    return static_cast<uint32_t>(rest < static_cast<uint64_t>(cell_bytes_) ? rest : cell_bytes_);
  }
  // Crossbar: sends the head cell of ingress queue q (input in, output out, class tc) and updates
  // the queue; returns the bytes the cell carried.
  // The next cell's eligibility once written (write-limited banks), or kWaitWrite.
  int64_t written_ready(uint32_t i, int64_t base) const;
  [[gnu::always_inline]] void queue_ready(uint32_t i, int64_t c);
  void cell_ready(uint32_t i, int64_t c);
  // Ingress queue q (of input `in`, class tc) requests its head's output if the head has a cell
  // eligible in cycle c, else nothing (and looks again when it will have).
  [[gnu::always_inline]] void update_ready(int q, int in, int tc, int64_t c);
  [[gnu::always_inline]] void set_queue_ready(int q, int in, int tc, int out);
  void run_matchings(int64_t c);
  // The scheduler on this cycle's requests, less the pairs packet mode holds: computed now
  // (begin = false) or begun as a matching that takes time.
  void start_matching(int64_t c, bool begin);
  // The matched pairs (match_) move their cells: up to width_ each, holding the pair in packet
  // mode when its packet has cells left. Returns whether a cell moved.
  bool apply_match(int64_t c);
  // Packet mode: every held pair whose next cell is eligible and whose own slot has passed
  // moves its packet's next cells (up to width_); sets hold_wake_.
  void serve_held(int64_t c);
  int64_t hold_cycle(int in) const {
    return static_cast<int64_t>(period_div_.ceil(hold_next_fs_[in]));
  }
  // Releases the pairs whose packet ended in this slot (after its matching).
  void release_ended();
  // One cell of ingress queue q's head from `in` across; returns that packet.
  [[gnu::always_inline]] Pkt& cross(int q, int in, int tc, int64_t c);
  // The queue a matched pair serves (-1: none ready) and its class.
  [[gnu::always_inline]] int pair_queue(int in, int out, int& tc) const;
  void advance_slot();
  // The first cycle at or after the next crossbar slot.
  int64_t slot_cycle() const {
    return static_cast<int64_t>(period_div_.ceil(next_match_fs_ + (next_match_frac_ != 0)));
  }
  bool crossbar_busy() const {
    return !requested_outputs_.empty() || in_flight_ || held_count_ > 0;
  }
  [[gnu::always_inline]] void send_cell(uint32_t i, int64_t c);
  [[gnu::always_inline]] void egress_cell(uint32_t i, int64_t c);
  // The packet joins its egress class queue and the port looks for a frame to start.
  [[gnu::always_inline]] void egress_enqueue(uint32_t i, int64_t c);
  // The same, told the packet's port, class and frame bytes (a join from the line: Join).
  [[gnu::always_inline]] void egress_enqueue(uint32_t i, int out, int tc, uint32_t bytes,
                                             int64_t c);
  // egress.start no_underrun: every cell has crossed and the first is at the egress; the packet
  // joins in the cycle holding its eg_ready (now, or later through the line of joins or the
  // wheel).
  void egress_join(uint32_t i, int64_t c);
  [[gnu::always_inline]] void try_start(int port, int64_t c);
  bool start_control(int port, int64_t c);
  // The class to start on `port` under flow control or DWRR (try_start has the plain case).
  int pick_class(int port, int64_t c);
  // Strict priority: the highest class with a packet on `port`, skipping those set in `blocked`;
  // -1 if none.
  int highest_class(int port, uint32_t blocked) const {
    const uint32_t open = egq_busy_[port] & ~blocked;
    return open ? 31 - __builtin_clz(open) : -1;
  }
  void schedule_retry(int port, int64_t cycle);
  // Admission or release changed `port`'s ingress accounts: a control frame (PAUSE, XON,
  // credits) may be due on its egress.
  void look_for_control(int port, int64_t c);
  void schedule_control_timer(int port);
  [[gnu::always_inline]] void finish_tx(int port, int64_t c, DepartureSink& sink);
  [[gnu::always_inline]] void schedule_done(int port, Time end, int64_t c);
  [[gnu::always_inline]] void buffer_changed(Time t, int port, int64_t delta_cells);
  void start_averages();
  void flush_occupancy(Time t);
  void sample_occupancy_until(Time t);

  std::string name_;
  SwitchConfig cfg_;
  Architecture arch_;
  bool no_crossbar_;   // output_queued, shared_memory or packet model: cells go straight to egress
  bool packet_model_;  // switch.model packet: no cells between admission and egress (timing_)
  PacketTiming timing_;
  bool cut_through_;
  bool egress_whole_;    // switch.egress.start = all_cells
  bool egress_in_time_;  // switch.egress.start = no_underrun
  // Per port, for no_underrun: the fastest rate the port ever sends at (a frame's cells are
  // needed soonest at it).
  std::vector<BitRate> eg_fast_rate_;
  bool strict_priority_;
  bool one_class_voq_;  // VOQ with one class: readiness is the request bit itself
  ForwardingTable table_;
  LoadBalancer balancer_;  // the choice among a group's ports (switch.routing)
  bool non_minimal_;       // valiant / ugal: every packet's port goes through balancer_.route()
  int declared_;           // cfg.ports
  int n_;            // the ports with state of their own: declared_, or the wired ones + 1 idle
  Time idle_frame_;  // the longest frame's wire time on the ports past n_ (set_window)
  int tcs_;
  Time period_;
  DivideBy period_div_;
  FrameOverhead overhead_;
  // Per port: its MAC's wire and timing (breakout rates; a lane failure changes them).
  std::vector<link::Mac> mac_;
  link::FlowControl fc_;
  stats::SpanSink spans_;
  bool fc_on_;
  std::vector<uint64_t> ctrl_sent_;
  DepartureSink* sink_ = nullptr;  // the sink of the cycle being processed
  // ECN marking of ECT packets at the egress queues (flow_control.ecn).
  bool ecn_on_ = false;
  bool ecn_enqueue_ = true;
  std::unique_ptr<link::EcnMarker> ecn_;
  Rng ecn_rng_;
  std::vector<EcnBin> ecn_bins_;
  int64_t ecn_bin_bytes_ = 1;
  void ecn_mark(Pkt& pk, int64_t depth_bytes);
  std::vector<PendingControl> ctrl_pool_;  // control frames on their way in (pooled)
  static constexpr int64_t kXonScanCycles = 64;
  int64_t next_xon_scan_ = 0;
  std::vector<uint32_t> ctrl_free_;
  Time cell_ser_;
  int64_t cell_bytes_;
  int64_t slot_num_;  // crossbar slot = slot_num_ / slot_den_ fs = ser(cell) / speedup
  int64_t slot_den_;
  uint64_t slot_fs_, slot_frac_;  // the slot as whole fs + frac / slot_den_
  Rng rng_;
  std::unique_ptr<VoqScheduler> scheduler_;
  SharedBuffer buffer_;
  // The structural limits (switch.ingress, switch.buffer.banks, switch.datapath).
  IngressAdmission admission_;
  BufferBanks banks_;
  bool cell_alloc_;  // switch.buffer.allocation cell
  // cursors_: write_limited_, read_limited_ or cell_alloc_: the cell ids are needed.
  bool write_limited_, read_limited_, cursors_;
  std::vector<CellCursor> cursor_;
  // Per cell id: how many cycles after it was seen it was written (2 B a cell, pages touched as
  // ids are: a whole run's cycle would take 8; saturates at 65,535 cycles of lag, beyond which a
  // written cell may be taken as eligible early).
  std::unique_ptr<uint16_t[]> write_lag_;
  // The cycle cell k of the packet is seen at the ingress (the first edge after its last bit).
  int64_t cell_seen_cycle(const Pkt& pk, uint32_t k) const {
    const uint64_t upto = std::min<uint64_t>(
        (static_cast<uint64_t>(k) + 1) * static_cast<uint64_t>(cell_bytes_), pk.p.size.count());
    return cycle_of(pk.first_bit + mac_[pk.in].rate(pk.first_bit).serialization(Bytes(upto)));
  }
  uint32_t datapath_budget_;   // bytes per input per matching (0: one cell)
  uint64_t packed_cells_ = 0;  // cells that crossed behind another in a matching
  EventWheel<Event> wheel_;
  DelayLine<DueAdmission> to_admit_;  // packets whose first cell is arriving, in arrival order
  // Packets handed over after a later-due one: LateAdmission (switch_core_records.h).
  std::vector<LateAdmission> ooo_admit_;
  int64_t ooo_next_ = EventWheel<Event>::kNone;  // the heap's earliest due cycle
  std::vector<DueAdmission> admit_batch_;        // this cycle's, reused
  int admit_ptr_ = 0;                            // round-robin pointer: the port to go first next
  int64_t last_admit_due_ = 0;
  DelayLine<uint32_t> to_queue_;   // cut-through packets in the ingress pipeline (fixed latency)
  DelayLine<uint32_t> to_egress_;  // cells in the crossbar + egress pipeline (fixed latency)
  DelayLine<Join> joins_;          // packets to join their egress queue, in order (egress_join)
  int64_t last_cycle_ = -1;

  std::vector<Pkt> pool_;
  std::vector<uint32_t> free_slots_;

  // Ingress queues (VOQ: n*n*tcs, input FIFO: n) with readiness: a queue is ready when its head
  // packet has a cell eligible for the crossbar.
  std::vector<List> iq_;
  std::vector<int16_t> iq_ready_out_;  // per queue: the output it requests now, or -1
  std::vector<uint16_t>
      pair_classes_;  // per (input, output): its ready queues' classes, a bit each
  // Per (input, output), several classes: the classes whose VOQ head has crossed in part.
  std::vector<uint16_t> pair_started_;
  std::vector<PortSet> requests_;  // per input: the outputs it requests
  [[gnu::always_inline]] void add_request(int in, int out) {
    requests_[in].set(out);
    if (out_requests_[out]++ == 0) requested_outputs_.set(out);
    if (in_requests_[in]++ == 0) requesting_inputs_.set(in);
  }
  [[gnu::always_inline]] void drop_request(int in, int out) {
    requests_[in].clear(out);
    if (--out_requests_[out] == 0) requested_outputs_.clear(out);
    if (--in_requests_[in] == 0) requesting_inputs_.clear(in);
  }
  // The outputs some input requests (empty: nothing for the crossbar to do), offered to the
  // scheduler as the only ones it may match: an output nobody requests cannot be matched anyway,
  // and under incast or a hot spot the schedulers then skip the idle outputs instead of searching
  // every input for them.
  std::vector<int32_t> out_requests_;  // per output: the inputs requesting it
  PortSet requested_outputs_;
  // Likewise per input: the scheduler visits only the requesting inputs
  // (VoqScheduler::set_requesting_inputs), so a matching's cost follows its requests.
  std::vector<int32_t> in_requests_;
  PortSet requesting_inputs_;
  std::vector<int> match_;
  uint64_t next_match_fs_ = 0, next_match_frac_ = 0;  // the next crossbar slot
  // Matching time (switch.scheduler): cycles from request snapshot to grant, overlapped or one at
  // a time (in_flight_: begun, its grant not yet applied).
  int64_t match_cycles_ = 0;
  bool pipelined_ = false;
  bool in_flight_ = false;
  int width_ = 1;           // cells a matched pair moves per slot (crossbar width)
  int64_t xbar_delay_ = 0;  // cycles from crossing to the egress (pipeline + pipelined matching)
  // Packet mode: per input the ingress queue whose head packet holds the pair (-1: none), and
  // the held inputs and outputs (kept out of the matchings).
  bool packet_mode_ = false;
  std::vector<int32_t> hold_q_;
  std::vector<int16_t> hold_tc_, hold_out_;
  PortSet held_in_, held_out_;
  PortSet ending_;  // held inputs whose packet's last cell crossed in this cycle
  std::vector<uint64_t> hold_next_fs_;  // per held input: its next cell crosses at or after this
  uint64_t hold_step_fs_ = 0;
  int64_t hold_wake_ = 0;  // the first cycle a held pair may move a cell (set by run_matchings)
  int held_count_ = 0;
  PortSet offered_outputs_;      // requested_outputs_ less held_out_
  std::vector<uint64_t> stash_;  // held inputs' request words while a matching runs

  PortCalendar done_;  // egress ports whose packet's last bit leaves in a cycle
  std::vector<Egress> egress_;
  // Liveness samples (sample_progress), per port: departures seen at the last sample, the sample
  // from which the port has been stalled, and the longest stall and frame stall beyond the limit.
  std::vector<Progress> progress_;
  Time progress_limit_;
  std::vector<SlotRing> egq_;  // egress class queues, [port * classes + class], one block
  // Per port, a bit per class whose egress queue holds a packet: a look at a port (most find
  // nothing to send) reads one small word instead of the port's eight list heads.
  std::vector<uint16_t> egq_busy_;
  std::vector<EgressArbiter> arbiters_;
  std::vector<uint64_t> head_bytes_;

  // Counters and statistics.
  std::vector<PortCounters> ports_;
  uint64_t win_received_ = 0, win_departed_ = 0, win_dropped_ = 0;
  uint64_t matchings_ = 0, cells_switched_ = 0;
  uint64_t late_arrivals_ = 0;
  uint64_t mid_drops_ = 0;  // drop_mid_packet
  // switch.trimming: packets cut to trim_bytes_ instead of dropped, forwarded in class trim_tc_.
  bool trim_ = false;
  uint32_t trim_bytes_ = 0;
  // INT: per packet slot, its stack and whether it has one (both empty until the first packet
  // with an INT header arrives: the pool's other packets never pay for them).
  bool int_stamp_ = true;  // switch.int_telemetry
  std::vector<IntStack> int_;
  // Per port: bytes of the packets in its egress class queues, waiting for the wire (what an
  // INT hop reports as the queue: not the packets still crossing the chip).
  std::vector<uint64_t> egq_bytes_;
  std::vector<uint8_t> has_int_;
  // Pushes this port's hop onto packet i's stack as it starts to leave.
  void stamp_int(int port, uint32_t i);
  uint8_t trim_tc_ = 0;
  uint64_t trimmed_ = 0;
  uint64_t zombies_ = 0;  // packets dropped mid-way whose slot is not free yet
  Time win_start_, win_end_ = Time::max();
  Time rx_whole_until_ = Time::max();  // a frame received from win_start_ to this is all inside
  bool avg_started_ = false;
  bool leak_next_ = false;
  std::vector<int64_t> port_cells_;  // buffer cells held per egress port
  int64_t total_cells_used_ = 0;
  stats::Occupancy buffer_avg_;             // cells, over the window
  std::vector<stats::Occupancy> port_avg_;  // cells per egress port, over the window
  int64_t run_peak_cells_ = 0;              // largest total_cells_used_ at a cycle's end, run
  std::vector<int64_t> port_run_peak_;      // largest port_cells_ at a cycle's end, run
  PortSet dirty_ports_;                     // egress ports whose cells changed this cycle
  std::vector<uint8_t> watched_;            // per port: watch_handover() (empty: none)
  PortSet watched_busy_;                    // watched ports sending a data frame
  Time oldest_watched_ = Time::max();       // the earliest first bit among those frames
  bool occ_dirty_ = false;                  // the buffer changed in the cycle being processed
  Time occ_interval_;
  Time occ_next_;                  // the instant of the next sample to take
  int64_t occ_first_ = 0;          // index of the first pending sample
  std::vector<int64_t> occ_rows_;  // pending samples, occ_row_size() values each, then room
  size_t occ_used_ = 0;            // values of occ_rows_ that are pending samples
  size_t occ_row_size() const { return static_cast<size_t>(declared_) + 1; }
};

}  // namespace fabricsim::sw

#include "models/switch/switch_core_receive.h"  // the inline arrival path
