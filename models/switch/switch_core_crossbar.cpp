// The switch core's crossbar, cycle by cycle: matchings on clock edges (the slot timer, a
// matching's cycles, one at a time or pipelined), the transfer of matched cells, and packet mode's
// held pairs (the rest of the data path: switch_core.cpp).
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "models/switch/switch_core.h"
#include "models/switch/switch_core_inline.h"

namespace fabricsim::sw {

void SwitchCore::run_matchings(int64_t c) {
  // Crossbar slots are kept exactly as fs + frac / slot_den_ and used on the first clock edge at
  // or after them. A slot that was due at an earlier edge and not used was idle time: an idle
  // crossbar starts at once, but a slot between edges carries over (the long-run rate is the
  // speedup's, in whole cycles: e.g. 2.29-cycle slots are taken 2 or 3 cycles apart).
  const auto now = static_cast<uint64_t>(time_of(c).as_fs());
  if (next_match_fs_ + static_cast<uint64_t>(period_.as_fs()) <= now) {
    next_match_fs_ = now;
    next_match_frac_ = 0;
  }
  const bool slot = next_match_fs_ + (next_match_frac_ != 0) <= now;
  // Packet mode: a held pair is a connection through the crossbar; its cells cross as they
  // become eligible, at most one per slot of its own (not on the matchings' slots).
  hold_wake_ = EventWheel<Event>::kNone;
  if (held_count_) serve_held(c);
  if (match_cycles_ == 0 || pipelined_) {
    // A matching per slot: its cells cross now (free), or enter the crossbar path now and reach
    // the egress match_cycles_ later (pipelined: xbar_delay_), which is the same as crossing
    // when the matching completes, with later matchings already seeing them granted.
    if (slot && !requested_outputs_.empty()) {
      start_matching(c, false);
      apply_match(c);
      advance_slot();
    }
    if (held_count_) release_ended();
    return;
  }
  // One matching at a time: its grant is applied at the first slot at or after it is available
  // (polled every cycle for a clocked block), and the next matching begins right after, on the
  // requests as the grant left them.
  if (in_flight_ && scheduler_->poll(c, match_) && slot) {
    in_flight_ = false;
    apply_match(c);
    advance_slot();
  }
  if (held_count_) release_ended();
  if (!in_flight_ && !requested_outputs_.empty()) {
    start_matching(c, true);
    in_flight_ = true;
  }
}

void SwitchCore::advance_slot() {
  next_match_fs_ += slot_fs_;
  next_match_frac_ += slot_frac_;
  if (next_match_frac_ >= static_cast<uint64_t>(slot_den_)) {
    next_match_frac_ -= static_cast<uint64_t>(slot_den_);
    ++next_match_fs_;
  }
}

void SwitchCore::start_matching(int64_t c, bool begin) {
  ++matchings_;
  const PortSet* outs = &requested_outputs_;
  if (held_count_) {
    // Packet mode: held inputs and outputs stay out of the matching (their request words are
    // set aside and put back afterwards; nothing is allocated).
    const int nw = offered_outputs_.num_words();
    for (int w = 0; w < nw; ++w)
      offered_outputs_.set_word(w, requested_outputs_.word(w) & ~held_out_.word(w));
    outs = &offered_outputs_;
    held_in_.for_each([&](int in) {
      for (int w = 0; w < nw; ++w) {
        stash_[static_cast<size_t>(in) * nw + w] = requests_[in].word(w);
        requests_[in].set_word(w, 0);
      }
    });
  }
  if (begin)
    scheduler_->begin(requests_, *outs, match_, c, match_cycles_);
  else
    scheduler_->schedule(requests_, *outs, match_);
  if (held_count_) {
    const int nw = offered_outputs_.num_words();
    held_in_.for_each([&](int in) {
      for (int w = 0; w < nw; ++w)
        requests_[in].set_word(w, stash_[static_cast<size_t>(in) * nw + w]);
    });
  }
}

inline int SwitchCore::pair_queue(int in, int out, int& tc) const {
  // Within the matched pair the highest ready class goes first, except that a packet that has
  // crossed in part finishes first (the highest such): the crossbar does not preempt a packet for
  // a higher class. Otherwise a packet the egress started in a lower class (DWRR's turn, or its
  // higher class paused) waited for every higher-class cell its input had for the output, with
  // the wire stalled mid-frame (issue #20: a DWRR port under overload sent 5 packets in 160 us),
  // and the other started packets of its class with it. Preemption at the crossbar only stalls a
  // frame the egress may already be sending.
  tc = 0;
  if (one_class_voq_) return requests_[in].test(out) ? in * n_ + out : -1;
  if (arch_ == Architecture::kVoq) {
    const uint16_t ready = pair_classes_[in * n_ + out];
    if (!ready) return -1;
    uint16_t pick = ready;
    if (ready & (ready - 1)) {  // (with one class ready there is nothing to choose)
      const uint16_t started = ready & pair_started_[in * n_ + out];
      if (started) pick = started;
    }
    tc = 31 - __builtin_clz(pick | 1u);
    return ingress_queue(in, out, tc);
  }
  return iq_ready_out_[in] == out ? in : -1;
}

inline SwitchCore::Pkt& SwitchCore::cross(int q, int in, int tc, int64_t c) {
  List& l = iq_[q];
  const uint32_t h = l.head;
  send_cell(h, c);
  Pkt& pk = pool_[h];
  const bool whole = pk.cells_sent == pk.cells;
  if (whole) {
    l.head = pk.in_next;
    if (l.head == kNil) l.tail = kNil;
  }
  // The pair's class starts a packet with its first cell and ends it with its last (a queue's
  // head packet crosses alone, in order): the cells between change nothing.
  if (!one_class_voq_ && arch_ == Architecture::kVoq && pk.cells > 1 &&
      (whole || pk.cells_sent == 1)) {
    uint16_t& s = pair_started_[in * n_ + pk.out];
    s = whole ? static_cast<uint16_t>(s & ~(1u << tc)) : static_cast<uint16_t>(s | 1u << tc);
  }
  update_ready(q, in, tc, c);
  return pk;
}

bool SwitchCore::apply_match(int64_t c) {
  const PortSet& matched = scheduler_->matched_inputs();
  if (width_ == 1 && !packet_mode_) {
    // The common crossbar, one cell per matched pair: the loop the slotted benchmark spends its
    // crossbar time in, kept as lean as it was before widths and holds.
    matched.for_each([&](int in) __attribute__((always_inline)) {
      const int out = match_[in];
      int tc = 0;
      // (One class: the pair's queue, requested since it was matched.)
      const int q = one_class_voq_ ? in * n_ + out : pair_queue(in, out, tc);
      if (q < 0)
        throw std::logic_error(
            fmt::format("{}: scheduler matched {}->{} without a request", name_, in, out));
      // The head cell's bank may have no read left this cycle: then the pair moves nothing in
      // this matching (a bank conflict; the cell waits for a later one).
      if (read_limited_ && !banks_.try_read(cursor_[iq_[q].head].read_cell, c)) return;
      uint32_t used = cell_payload(pool_[iq_[q].head], pool_[iq_[q].head].cells_sent);
      cross(q, in, tc, c);
      // A datapath wider than the cell's bytes carries further eligible cells of the same queue
      // to the same output in this matching (64 B frames: several per slot), while they fit.
      while (datapath_budget_ > 0) {
        const uint32_t h = iq_[q].head;
        if (h == kNil) break;
        const Pkt& nx = pool_[h];
        if (nx.ready_at > c || nx.out != out) break;
        const uint32_t bytes = cell_payload(nx, nx.cells_sent);
        if (used + bytes > datapath_budget_) break;
        if (read_limited_ && !banks_.try_read(cursor_[h].read_cell, c)) break;
        used += bytes;
        cross(q, in, tc, c);
        ++packed_cells_;
      }
    });
    return !matched.empty();
  }
  bool moved = false;
  matched.for_each([&](int in) {
    const int out = match_[in];
    int tc = 0;
    int q = pair_queue(in, out, tc);
    if (q < 0)
      throw std::logic_error(
          fmt::format("{}: scheduler matched {}->{} without a request", name_, in, out));
    moved = true;
    for (int k = 0;;) {
      Pkt& pk = cross(q, in, tc, c);
      if (packet_mode_ && pk.cells_sent < pk.cells) {
        // The pair is held for this packet's remaining cells (from the next slot on, or now
        // while this slot has width left).
        if (!held_in_.test(in)) {
          held_in_.set(in);
          held_out_.set(out);
          ++held_count_;
          hold_q_[in] = q;
          hold_tc_[in] = static_cast<int16_t>(tc);
          hold_out_[in] = static_cast<int16_t>(out);
        }
        hold_next_fs_[in] = static_cast<uint64_t>(time_of(c).as_fs()) + hold_step_fs_;
        if (++k < width_ && pk.ready_at <= c) continue;
        hold_wake_ = std::min(hold_wake_, std::max(pk.ready_at, hold_cycle(in)));
        return;
      }
      if (packet_mode_ && held_in_.test(in)) {  // its last cell crossed in this slot
        held_in_.clear(in);
        held_out_.clear(out);
        --held_count_;
      }
      if (++k == width_ || (q = pair_queue(in, out, tc)) < 0) return;
    }
  });
  return moved;
}

void SwitchCore::release_ended() {
  ending_.for_each([&](int in) {
    held_in_.clear(in);
    held_out_.clear(hold_out_[in]);
    --held_count_;
  });
  ending_.clear_all();
}

void SwitchCore::serve_held(int64_t c) {
  const auto now = static_cast<uint64_t>(time_of(c).as_fs());
  held_in_.for_each([&](int in) {
    if (ending_.test(in)) return;
    const int q = hold_q_[in];
    const int tc = hold_tc_[in];
    const Pkt& head = pool_[iq_[q].head];
    // Its next cell: eligible (cut-through: arrived), and a slot since the pair's last crossing.
    if (head.ready_at > c || now < hold_next_fs_[in]) {
      hold_wake_ = std::min(hold_wake_, std::max(head.ready_at, hold_cycle(in)));
      return;
    }
    for (int k = 0; k < width_; ++k) {
      const Pkt& pk = cross(q, in, tc, c);
      if (pk.cells_sent == pk.cells) {
        // Its last cell crossed: the pair is released once this cycle's matching is done.
        ending_.set(in);
        return;
      }
      if (pk.ready_at > c) break;
    }
    hold_next_fs_[in] = now + hold_step_fs_;
    hold_wake_ = std::min(hold_wake_, std::max(head.ready_at, hold_cycle(in)));
  });
}

}  // namespace fabricsim::sw
