// SwitchCore's statistics and end-of-run checks, apart from its cycle-by-cycle data path
// (switch_core.cpp): the measurement window's time averages, the occupancy time series handed to
// the OccupancyWriter, the conservation and liveness checks, and the registered counters. Nothing
// here runs per cell; flush_occupancy, which runs per busy cycle, stays with the data path.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "models/switch/switch_core.h"

namespace fabricsim::sw {

void SwitchCore::start_averages() {
  // The window opened at win_start_ with the occupancy as it was then (unchanged since).
  avg_started_ = true;
  buffer_avg_.start(win_start_, total_cells_used_);
  for (int j = 0; j < n_; ++j) port_avg_[j].start(win_start_, port_cells_[j]);
}

void SwitchCore::sample_occupancy_until(Time t) {
  // Samples strictly before t see the state before the change at t. Rows are cells, copied as
  // they stand (the writer turns the nonzero ones into bytes). The storage the owner keeps
  // releasing is reused without clearing: nothing is allocated once it has grown to the owner's
  // batch.
  const size_t rs = occ_row_size();
  while (occ_next_ < t) {
    if (occ_used_ + rs > occ_rows_.size())
      occ_rows_.resize(std::max(occ_used_ + rs, 2 * occ_rows_.size()));
    int64_t* row = occ_rows_.data() + occ_used_;
    row[0] = total_cells_used_;
    std::copy(port_cells_.begin(), port_cells_.end(), row + 1);
    std::fill(row + 1 + n_, row + rs, 0);  // the ports past n_ (the idle port's 0)
    occ_used_ += rs;
    occ_next_ += occ_interval_;
  }
}

void SwitchCore::release_occupancy(size_t count) {
  const size_t values = std::min(count, occupancy_pending()) * occ_row_size();
  std::copy(occ_rows_.begin() + static_cast<std::ptrdiff_t>(values),
            occ_rows_.begin() + static_cast<std::ptrdiff_t>(occ_used_), occ_rows_.begin());
  occ_used_ -= values;
  occ_first_ += static_cast<int64_t>(values / occ_row_size());
}

void SwitchCore::set_window(Time start, Time end) {
  win_start_ = start;
  win_end_ = end;
  // A frame (at most 65,535 B) that starts by then ends inside the window at any port's rate.
  Time longest = idle_frame_;
  for (const auto& m : mac_)
    longest = std::max(longest, m.slowest_rate().serialization(Bytes(65535)));
  rx_whole_until_ = end == Time::max() ? end : end - longest;
}

Time SwitchCore::finalize_window(Time now) {
  // The averages hold the last state inside the window (nothing after win_end_ reaches them), and
  // mean(until) extends it to the window's end; the state at `now` (after the drain) is not theirs.
  if (!avg_started_) start_averages();  // nothing changed since the window opened
  return std::max(win_start_, std::min(now, win_end_));
}

std::vector<std::string> SwitchCore::check_invariants() const {
  std::vector<std::string> v;
  // In flight is what the packet pool holds, counted independently of the port counters: a slot
  // leaked or freed twice breaks this.
  if (received() != departed() + dropped() + in_flight())
    v.push_back(fmt::format("{}: packets received {} != departed {} + dropped {} + in flight {}",
                            name_, received(), departed(), dropped(), in_flight()));
  // Every buffered cell belongs to an admitted packet still in the switch (the cells it took: all
  // of them from admission with packet allocation, those arrived so far with cell allocation).
  int64_t cells = 0, written = 0;
  std::vector<bool> is_free(pool_.size(), false);
  for (auto s : free_slots_) is_free[s] = true;
  for (size_t i = 0; i < pool_.size(); ++i)
    if (!is_free[i] && pool_[i].alloc.ok) {
      cells += held_cells(pool_[i]);
      written += pool_[i].written;
    }
  if (cells != buffer_.used_cells())
    v.push_back(fmt::format("{}: buffer holds {} cells but resident packets own {}", name_,
                            buffer_.used_cells(), cells));
  // The statistics count the cells written so far (a packet's grow as they arrive).
  if (written != total_cells_used_)
    v.push_back(fmt::format("{}: occupancy statistics count {} cells, packets wrote {}", name_,
                            total_cells_used_, written));
  // The scheduler is offered the outputs some input requests, kept incrementally. (Counted from
  // the inputs' request sets, member by member: not n^2 tests of a mostly idle 128-port chip.)
  std::vector<int32_t> requesting(static_cast<size_t>(n_), 0);
  for (int in = 0; in < n_; ++in) requests_[in].for_each([&](int out) { ++requesting[out]; });
  for (int out = 0; out < n_; ++out) {
    const int32_t requesters = requesting[out];
    if (requesters != out_requests_[out] || requested_outputs_.test(out) != (requesters > 0))
      v.push_back(fmt::format("{}: output {} has {} requesting inputs but is counted with {}{}",
                              name_, out, requesters, out_requests_[out],
                              requested_outputs_.test(out) ? " (offered)" : " (not offered)"));
  }
  for (int in = 0; in < n_; ++in) {
    const int32_t wanted = requests_[in].count();
    if (wanted != in_requests_[in] || requesting_inputs_.test(in) != (wanted > 0))
      v.push_back(fmt::format("{}: input {} requests {} outputs but is counted with {}{}", name_,
                              in, wanted, in_requests_[in],
                              requesting_inputs_.test(in) ? " (offered)" : " (not offered)"));
  }
  // Lossless flow control guarantees an admitted packet's cells their room (PFC headroom, IB
  // credits): a cell that found none is a flow-control or buffer-sizing error.
  if (fc_on_ && mid_drops_ > 0)
    v.push_back(fmt::format(
        "{}: {} packets admitted under link-level flow control found no free cell mid-way", name_,
        mid_drops_));
  std::vector<std::string> b;
  buffer_.check_invariants(b);
  for (auto& m : b) v.push_back(name_ + ": " + m);
  if (fc_on_) {
    // Flow control's ingress accounts (PFC bytes per port and priority, credit blocks per port
    // and VL) hold exactly what the resident packets occupy: a release missed or doubled breaks
    // this, and with it the pauses or the credits it would have driven.
    constexpr int kKeys = 16;
    std::vector<int64_t> held(static_cast<size_t>(n_) * kKeys, 0);
    for (size_t i = 0; i < pool_.size(); ++i) {
      const Pkt& pk = pool_[i];
      // Credit blocks are held from hand-over (receive()), PFC bytes from admission.
      // (A packet dropped mid-way released its flow-control account then.)
      if (is_free[i] || (fc_.pfc() && !pk.alloc.ok) || pk.stomped) continue;
      const int key = fc_.pfc() ? pk.p.tc : fc_.vl_of(pk.p.tc);
      held[static_cast<size_t>(pk.in) * kKeys + key] +=
          fc_.pfc() ? static_cast<int64_t>(fc_bytes(pk)) : fc_.credits_of(fc_bytes(pk));
    }
    const int keys = fc_.pfc() ? link::kPfcPriorities : kKeys;
    for (int port = 0; port < n_; ++port)
      for (int key = 0; key < keys; ++key) {
        const int64_t acct = fc_.ingress_held(port, key);
        const int64_t real = held[static_cast<size_t>(port) * kKeys + key];
        if (acct != real)
          v.push_back(
              fmt::format("{}: port {} {} {}: flow control accounts {} {} but resident "
                          "packets hold {}",
                          name_, port, fc_.pfc() ? "priority" : "VL", key, acct,
                          fc_.pfc() ? "bytes" : "blocks", real));
      }
  }
  return v;
}

void SwitchCore::sample_progress(Time now, Time limit) {
  if (progress_.empty()) {
    progress_.resize(static_cast<size_t>(n_));
    for (auto& pr : progress_) pr.since = now;
  }
  progress_limit_ = limit;
  for (int port = 0; port < n_; ++port) {
    Progress& pr = progress_[port];
    const Egress& e = egress_[port];
    const uint64_t tx = ports_[port].tx_packets + e.stomped_sent;  // frames that left
    const bool on_wire = e.current < kControl;
    // Progress, held by flow control (or sending its control frame), or no work: not stalled.
    if (tx != pr.tx_seen || e.current == kControl || (fc_on_ && !on_wire) ||
        !(on_wire || egq_busy_[port] != 0)) {
      pr.tx_seen = tx;
      pr.since = now;
    } else if (now - pr.since > limit && now - pr.since > pr.worst) {
      pr.worst = now - pr.since;
      pr.worst_from = pr.since;
    }
    if (on_wire) {
      const Pkt& pk = pool_[e.current];
      const Time own = mac_[port]
                           .rate(pk.tx_start)
                           .serialization(Bytes(overhead_.frame_bytes(pk.p.size.count())));
      const Time bound = limit + own * n_;
      const Time on = now - pk.tx_start;
      if (on > bound && on > pr.frame_worst) {
        pr.frame_worst = on;
        pr.frame_bound = bound;
        pr.frame_id = pk.p.id;
        pr.frame_bytes = pk.p.size.count();
      }
    }
  }
}

std::vector<std::string> SwitchCore::check_progress() const {
  std::vector<std::string> v;
  for (int port = 0; port < static_cast<int>(progress_.size()); ++port) {
    const Progress& pr = progress_[port];
    if (pr.worst > Time())
      v.push_back(fmt::format(
          "{}: port {} had frames to send and sent none for {:.1f} ns (from {:.1f} ns; "
          "sim.stall_limit {:.1f} ns)",
          name_, port, pr.worst.as_ns(), pr.worst_from.as_ns(), progress_limit_.as_ns()));
    if (pr.frame_worst > Time())
      v.push_back(fmt::format(
          "{}: port {}: packet {} ({} B) was on the wire for {:.1f} ns, beyond its bound "
          "{:.1f} ns (sim.stall_limit + {} ports x its wire time)",
          name_, port, pr.frame_id, pr.frame_bytes, pr.frame_worst.as_ns(), pr.frame_bound.as_ns(),
          n_));
  }
  return v;
}

uint64_t SwitchCore::sum_ports(uint64_t PortCounters::*field) const {
  uint64_t sum = 0;
  for (const auto& pc : ports_) sum += pc.*field;
  return sum;
}

void PortCounters::register_stats(stats::Registry& r, const std::string& prefix) const {
  r.counter(prefix + ".rx_packets", &rx_packets);
  r.counter(prefix + ".rx_bytes", &rx_bytes);
  r.counter(prefix + ".tx_packets", &tx_packets);
  r.counter(prefix + ".tx_bytes", &tx_bytes);
  r.counter(prefix + ".drops", &drops);
  r.counter(prefix + ".drop_bytes", &drop_bytes);
  r.counter(prefix + ".underruns", &underruns);
  r.value_fn(prefix + ".underrun_ns", [this] { return underrun_time.as_ns(); });
}

void SwitchCore::register_stats(stats::Registry& r, const std::string& prefix) {
  r.counter(prefix + ".crossbar.matchings", &matchings_);
  r.counter(prefix + ".crossbar.cells", &cells_switched_);
  r.counter(prefix + ".ingress.late_arrivals", &late_arrivals_);
  r.counter_fn(prefix + ".ingress.admission_waits", [this] { return admission_.waits(); });
  r.counter_fn(prefix + ".buffer.bank_write_conflicts",
               [this] { return banks_.write_conflicts(); });
  r.counter_fn(prefix + ".buffer.bank_read_conflicts", [this] { return banks_.read_conflicts(); });
  r.counter(prefix + ".crossbar.packed_cells", &packed_cells_);
  // (Only where it can count: packet allocation's results keep their counters as they were.)
  if (cell_alloc_) r.counter(prefix + ".buffer.mid_packet_drops", &mid_drops_);
  if (trim_) r.counter(prefix + ".trimmed_packets", &trimmed_);
  balancer_.register_stats(r, prefix);
  if (!r.per_port()) return;
  // (ports_ and ctrl_sent_ are sized once, at construction: the pointers stay valid.)
  for (int p = 0; p < declared_; ++p) {
    const std::string port = prefix + ".port" + std::to_string(p);
    const int k = port_slot(p);  // (the ports past n_ read the idle port's state)
    ports_[k].register_stats(r, port);
    if (fc_on_) r.counter(port + ".control_frames_sent", &ctrl_sent_[k]);
    if (ecn_) r.counter_fn(port + ".ecn_marked", [this, k] { return ecn_marked(k); });
    fc_.register_stats(r, k, port);
  }
}

}  // namespace fabricsim::sw
