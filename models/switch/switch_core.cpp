// The data path of the switch core, cycle by cycle: arrivals, admission, the buffer's cell writes,
// the ingress queues, the egress and its wire (the crossbar: switch_core_crossbar.cpp; the helpers
// both share: switch_core_inline.h; construction: switch_core_setup.cpp; statistics and end-of-run
// checks: switch_core_stats.cpp).
#include "models/switch/switch_core.h"
#include "models/switch/switch_core_inline.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace fabricsim::sw {

inline void SwitchCore::free_pkt(uint32_t i) {
  // No reset here: receive() initialises every field a packet's life depends on.
  free_slots_.push_back(i);
  if (!has_int_.empty()) has_int_[i] = 0;
}

int64_t SwitchCore::receive_int(int port, const Packet& p, const IntStack& tel, Time first_bit,
                                Time now) {
  // The slot receive() will take (alloc_pkt): the stack waits there.
  const size_t i = free_slots_.empty() ? pool_.size() : free_slots_.back();
  if (has_int_.size() <= i) {
    const size_t n = std::max(i + 1, pool_.capacity());
    int_.resize(n);
    has_int_.resize(n, 0);
  }
  int_[i] = tel;
  has_int_[i] = 1;
  return receive(port, p, first_bit, now);
}

void SwitchCore::stamp_int(int port, uint32_t i) {
  // The port's queue as the packet leaves it: the packets behind it in its egress queues (as a
  // chip's traffic manager counts its egress queue; not those still crossing the chip).
  const Pkt& pk = pool_[i];
  int_[i].push(pk.tx_start, ports_[port].tx_bytes, egq_bytes_[port], mac_[port].rate(pk.tx_start));
}

int SwitchCore::ingress_queue(int in, int out, int tc) const {
  return arch_ == Architecture::kVoq ? (in * n_ + out) * tcs_ + tc : in;
}

int64_t SwitchCore::compute_ready_cycle(const Pkt& pk, uint32_t k) const {
  return cycle_of(pk.first_bit +
                  mac_[pk.in].rate(pk.first_bit).serialization(Bytes(ready_bytes(pk, k)))) +
         cfg_.ingress_cycles + pk.admit_lag;
}

int64_t SwitchCore::next_work_cycle() const {
  // Nothing can be due before the next cycle: the cheap sources first (the pipelines' heads, the
  // crossbar), and the calendars' bitmap scans only when none of those is due then.
  const int64_t soonest = last_cycle_ + 1;
  if (admission_.waiting()) return soonest;
  int64_t next = std::min({to_admit_.next_cycle(), ooo_next_, to_queue_.next_cycle(),
                           to_egress_.next_cycle(), joins_.next_cycle()});
  if (crossbar_busy()) {
    // The cycle in which the crossbar has its next slot, or a matching may begin or be polled,
    // or a held pair (packet mode) may move its next cell.
    int64_t xc = EventWheel<Event>::kNone;
    if (match_cycles_ == 0 || pipelined_) {
      if (!requested_outputs_.empty()) xc = slot_cycle();
    } else if (in_flight_) {
      xc = scheduler_->clocking() ? soonest  // a clocked block: an edge per cycle until done
                                  : std::max(slot_cycle(), scheduler_->grant_cycle(soonest));
    } else if (!requested_outputs_.empty()) {
      xc = soonest;  // a new matching begins at once
    }
    if (held_count_) xc = std::min(xc, hold_wake_);
    next = std::min(next, std::max(xc, soonest));
  }
  if (next <= soonest) return next;
  return std::min({next, wheel_.next_cycle(), done_.next_cycle(soonest)});
}

void SwitchCore::prefetch_window() const {
  for (int p = 0; p < n_; ++p) {
    prefetch_pkt(egress_[p].current);                 // (kNil, kControl: no record, nothing asked)
    if (const int tc = highest_class(p, 0); tc >= 0)  // (pick_class may take another)
      prefetch_pkt(egq_[static_cast<size_t>(p) * tcs_ + tc].front());
  }
  for (size_t k = 0; k < kWindowAdmissions; ++k)
    if (const DueAdmission* n = to_admit_.peek(k)) prefetch_pkt(n->pkt);
}

void SwitchCore::run_cycle(int64_t c, DepartureSink& sink) {
  last_cycle_ = c;
  sink_ = &sink;
  wheel_.advance(c);
  // Handlers may add events for this same cycle; pop() hands them out too.
  // Packets out of the ingress pipeline and cells out of the crossbar/egress pipeline first, then
  // this cycle's events.
  if (admission_.waiting()) admit_waiting(c);
  if (to_admit_.due(c) || ooo_next_ <= c) admit_due(c);
  // (Each loop asks for the next item's packet record before it handles the current one: in a
  // busy buffer the records are cold, and the misses then overlap the work.)
  while (to_queue_.due(c)) {
    if (const uint32_t* n = to_queue_.second()) prefetch_pkt(*n);
    queue_ready(to_queue_.pop(), c);
  }
  while (to_egress_.due(c)) {
    if (const uint32_t* n = to_egress_.second()) prefetch_pkt(*n);
    egress_cell(to_egress_.pop(), c);
  }
  while (run_event(c, sink)) {
  }
  if (crossbar_busy()) run_matchings(c);
  // Packets leaving the egress wires (a finishing port may start, and even finish, another),
  // and what that sets off in this same cycle (flow-control retries, short control frames).
  for (bool busy = true; busy;) {
    busy = false;
    for (int port = done_.take(c); port >= 0; port = done_.take(c)) {
      finish_tx(port, c, sink);
      busy = true;
    }
    while (run_event(c, sink)) busy = true;
  }
  if (occ_dirty_) flush_occupancy(time_of(c));
}

void SwitchCore::admit_due(int64_t c) {
  // Packets whose first cell is seen in the same cycle are admitted one after the other, and the
  // first take the last free cells. The ingress ports take turns to go first, as in a round-robin
  // arbiter: ports at or after the pointer go first (in arrival order), then the others, and the
  // pointer moves one past the port that went first. With a fixed order the lowest port would win
  // every full-buffer contest (all of them, on the slotted grid).
  // The records of the admissions after this one, and the route of the next, asked for ahead:
  // each was written as its packet arrived, windows ago, so they are cold.
  if (const DueAdmission* n = to_admit_.peek(2)) prefetch_pkt(n->pkt);
  if (const DueAdmission* n = to_admit_.peek(1)) table_.prefetch(pool_[n->pkt].p.dst);
  if (ooo_next_ > c) {
    const DueAdmission one = to_admit_.pop();
    if (!to_admit_.due(c)) {
      if (admission_.take(one.in, c))
        admit(one.pkt, c);
      else
        admission_.wait(one.in, one.pkt, c);
      return;
    }
    admit_batch_.clear();
    admit_batch_.push_back(one);
  } else {
    admit_batch_.clear();
    while (ooo_next_ <= c) {
      std::pop_heap(ooo_admit_.begin(), ooo_admit_.end(), std::greater<>());
      admit_batch_.push_back(ooo_admit_.back().a);
      ooo_admit_.pop_back();
      ooo_next_ = ooo_admit_.empty() ? EventWheel<Event>::kNone : ooo_admit_.front().due;
    }
  }
  while (to_admit_.due(c)) admit_batch_.push_back(to_admit_.pop());
  if (admit_batch_.size() == 1) {
    const DueAdmission one = admit_batch_[0];
    if (admission_.take(one.in, c))
      admit(one.pkt, c);
    else
      admission_.wait(one.in, one.pkt, c);
    return;
  }
  // Arrival order is the order of the first bits (then of the ports), not of the hand-overs:
  // with run-ahead (models/common/device_scheduler.h) a switch upstream may hand a packet over
  // before or after a host's that arrives in the same cycle, and the admissions must not care.
  std::sort(admit_batch_.begin(), admit_batch_.end(),
            [this](const DueAdmission& a, const DueAdmission& b) {
              const Time ta = pool_[a.pkt].first_bit, tb = pool_[b.pkt].first_bit;
              return ta != tb ? ta < tb : a.in < b.in;
            });
  const int ptr = admit_ptr_;
  int first = -1;
  for (const bool at_or_after : {true, false})
    for (const DueAdmission& a : admit_batch_)
      if ((a.in >= ptr) == at_or_after) {
        if (first < 0) first = a.in;
        if (admission_.take(a.in, c))
          admit(a.pkt, c);
        else
          admission_.wait(a.in, a.pkt, c);
      }
  admit_ptr_ = first + 1 == n_ ? 0 : first + 1;
}

void SwitchCore::admit_waiting(int64_t c) {
  // Before this cycle's arrivals, oldest first: a packet that waited goes before those behind it,
  // and its processing, so its cells' eligibility, is as many cycles later as it waited.
  admission_.admit_waiting(c, [&](uint32_t i, int64_t waited) {
    Pkt& pk = pool_[i];
    pk.admit_lag = static_cast<uint16_t>(std::min<int64_t>(waited, UINT16_MAX));
    pk.ready_at += pk.admit_lag;  // the first cell's eligibility, computed at its arrival
    admit(i, c);
  });
}

void SwitchCore::handle(const Event& e, int64_t c, DepartureSink& sink) {
  switch (e.kind) {
    case Ev::kCellWrite:
      write_cells(e.pkt, c);
      break;
    case Ev::kQueueReady:
      queue_ready(e.pkt, c);
      break;
    case Ev::kCellReady:
      cell_ready(e.pkt, c);
      break;
    case Ev::kEgressCell:
      egress_cell(e.pkt, c);
      break;
    case Ev::kEgressDone:
      finish_tx(static_cast<int>(e.pkt), c, sink);
      break;
    case Ev::kEgressRetry: {
      Egress& eg = egress_[e.pkt];
      // Every kEgressRetry comes from schedule_retry, which recorded its cycle.
      const auto it = std::find(eg.looks.begin(), eg.looks.end(), c);
      if (it == eg.looks.end())
        throw std::logic_error(
            fmt::format("{}: port {} looked at in cycle {} unrecorded", name_, e.pkt, c));
      *it = eg.looks.back();
      eg.looks.pop_back();
      try_start(static_cast<int>(e.pkt), c);
      break;
    }
    case Ev::kEgressJoin:
      egress_enqueue(e.pkt, c);
      break;
    case Ev::kControlArrival: {
      const PendingControl pc = ctrl_pool_[e.pkt];
      ctrl_free_.push_back(e.pkt);
      fc_.on_control(pc.port, pc.f, std::max(pc.arrival, time_of(c)));
      // A control frame may unblock the port at once (credits, a resume with no response
      // delay): look now. That look arranges the next one for a change still to come (a pause
      // that takes effect or ends later), as every look does.
      schedule_retry(pc.port, c);
      break;
    }
  }
}

inline void SwitchCore::admit(uint32_t i, int64_t c) {
  Pkt& pk = pool_[i];
  // A group of one (host-facing) is resolved here as before; only a group of several ports goes
  // to the load balancer, which reads the buffer held per egress port as this cycle left it.
  const ForwardingTable::Group g = table_.group(pk.p.dst);
  int out = g.count <= 1 ? (g.count == 0 ? ForwardingTable::kNoRoute : g.ports[0])
                         : balancer_.pick(pk.p, g, time_of(c), port_cells_.data());
  // A dragonfly's valiant / ugal: the source router may send the packet through another group
  // (and writes it into the packet), the routers on the way follow it.
  if (non_minimal_ && out != ForwardingTable::kNoRoute)
    out = balancer_.route(pk.p, out, port_cells_.data());
  bool ok = out != ForwardingTable::kNoRoute && pk.p.tc < tcs_;
  // ECN on enqueue sees the queue as the packet finds it.
  const int64_t depth_before = ok && ecn_on_ && pk.p.ecn == kEcnEct0
                                   ? buffer_.queue_cells(out * tcs_ + pk.p.tc) * cell_bytes_
                                   : -1;
  if (fc_.credit()) {
    // The credit receiver took the packet's blocks when it arrived (receive()); a credited
    // packet always finds its cells (validated), so only a bad route or class drops it here.
    if (ok) {
      pk.out = static_cast<int16_t>(out);
      ok = take_first(pk, false);
    }
    if (!ok) fc_.release(pk.in, pk.p.tc, fc_bytes(pk), time_of(c));
  } else if (ok && fc_on_) {
    // PFC decides (pools and headroom per ingress port and priority), the buffer stores.
    pk.out = static_cast<int16_t>(out);
    const uint32_t bytes = fc_bytes(pk);
    ok = fc_.admit(pk.in, pk.p.tc, bytes, time_of(c));
    if (ok) {
      ok = take_first(pk, false);
      if (!ok) fc_.release(pk.in, pk.p.tc, bytes, time_of(c));
    }
    look_for_control(pk.in, c);  // a PAUSE may be due
  } else if (ok) {
    pk.out = static_cast<int16_t>(out);
    ok = take_first(pk, true);
    if (!ok && trim_) ok = trim(pk);
  }
  if (!ok) {
    count_drop(pk, c);
    free_pkt(i);
    return;
  }
  if (depth_before >= 0 && ecn_enqueue_ && !(pk.p.ecn & kTrimmed)) ecn_mark(pk, depth_before);
  if (packet_model_) {
    // Whole at once (packet_core.h): in its egress queue when a lone packet could start.
    pk.written = pk.cells_sent = pk.cells_at_egress = pk.cells;
    cells_switched_ += pk.cells;  // (stored and read once each: the energy report's accesses)
    buffer_changed(time_of(c), pk.out, pk.cells);
    pk.eg_ready = timing_.ready(pk.first_bit, pk.p.size.count(), mac_[pk.in].rate(pk.first_bit),
                                eg_fast_rate_[pk.out], pk.admit_lag);
    egress_join(i, c);
    return;
  }
  // The cells seen so far go into the buffer now, the others as they come. A first cell whose
  // write waits for its bank makes the packet eligible later (ready_at), but the packet still
  // goes through its ingress pipeline and into its queue in admission order (`nominal`).
  const int64_t nominal = pk.ready_at;
  if (cursors_) cursor_[i] = CellCursor{pk.alloc.first_cell, pk.alloc.first_cell, -1, -1};
  if (pk.cells == 1 && !write_limited_) {
    pk.written = 1;
    buffer_changed(time_of(c), pk.out, 1);
  } else {
    write_cells(i, c);
  }
  // Into the ingress queue now, or after the ingress pipeline: a fixed delay after admission in
  // cut-through (a FIFO), a packet-dependent one in store-and-forward (the event wheel).
  if (nominal <= c)
    queue_ready(i, c);
  else if (cut_through_)
    to_queue_.push(nominal, i);
  else
    wheel_.schedule(nominal, Event{Ev::kQueueReady, i});
}

inline bool SwitchCore::take_first(Pkt& pk, bool policy) {
  const int q = admission_queue(pk);
  if (!cell_alloc_) {
    pk.alloc = policy ? buffer_.admit(pk.in, q, pk.cells) : buffer_.allocate(q, pk.cells);
    return pk.alloc.ok;
  }
  // The start-of-packet check, on the first cell against the cells held now.
  uint32_t tail = SharedBuffer::kNoCell;
  if (!buffer_.take_cell(pk.in, q, pk.alloc, tail, policy)) return false;
  pk.taken = 1;
  return true;
}

bool SwitchCore::trim(Pkt& pk) {
  // Cut to its headers, in the trimming class, marked (a DSCP remark: no longer ECT), then
  // admitted as any packet of that class; a packet trimmed already, or no larger than the cut,
  // is dropped. The rest of its frame still arrives on the ingress and is discarded: only the
  // cells of the cut are stored and forwarded.
  if ((pk.p.ecn & kTrimmed) || pk.p.size.count() <= trim_bytes_) return false;
  const Packet whole = pk.p;
  const uint16_t cells = pk.cells;
  pk.p.size = Bytes(trim_bytes_);
  pk.p.tc = trim_tc_;
  pk.p.ecn = kTrimmed;
  pk.cells = static_cast<uint16_t>((trim_bytes_ + cell_bytes_ - 1) / cell_bytes_);
  if (!take_first(pk, true)) {  // no room even for the headers: dropped as it came
    pk.p = whole;
    pk.cells = cells;
    return false;
  }
  ++trimmed_;
  return true;
}

void SwitchCore::count_drop(const Pkt& pk, int64_t c) {
  PortCounters& pc = ports_[pk.in];
  ++pc.drops;
  pc.drop_bytes += pk.p.size.count();
  spans_.add(stats::SpanKind::kDrop, pk.in, pk.p.tc, time_of(c), time_of(c));
  if (pk.measured) {
    ++win_dropped_;
    ++pc.win_drops;
  }
}

void SwitchCore::drop_mid_packet(uint32_t i, int64_t c) {
  Pkt& pk = pool_[i];
  // Counted here, once, whatever becomes of the cells it holds.
  ++mid_drops_;
  count_drop(pk, c);
  if (fc_on_) {
    // (Lossless flow control should never get here: check_invariants reports it.)
    fc_.release(pk.in, pk.p.tc, fc_bytes(pk), time_of(c));
    look_for_control(pk.in, c);
  }
  pk.stomped = true;
  ++zombies_;
  if (!pk.queued) {
    // Nothing of it has left the ingress: its cells go back now, its slot when its queueing
    // comes (queue_ready), and no cell of it is ever eligible.
    buffer_.release(pk.in, admission_queue(pk), pk.alloc, pk.taken, last_cell(i));
    buffer_changed(time_of(c), pk.out, -static_cast<int64_t>(pk.written));
    pk.taken = pk.written = 0;
    pk.alloc.ok = false;
    return;
  }
  // In its queue: cells may have crossed and its frame may be on the wire, which cannot be
  // recalled. The frame ends after the cells it has, with a stomped FCS (the next receiver
  // discards it): from here on it is a frame of those cells, and finish_tx neither delivers nor
  // counts it.
  pk.cells = pk.written;
  pk.p.size = Bytes(static_cast<uint64_t>(pk.cells) * static_cast<uint64_t>(cell_bytes_));
  if (pk.cells_sent < pk.cells) return;  // its last cells cross as any would
  // Its last cell has crossed already: it leaves its ingress queue now (it is the head: it has
  // crossed in part), as cross() does for a packet's last cell.
  if (!no_crossbar_) {
    const int in = pk.in, tc = pk.p.tc;
    const int q = ingress_queue(in, pk.out, tc);
    List& l = iq_[q];
    if (l.head != i)
      throw std::logic_error(
          fmt::format("{}: packet {} crossed in part but is not its queue's head", name_, pk.p.id));
    l.head = pk.in_next;
    if (l.head == kNil) l.tail = kNil;
    if (!one_class_voq_ && arch_ == Architecture::kVoq)
      pair_started_[in * n_ + pk.out] &= static_cast<uint16_t>(~(1u << tc));
    if (packet_mode_ && held_in_.test(in) && hold_q_[in] == q) ending_.set(in);
    update_ready(q, in, tc, c);
  }
  // The egress: what the last cell's arrival or crossing would have set off, if they are past.
  if (pk.cells_at_egress == 0) return;
  if (egress_in_time_) {
    egress_join(i, c);
  } else if (egress_whole_) {
    if (pk.cells_at_egress == pk.cells) {
      pk.eg_ready = time_of(c);
      egress_enqueue(i, c);
    }
  } else if (egress_[pk.out].current == i && pk.cells_at_egress == pk.cells) {
    // On the wire, waiting for a cell that will not come: it ends after the bytes it has, now at
    // the earliest.
    pk.tx_end = std::max(
        time_of(c),
        pk.tx_base_time +
            mac_[pk.out]
                .rate(pk.tx_start)
                .serialization(Bytes(overhead_.frame_bytes(pk.p.size.count()) - pk.tx_base_bytes)));
    schedule_done(pk.out, pk.tx_end, c);
  }
}

inline void SwitchCore::queue_ready(uint32_t i, int64_t c) {
  Pkt& pk = pool_[i];
  if (cell_alloc_) {
    if (!pk.alloc.ok) {  // dropped mid-way on its way here (drop_mid_packet)
      --zombies_;
      free_pkt(i);
      return;
    }
    pk.queued = true;
  }
  if (no_crossbar_) {
    cell_ready(i, c);
    return;
  }
  const int q = ingress_queue(pk.in, pk.out, pk.p.tc);
  List& l = iq_[q];
  pk.in_next = kNil;
  if (l.empty()) {
    l.head = l.tail = i;
    update_ready(q, pk.in, pk.p.tc, c);
  } else {
    pool_[l.tail].in_next = i;
    l.tail = i;
  }
}

void SwitchCore::write_cells(uint32_t i, int64_t c) {
  // (Two instances, so that packet allocation's loop carries nothing of cell allocation's.)
  if (cell_alloc_)
    write_cells_as<true>(i, c);
  else
    write_cells_as<false>(i, c);
}

template <bool kCellAlloc>
void SwitchCore::write_cells_as(uint32_t i, int64_t c) {
  Pkt& pk = pool_[i];
  uint32_t n = 0;
  // Every call comes when the next cell is due (admission: cell 0; an event: the cycle its cell
  // arrives in, or its booked write): only the cells after it need their arrival looked up.
  // The cycle the next cell was seen in, when known without a lookup (an event at its arrival).
  int64_t seen = write_limited_ && pk.written > 0 && cursor_[i].booked < 0 ? c : -1;
  bool no_room = false;
  for (bool due = true; pk.written < pk.cells; due = false) {
    CellCursor* cur = write_limited_ ? &cursor_[i] : nullptr;
    if (!due && (!cur || cur->booked < 0)) {
      const int64_t at = cell_seen_cycle(pk, pk.written);
      seen = at;
      if (at > c) {
        wheel_.schedule(at, Event{Ev::kCellWrite, i});
        break;
      }
    }
    if (kCellAlloc && pk.taken == pk.written) {
      // Cell allocation: the cell takes its id now (the first took its id at admission).
      CellCursor& cc = cursor_[i];
      if (!buffer_.take_cell(pk.in, admission_queue(pk), pk.alloc, cc.write_cell, false)) {
        no_room = true;
        break;
      }
      ++pk.taken;
      if (cc.read_cell == SharedBuffer::kNoCell) cc.read_cell = cc.write_cell;
    }
    if (cur) {
      if (cur->booked < 0) cur->booked = banks_.book_write(cur->write_cell, c);
      if (cur->booked > c) {
        // Its bank has writes booked before it: the cell (and those behind it) waits. The first
        // cell's write is booked at admission, so its eligibility is known now.
        if (pk.written == 0) pk.ready_at = std::max(pk.ready_at, cur->booked + cfg_.ingress_cycles);
        wheel_.schedule(cur->booked, Event{Ev::kCellWrite, i});
        break;
      }
      cur->booked = -1;
      if (seen < 0) seen = cell_seen_cycle(pk, pk.written);
      write_lag_[cur->write_cell] =
          static_cast<uint16_t>(std::min<int64_t>(std::max<int64_t>(c - seen, 0), UINT16_MAX));
      seen = -1;
      // (Cell allocation: the next cell's id is not taken yet.)
      if (!kCellAlloc) cur->write_cell = buffer_.next_cell(cur->write_cell);
    }
    ++pk.written;
    ++n;
  }
  if (n > 0) {
    buffer_changed(time_of(c), pk.out, n);
    if (pk.ready_at == kWaitWrite && pk.cells_sent < pk.written) {
      // It waited for this write: eligible ingress_cycles after it, and looked at then (it is in
      // its queue, with no look pending while it waited).
      // (Cell allocation without bank limits: written as seen, so at its own eligibility.)
      const int64_t own = compute_ready_cycle(pk, pk.cells_sent);
      pk.ready_at = kCellAlloc && !write_limited_ ? own : written_ready(i, own);
      wheel_.schedule(std::max(pk.ready_at, c), Event{Ev::kCellReady, i});
    }
  }
  if (kCellAlloc && no_room) drop_mid_packet(i, c);
}

int64_t SwitchCore::written_ready(uint32_t i, int64_t base) const {
  const Pkt& pk = pool_[i];
  if (pk.written <= pk.cells_sent) return kWaitWrite;
  // Eligible ingress_cycles after its write: seen + the lag its write had. In cut-through `base`
  // is the cell's own eligibility, seen + ingress_cycles + admit_lag, so seen needs no lookup.
  const int64_t seen =
      cut_through_ ? base - cfg_.ingress_cycles - pk.admit_lag : cell_seen_cycle(pk, pk.cells_sent);
  return std::max(base, seen + write_lag_[cursor_[i].read_cell] + cfg_.ingress_cycles);
}

void SwitchCore::cell_ready(uint32_t i, int64_t c) {
  Pkt& pk = pool_[i];
  if (no_crossbar_) {
    // Output queueing: every eligible cell goes straight to its egress (shared_memory: when its
    // bank reads it, in the order the bank's reads were asked for).
    while (pk.cells_sent < pk.cells && pk.ready_at <= c) {
      if (read_limited_) {
        CellCursor& cur = cursor_[i];
        if (cur.read_booked < 0) cur.read_booked = banks_.book_read(cur.read_cell, c);
        if (cur.read_booked > c) {
          wheel_.schedule(cur.read_booked, Event{Ev::kCellReady, i});
          return;
        }
        cur.read_booked = -1;
      }
      send_cell(i, c);
    }
    if (pk.cells_sent < pk.cells && pk.ready_at != kWaitWrite)
      wheel_.schedule(pk.ready_at, Event{Ev::kCellReady, i});
    return;
  }
  const int q = ingress_queue(pk.in, pk.out, pk.p.tc);
  if (iq_[q].head == i) update_ready(q, pk.in, pk.p.tc, c);
}

void SwitchCore::egress_join(uint32_t i, int64_t c) {
  // Arbitration sees the packet from the cycle it may go: a higher class that can start sooner
  // is not held behind it.
  const Pkt& pk = pool_[i];
  const int64_t ready = cycle_at(pk.eg_ready);
  if (ready <= c) {
    egress_enqueue(i, c);
    return;
  }
  // Joins come due nearly in the order they are made (a fixed pipeline after admission): those
  // in order wait in a FIFO, in sequential memory, rather than in the wheel's per-cycle lists
  // (a cache miss per join in a busy fabric: each cycle's list is a line last touched a wheel
  // turn ago). Only those the wheel would have held itself (not its far heap), so that the
  // order numbers are the ones the wheel would have given.
  if (wheel_.near(ready) &&
      (joins_.next_cycle() == DelayLine<Join>::kNone || ready >= joins_.tail_due()))
    joins_.push(ready, Join{i, static_cast<uint16_t>(pk.out), pk.p.tc,
                            static_cast<uint32_t>(pk.p.size.count()), wheel_.take_order()});
  else
    wheel_.schedule(ready, Event{Ev::kEgressJoin, i});
}

void SwitchCore::watch_handover(int port) {
  if (watched_.empty()) {
    watched_.assign(static_cast<size_t>(n_), 0);
    watched_busy_ = PortSet(n_);
  }
  watched_[port] = 1;
}

int SwitchCore::pick_class(int port, int64_t c) {
  // Most looks at a PFC port (a pause may be due) find nothing waiting: no class, and nothing to
  // ask (an empty pick moves no DWRR state; the pause state is a function of time, cached).
  // Credits choose through their own VL arbiter: always asked.
  const uint32_t busy = egq_busy_[port];
  if (!busy && !fc_.credit()) return -1;
  auto heads = [&] {
    const SlotRing* const queues = &egq_[static_cast<size_t>(port) * tcs_];
    for (int t = 0; t < tcs_; ++t)
      head_bytes_[t] = (busy >> t) & 1 ? pool_[queues[t].front()].p.size.count() : 0;
    return head_bytes_.data();
  };
  return link::mac_select_class(fc_on_ ? &fc_ : nullptr, port, time_of(c), tcs_, heads,
                                [&](uint32_t paused) {
                                  if (strict_priority_) return highest_class(port, paused);
                                  uint64_t* const h = heads();
                                  for (int t = 0; t < tcs_; ++t)
                                    if ((paused >> t) & 1) h[t] = 0;
                                  return arbiters_[port].pick(h);
                                });
}

bool SwitchCore::start_control(int port, int64_t c) {
  if (fc_.control_quiet(port)) return false;  // (nothing to send, no timer to set)
  ControlFrame f;
  if (!fc_.take_control(port, time_of(c), f)) {
    schedule_control_timer(port);
    return false;
  }
  Egress& e = egress_[port];
  const Time first = mac_[port].first_bit(time_of(c));
  const Time last = mac_[port].last_bit(first, f.bytes);
  e.current = kControl;
  e.ctrl_end = last;
  ++ctrl_sent_[port];
  sink_->on_control(port, f, first, last);
  schedule_done(port, last, c);
  schedule_control_timer(port);
  return true;
}

void SwitchCore::ecn_mark(Pkt& pk, int64_t depth_bytes) {
  const bool m = ecn_->mark(admission_queue(pk), depth_bytes, ecn_rng_);
  if (m) pk.p.ecn = kEcnCe;
  EcnBin& b = ecn_bins_[std::min<size_t>(static_cast<size_t>(depth_bytes / ecn_bin_bytes_),
                                         ecn_bins_.size() - 1)];
  ++b.packets;
  b.marked += m;
}

void SwitchCore::look_for_control(int port, int64_t c) {
  // Only an idle port starts a control frame now (a busy one looks at its frame's end), and only
  // if flow control has something to announce: with no priority group in XOFF and no transition
  // unsent, a look could do nothing (credits: always looked at).
  if (egress_[port].current == kNil && !fc_.control_quiet(port)) schedule_retry(port, c);
}

void SwitchCore::schedule_retry(int port, int64_t cycle) {
  Egress& e = egress_[port];
  for (const int64_t l : e.looks)
    if (l <= cycle) return;  // a look already due at or before then re-arms the rest
  e.looks.push_back(cycle);
  wheel_.schedule(cycle, Event{Ev::kEgressRetry, static_cast<uint32_t>(port)});
}

void SwitchCore::schedule_control_timer(int port) {
  const Time t = fc_.next_control(port);
  if (t == Time::max()) return;
  schedule_retry(port, std::max(cycle_of(t), last_cycle_ + 1));
}

int64_t SwitchCore::receive_control(int port, const ControlFrame& f, Time arrival,
                                    int64_t earliest_cycle) {
  // The receiver's resync (IB: ABR := FCTBS) follows wire order with the data, as receive() does;
  // the rest (pause state, the sender's new credit limit) in the cycle of its arrival.
  fc_.on_control_in_wire_order(port, f);
  uint32_t k;
  if (!ctrl_free_.empty()) {
    k = ctrl_free_.back();
    ctrl_free_.pop_back();
    ctrl_pool_[k] = {port, f, arrival};
  } else {
    k = static_cast<uint32_t>(ctrl_pool_.size());
    ctrl_pool_.push_back({port, f, arrival});
  }
  const int64_t cyc = std::max({cycle_of(arrival), earliest_cycle, last_cycle_ + 1});
  wheel_.schedule(cyc, Event{Ev::kControlArrival, k});
  return cyc;
}

inline void SwitchCore::finish_tx(int port, int64_t c, DepartureSink& sink) {
  Egress& e = egress_[port];
  if (e.current == kControl) {
    mac_[port].end_frame(e.ctrl_end);
    e.current = kNil;
    try_start(port, c);
    return;
  }
  const uint32_t i = e.current;
  Pkt& pk = pool_[i];
  // A stomped frame (dropped mid-way, counted then) is discarded by the next receiver.
  if (!pk.stomped) {
    if (!has_int_.empty() && has_int_[i])
      sink.on_departure_int(port, pk.p, int_[i], pk.tx_start, pk.tx_end);
    else
      sink.on_departure(port, pk.p, pk.tx_start, pk.tx_end);
  }
  if (!watched_.empty() && watched_[port]) {
    watched_busy_.clear(port);
    if (pk.tx_start == oldest_watched_) {  // the oldest left: the next oldest
      oldest_watched_ = Time::max();
      watched_busy_.for_each([&](int q) {
        oldest_watched_ = std::min(oldest_watched_, pool_[egress_[q].current].tx_start);
      });
    }
  }
  if (!pk.stomped) {
    PortCounters& pc = ports_[port];
    ++pc.tx_packets;
    pc.tx_bytes += pk.p.size.count();
    pc.win_tx_bytes.add(pk.p.size.count(), pk.tx_start, pk.tx_end, win_start_, win_end_);
    if (pk.measured) ++win_departed_;
  } else {
    --zombies_;
    ++egress_[port].stomped_sent;
  }
  if (leak_next_)
    leak_next_ = false;
  else {
    buffer_.release(pk.in, admission_queue(pk), pk.alloc, held_cells(pk), last_cell(i));
    buffer_changed(time_of(c), port, -static_cast<int64_t>(pk.written));
    if (fc_on_ && !pk.stomped) {
      // Freed space may end a pause (XON) or return credits: the ingress port's egress says so.
      fc_.release(pk.in, pk.p.tc, fc_bytes(pk), time_of(c));
      if (pk.in != port) look_for_control(pk.in, c);
      if (fc_.pfc() && fc_.pfc_buffer()->xoff_count() > 0 && c >= next_xon_scan_) {
        // Freed space raises the dynamic threshold for every priority group: those in XOFF on
        // other ports may go XON. Looked at every kXonScanCycles, as a switch's threshold logic
        // would, rather than on every departure.
        next_xon_scan_ = c + kXonScanCycles;
        for (int q = 0; q < n_; ++q) {
          if (egress_[q].current != kNil) continue;  // it polls at its next frame boundary
          for (int prio = 0; prio < link::kPfcPriorities; ++prio)
            if (fc_.pfc_buffer()->xoff(q, prio)) {
              schedule_retry(q, c);
              break;
            }
        }
      }
    }
  }
  // The next first bit: after the gap and a preamble.
  mac_[port].end_frame(pk.tx_end);
  e.current = kNil;
  free_pkt(i);
  try_start(port, c);
}

inline void SwitchCore::buffer_changed(Time t, int port, int64_t delta_cells) {
  if (!occ_dirty_) {
    // First change in this cycle: samples before it, and the window's averages if it opened
    // since, see the state the previous cycles left.
    if (occ_interval_ > Time() && occ_next_ < t) sample_occupancy_until(t);
    if (!avg_started_ && t >= win_start_) start_averages();
    occ_dirty_ = true;
  }
  total_cells_used_ += delta_cells;
  port_cells_[port] += delta_cells;
  dirty_ports_.set(port);
}

void SwitchCore::flush_occupancy(Time t) {
  // Occupancy statistics see the buffer as it stands at the end of each cycle; the whole run's
  // peaks are taken at the same instants (a cycle's end) as the window's.
  occ_dirty_ = false;
  const bool window = avg_started_ && t < win_end_;
  if (window) buffer_avg_.update(t, total_cells_used_);
  run_peak_cells_ = std::max(run_peak_cells_, total_cells_used_);
  dirty_ports_.take_each([&](int port) {
    if (window) port_avg_[port].update(t, port_cells_[port]);
    port_run_peak_[port] = std::max(port_run_peak_[port], port_cells_[port]);
  });
}

}  // namespace fabricsim::sw
