// SwitchCore::receive(), the arrival of a packet's first bit, with the two helpers it calls: on
// every packet's path and called from the SystemC wrapper's port, so defined inline in a header
// that switch_core.h includes at its end (it saves the call: ~2% of the slotted benchmark's
// instructions).
#pragma once

#include <algorithm>
#include <functional>

#include "models/switch/switch_core.h"

namespace fabricsim::sw {

inline uint32_t SwitchCore::alloc_pkt() {
  if (!free_slots_.empty()) {
    const uint32_t i = free_slots_.back();
    free_slots_.pop_back();
    // The slot the next arrival takes, asked for now: an arrival comes while another device
    // runs, when this switch's memory is cold, and its record is written whole at once.
    if (!free_slots_.empty()) prefetch_pkt<true>(free_slots_.back());
    return i;
  }
  pool_.emplace_back();
  if (cursors_) cursor_.emplace_back();
  return static_cast<uint32_t>(pool_.size() - 1);
}

inline uint64_t SwitchCore::ready_bytes(const Pkt& pk, uint32_t k) const {
  const uint64_t size = pk.p.size.count();
  return cut_through_ ? std::min<uint64_t>((k + 1) * static_cast<uint64_t>(cell_bytes_), size)
                      : overhead_.frame_bytes(size);
}

inline int64_t SwitchCore::receive(int port, const Packet& p, Time first_bit, Time now) {
  const uint32_t i = alloc_pkt();
  Pkt& pk = pool_[i];
  pk.p = p;
  pk.first_bit = first_bit;
  pk.in = static_cast<int16_t>(port);
  pk.out = 0;
  pk.cells = p.size.count() <= static_cast<uint64_t>(cell_bytes_)
                 ? 1
                 : static_cast<uint16_t>((p.size.count() + cell_bytes_ - 1) / cell_bytes_);
  pk.cells_sent = pk.cells_at_egress = pk.written = pk.admit_lag = 0;
  pk.stomped = pk.queued = false;
  pk.alloc = SharedBuffer::Allocation{};
  pk.in_next = kNil;
  // Measured = injected into the network inside the window (at the first switch that is also
  // the first bit in), so that every hop counts the same packets.
  pk.measured = in_window(p.inject_time);
  // IB credits: the receive buffer takes the blocks in wire order with the FC packets (whose
  // FCTBS resynchronises it), so at hand-over rather than in the cycle of the first cell.
  if (fc_.credit()) fc_.admit(port, p.tc, static_cast<uint32_t>(p.size.count()), first_bit);
  PortCounters& pc = ports_[port];
  ++pc.rx_packets;
  pc.rx_bytes += p.size.count();
  if (pk.measured) ++win_received_;
  const uint64_t first = std::min<uint64_t>(static_cast<uint64_t>(cell_bytes_), p.size.count());
  const BitRate rate = mac_[port].rate(first_bit);
  if (first_bit >= win_start_ && first_bit <= rx_whole_until_)  // no serialisation to compute
    pc.win_rx_bytes.add_whole(p.size.count());
  else
    pc.win_rx_bytes.add(p.size.count(), first_bit, first_bit + rate.serialization(p.size),
                        win_start_, win_end_);
  int64_t admit_cycle = cycle_of(first_bit + rate.serialization(Bytes(first)));
  // The first cell's crossbar cycle (compute_ready_cycle(pk, 0)), without a second division when
  // it needs no more bytes than admission does (cut-through, or a one-cell frame).
  const uint64_t upto = ready_bytes(pk, 0);
  pk.ready_at =
      (upto == first ? admit_cycle : cycle_of(first_bit + rate.serialization(Bytes(upto)))) +
      cfg_.ingress_cycles;
  // (The usual arrival is due in the future: the division for `now` only when it might not be.)
  if (admit_cycle <= last_cycle_ || time_of(admit_cycle) < now) {
    const int64_t earliest_cycle = std::max(cycle_of(now), last_cycle_ + 1);
    // Handed over after its first cell was due (a link shorter than the frame): the switch sees
    // it in the next cycle, as if the hop were store-and-forward. Counted, and zero whenever the
    // link latency covers the frame time.
    admit_cycle = earliest_cycle;
    ++late_arrivals_;
  }
  // Arrivals come in time order, so admissions are usually in order too: a FIFO then does the
  // calendar's job; the odd out-of-order one (a short packet overtaking) goes to the wheel.
  if (admit_cycle >= last_admit_due_) {
    last_admit_due_ = admit_cycle;
    to_admit_.push(admit_cycle, DueAdmission{port, i});
  } else {
    ooo_admit_.push_back(LateAdmission{admit_cycle, DueAdmission{port, i}});
    std::push_heap(ooo_admit_.begin(), ooo_admit_.end(), std::greater<>());
    ooo_next_ = ooo_admit_.front().due;
  }
  return admit_cycle;
}

}  // namespace fabricsim::sw
