// The requester's side that selective repeat (rc_selective.h) and RUD (rud_transport.h) share: a
// send window of packets from the oldest unacknowledged one on, each acknowledged one at a time
// (cumulatively or selectively), a list of PSNs presumed lost to send again before anything new,
// and the retransmission timer.
//
// Hardware: the send queue state of a NIC's reliable transport that places out of order (IRN's and
// UEC's requester): the entries the NIC holds for a resend, the PSN of the oldest, how many have
// left, and the loss list its SACK logic fills. What differs between the two transports stays in
// them: which replies acknowledge what, when a hole counts as lost, READs (selective repeat only)
// and the order messages complete in. Plain C++.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "models/common/fifo.h"
#include "models/nic/rc_transport.h"

namespace fabricsim::nic {

// A packet the requester holds until it is acknowledged.
struct SendEntry {
  RcPacket p;
  bool acked = false;   // cumulatively or selectively acknowledged (placed at the responder)
  bool resent = false;  // sent again in this recovery
  bool queued = false;  // in the loss list
};

class SendWindow {
 public:
  Time deadline() const { return timer_.deadline(); }
  // When the newest packet the last reply acknowledged left (Time::max(): none new).
  Time acked_sent() const { return acked_sent_; }
  bool idle() const { return packets_.empty(); }
  // Packets cut and not yet acknowledged (held for a resend), sent or not.
  size_t held() const { return packets_.size(); }
  // The congestion control's window in packets (0: none): at most that many outstanding.
  void limit_window(uint64_t packets) {
    window_ =
        packets == 0 ? own_window_ : static_cast<size_t>(std::min<uint64_t>(own_window_, packets));
  }
  bool failed() const { return failed_; }
  uint64_t sent() const { return sent_; }
  uint64_t retransmitted() const { return retransmitted_; }
  uint64_t timeouts() const { return timer_.timeouts(); }

 protected:
  SendWindow(const RcConfig& cfg, uint32_t first_psn)
      : window_(static_cast<size_t>(cfg.window_for(false))),
        own_window_(window_),
        una_(first_psn & Packetizer::kPsnMask),
        timer_(cfg.rto(), cfg.retry_count) {}

  // The entry of the next PSN of the loss list to send again, taken off the list (`skip(entry)`:
  // one not to send after all, dropped), or null when the list holds none; `index`: its place
  // in packets_.
  template <class Skip>
  SendEntry* take_lost(Skip skip, size_t* index = nullptr) {
    while (!lost_.empty()) {
      const uint32_t psn = lost_.front();
      lost_.pop_front();
      const int32_t i = psn_diff(psn, una_);
      if (i < 0 || static_cast<size_t>(i) >= high_) continue;  // acknowledged meanwhile
      SendEntry& e = packets_[static_cast<size_t>(i)];
      e.queued = false;
      if (skip(e)) continue;
      if (index) *index = static_cast<size_t>(i);
      return &e;
    }
    return nullptr;
  }
  // Counts entry `e` sent again at `now`.
  void resend(SendEntry& e, Time now) {
    e.resent = true;
    ++retransmitted_;
    count_send(now);
    e.p.sent = now;
  }
  // Whether a packet not sent yet may go: there is one, and the window has room.
  bool may_send_new() const { return high_ < packets_.size() && high_ < window_; }
  void count_send(Time now) {
    ++sent_;
    timer_.on_send(now);
  }
  // The timer gave up: the QP fails, holding nothing.
  void drop_all() {
    failed_ = true;
    packets_.clear();
    lost_.clear();
    high_ = 0;
  }
  // A new recovery after a timeout: everything sent goes on the loss list again
  // (`queue(i)`: the transport's own rule for entry i).
  template <class Queue>
  void requeue_sent(Queue queue) {
    lost_.clear();
    for (size_t i = 0; i < high_; ++i) {
      packets_[i].resent = packets_[i].queued = false;
      queue(i);
    }
  }

  size_t window_;            // RcConfig::window_for(false): read per packet
  size_t own_window_;        // window_ without the congestion control's limit
  Fifo<SendEntry> packets_;  // from the oldest unacknowledged on
  uint32_t una_;             // the PSN of packets_[0]
  size_t high_ = 0;          // packets_ below this index have been sent
  Fifo<uint32_t> lost_;      // PSNs to send again, in order
  RetransmitTimer timer_;
  bool failed_ = false;
  uint64_t sent_ = 0, retransmitted_ = 0;
  Time acked_sent_ = Time::max();
};

}  // namespace fabricsim::nic
