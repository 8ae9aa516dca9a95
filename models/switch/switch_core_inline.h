// SwitchCore's per-cell helpers that both halves of its data path call on every cell
// (switch_core.cpp and switch_core_crossbar.cpp): defined inline here, in the one header the two
// include, so that each half inlines them as before. Private to the switch core's sources.
#pragma once

#include <algorithm>

#include "models/switch/switch_core.h"

namespace fabricsim::sw {

inline void SwitchCore::update_ready(int q, int in, int tc, int64_t c) {
  const uint32_t h = iq_[q].head;
  if (h == kNil) {
    set_queue_ready(q, in, tc, -1);
    return;
  }
  const Pkt& pk = pool_[h];
  const int64_t rc = pk.ready_at;
  if (rc <= c) {
    set_queue_ready(q, in, tc, pk.out);
  } else {
    set_queue_ready(q, in, tc, -1);
    if (rc != kWaitWrite) wheel_.schedule(rc, Event{Ev::kCellReady, h});  // else its write wakes it
  }
}

inline void SwitchCore::set_queue_ready(int q, int in, int tc, int out) {
  if (one_class_voq_) {
    // One class: queue q is the pair (in, q - in * n), and its request bit is its readiness.
    const int qo = q - in * n_;
    if (requests_[in].test(qo) == (out >= 0)) return;
    if (out >= 0)
      add_request(in, qo);
    else
      drop_request(in, qo);
    return;
  }
  const int old = iq_ready_out_[q];
  if (old == out) return;
  iq_ready_out_[q] = static_cast<int16_t>(out);
  // The queue's bit in the pair's set of ready classes (an input FIFO has one queue: bit 0).
  const auto bit = static_cast<uint16_t>(arch_ == Architecture::kVoq ? 1u << tc : 1u);
  if (old >= 0 && !(pair_classes_[in * n_ + old] &= static_cast<uint16_t>(~bit)))
    drop_request(in, old);
  if (out >= 0) {
    uint16_t& m = pair_classes_[in * n_ + out];
    if (!m) add_request(in, out);
    m |= bit;
  }
}

inline void SwitchCore::send_cell(uint32_t i, int64_t c) {
  Pkt& pk = pool_[i];
  // The next cell's crossbar cycle (a store-and-forward packet's cells are all in with the first).
  if (++pk.cells_sent < pk.cells && cut_through_)
    pk.ready_at = compute_ready_cycle(pk, pk.cells_sent);
  if (cursors_) {
    // The cell leaves the buffer's banks; the next one must be written before it may go.
    CellCursor& cur = cursor_[i];
    cur.read_cell = buffer_.next_cell(cur.read_cell);
    if (write_limited_ && pk.cells_sent < pk.cells) {
      pk.ready_at = written_ready(i, pk.ready_at);
    } else if (cell_alloc_ && pk.cells_sent < pk.cells && pk.written <= pk.cells_sent) {
      // Cell allocation without bank limits: written as seen, but a cell seen in this cycle may
      // not have its id yet (its write comes later in the cycle, and wakes it).
      pk.ready_at = kWaitWrite;
    }
  }
  ++cells_switched_;
  const int64_t at = c + xbar_delay_;
  if (egress_in_time_) {
    // Cell k (k cells before it) reaches the egress at `at`; the wire needs it ser(k cells) after
    // the frame's first bit, so the first bit may not come before at - ser(k cells). The egress
    // pipeline's latency is fixed: the crossing cycle tells the arrival.
    const uint32_t k = pk.cells_sent - 1u;
    const Time need =
        time_of(at) - eg_fast_rate_[pk.out].serialization(Bytes(uint64_t{k} * cell_bytes_));
    if (k == 0 || need > pk.eg_ready) pk.eg_ready = need;
    // The last cell crossed after the first reached the egress: the packet is whole now.
    if (pk.cells_sent == pk.cells && pk.cells_at_egress > 0) egress_join(i, c);
  }
  if (at == c)
    egress_cell(i, c);
  else
    to_egress_.push(at, i);
}

inline bool SwitchCore::run_event(int64_t c, DepartureSink& sink) {
  if (joins_.due(c) &&
      (!wheel_.peek() || EventWheel<Event>::before(joins_.front().order, wheel_.peek_order()))) {
    const Join j = joins_.pop();
    egress_enqueue(j.pkt, j.out, j.tc, j.bytes, c);
    return true;
  }
  Event e;
  if (!wheel_.pop(e)) return false;
  if (const Event* n = wheel_.peek()) prefetch_pkt(n->pkt);
  handle(e, c, sink);
  return true;
}

inline void SwitchCore::egress_enqueue(uint32_t i, int64_t c) {
  const Pkt& pk = pool_[i];
  egress_enqueue(i, pk.out, pk.p.tc, static_cast<uint32_t>(pk.p.size.count()), c);
}

inline void SwitchCore::egress_enqueue(uint32_t i, int out, int tc, uint32_t bytes, int64_t c) {
  egq_[static_cast<size_t>(out) * tcs_ + tc].push_back(i);
  egq_bytes_[out] += bytes;
  egq_busy_[out] |= static_cast<uint16_t>(1u << tc);
  if (egress_[out].current == kNil) try_start(out, c);
}

inline void SwitchCore::egress_cell(uint32_t i, int64_t c) {
  Pkt& pk = pool_[i];
  ++pk.cells_at_egress;
  if (egress_in_time_) {
    // The first cell is here: the packet joins if every cell has crossed (eg_ready is final),
    // else when its last cell crosses (send_cell).
    if (pk.cells_at_egress == 1) {
      if (pk.cells_sent == pk.cells) egress_join(i, c);
      return;
    }
  } else if (pk.cells_at_egress == (egress_whole_ ? pk.cells : 1)) {
    // The frame may start once its first cell is here, one cycle later in cut-through when more
    // cells follow (the elastic buffer: a single cell has nothing to wait for, and waiting made
    // cut-through a cycle slower than store-and-forward for single-cell frames), or with
    // egress.start = all_cells once its last one is.
    pk.eg_ready = time_of(cut_through_ && !egress_whole_ && pk.cells > 1 ? c + 1 : c);
    egress_enqueue(i, c);
    return;
  }
  Egress& e = egress_[pk.out];
  if (e.current != i) return;
  // Streaming: the wire needs cell k at base + ser(k cells since base); if it is late, the wire
  // waits for it (an underrun stall).
  const uint64_t k_bytes = static_cast<uint64_t>(pk.cells_at_egress - 1) * cell_bytes_;
  const Time needed =
      pk.tx_base_time +
      mac_[pk.out].rate(pk.tx_start).serialization(Bytes(k_bytes - pk.tx_base_bytes));
  if (time_of(c) > needed) {
    PortCounters& pc = ports_[pk.out];
    ++pc.underruns;
    pc.underrun_time += time_of(c) - needed;
    pk.tx_base_time = time_of(c);
    pk.tx_base_bytes = static_cast<uint32_t>(k_bytes);
  }
  if (pk.cells_at_egress == pk.cells) {
    pk.tx_end =
        pk.tx_base_time +
        mac_[pk.out]
            .rate(pk.tx_start)
            .serialization(Bytes(overhead_.frame_bytes(pk.p.size.count()) - pk.tx_base_bytes));
    schedule_done(pk.out, pk.tx_end, c);
  }
}

inline void SwitchCore::try_start(int port, int64_t c) {
  Egress& e = egress_[port];
  if (e.current != kNil) return;
  int tc = -1;
  if (!fc_on_ && strict_priority_) {  // the common case, inline
    tc = highest_class(port, 0);
  } else {
    if (fc_on_ && start_control(port, c)) return;  // control frames go first
    tc = pick_class(port, c);
  }
  if (tc < 0) {
    if (fc_on_) {
      // Blocked by flow control with packets waiting: look again when a pause changes (credit
      // updates schedule their own retry when they arrive).
      const Time t = fc_.next_unblock(port, time_of(c));
      if (t != Time::max()) schedule_retry(port, std::max(cycle_of(t), c + 1));
    }
    return;
  }
  SlotRing& q = egq_[static_cast<size_t>(port) * tcs_ + tc];
  const uint32_t i = q.front();
  q.pop_front();
  if (q.empty())
    egq_busy_[port] &= static_cast<uint16_t>(~(1u << tc));
  else  // the class's next frame here, a frame time away: its record is cold in a deep queue
    prefetch_pkt(q.front());
  Pkt& pk = pool_[i];
  e.current = i;
  egq_bytes_[port] -= pk.p.size.count();
  if (ecn_on_ && !ecn_enqueue_ && pk.p.ecn == kEcnEct0)  // the depth it leaves behind
    ecn_mark(pk, (buffer_.queue_cells(admission_queue(pk)) - held_cells(pk)) * cell_bytes_);
  // The frame's first bit follows its preamble, and the previous frame's gap.
  pk.tx_start = mac_[port].first_bit(std::max(time_of(c), pk.eg_ready));
  pk.tx_base_time = pk.tx_start;
  pk.tx_base_bytes = 0;
  if (!has_int_.empty() && has_int_[i] && int_stamp_) stamp_int(port, i);
  if (fc_on_) fc_.on_send(port, tc, static_cast<uint32_t>(pk.p.size.count()), pk.tx_start);
  if (!watched_.empty() && watched_[port]) {
    watched_busy_.set(port);
    oldest_watched_ = std::min(oldest_watched_, pk.tx_start);
  }
  if (pk.cells_at_egress == pk.cells) {
    pk.tx_end = mac_[port].last_bit(pk.tx_start, pk.p.size.count());
    schedule_done(port, pk.tx_end, c);
  }
}

inline void SwitchCore::schedule_done(int port, Time end, int64_t c) {
  const int64_t dc =
      std::max(static_cast<int64_t>(period_div_.floor(static_cast<uint64_t>(end.as_fs()))), c);
  if (done_.fits(dc, c))
    done_.set(dc, port);
  else  // a very long packet on a slow port
    wheel_.schedule(dc, Event{Ev::kEgressDone, static_cast<uint32_t>(port)});
}

}  // namespace fabricsim::sw
