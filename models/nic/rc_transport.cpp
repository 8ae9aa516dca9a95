#include "models/nic/rc_transport.h"

#include <algorithm>

namespace fabricsim::nic {

void RcConfig::visit(config::Visitor& v) {
  v.param("window", window, 0, 0, kPsnWindow, "packets",
          "Requester: most packets sent and not yet acknowledged. 0 (default): the transport's "
          "own limit, no hidden congestion window: go_back_n 8,388,607 (IBA's PSN space, 2^23 "
          "- 1), selective_repeat and rud 256 (the responder's tracking of packets held ahead "
          "of a gap) [S].");
  v.param("ack_every", ack_every, 16, 1, 1 << 20, "packets",
          "Responder: an ACK after this many packets in order, and whenever the requester asks "
          "(AckReq: a message's last packet, the packet that fills the window) [S].");
  v.param("local_ack_timeout", local_ack_timeout, 20, 1, 24, "",
          "Requester: IBA's Local ACK Timeout n: the retransmission timer is 4.096 us x 2^n "
          "(20: 4.29 s). 20 is NCCL's NCCL_IB_TIMEOUT and HCCL's HCCL_RDMA_TIMEOUT default "
          "[V]; at most 24 (68.7 s) here.");
  v.param("timeout", timeout, Time(), Time(), Time::us(100000000),
          "Requester: the retransmission timer as a time, overriding local_ack_timeout "
          "(0, default: 4.096 us x 2^local_ack_timeout). A timer shorter than the deepest "
          "queue's drain time fires on a lossless fabric: a spurious retransmission.");
  v.param("retry_count", retry_count, 7, 0, 7, "",
          "Timeouts in a row without progress before the QP fails its messages (IBA: 0-7) [R].");
  v.param("max_reads_outstanding", max_reads_outstanding, 16, 1, 255, "reads",
          "Requester: RDMA READs sent and not wholly answered (IBA's initiator depth, "
          "max_rd_atomic: an 8-bit field; ConnectX NICs allow 16); a READ beyond waits, and the "
          "QP's later work with it [R].");
}

RcRequester::RcRequester(const RcConfig& cfg, uint32_t first_psn)
    : una_(first_psn & Packetizer::kPsnMask),
      window_(static_cast<uint32_t>(cfg.window_for(true))),
      own_window_(window_),
      timer_(cfg.rto(), cfg.retry_count),
      max_reads_(cfg.max_reads_outstanding) {}

void RcRequester::post(uint64_t message, const std::vector<TxPacket>& pkts) {
  for (size_t i = 0; i < pkts.size(); ++i)
    packets_.push_back(RcPacket(pkts[i], message, i + 1 == pkts.size()));
}

std::optional<RcPacket> RcRequester::next(Time now) {
  if (blocked()) return std::nullopt;
  packets_[cursor_].sent = now;
  if (packets_[cursor_].read_left) {
    // A READ request: the READ's own, or where a go-back landed inside a READ (some responses
    // came), a request for the rest from that PSN on (IBA 9.7.5.1). Either way its PSNs up to
    // the READ's end count as sent: its responses will answer them.
    RcPacket p = packets_[cursor_];
    p.span = 0;
    const size_t end = cursor_ + p.read_left;
    if (cursor_ < high_) {
      ++retransmitted_;
    } else {
      ++reads_sent_;
      high_ = end;
    }
    cursor_ = end;
    ++sent_;
    timer_.on_send(now);
    return p;
  }
  RcPacket p = packets_[cursor_];
  p.ack_req = p.last || cursor_ + 1 == static_cast<size_t>(window_);
  if (cursor_ < high_)
    ++retransmitted_;
  else
    high_ = cursor_ + 1;
  ++cursor_;
  ++sent_;
  timer_.on_send(now);
  return p;
}

void RcRequester::acknowledge(uint32_t psn, Time now, std::vector<uint64_t>& done) {
  // Packets up to and including `psn`, if it lies within what was sent (a stale or bogus ACK
  // acknowledges nothing).
  acked_sent_ = Time::max();
  const int32_t n = psn_diff(psn, una_) + 1;
  if (n <= 0 || static_cast<size_t>(n) > high_) return;
  acked_sent_ = packets_[static_cast<size_t>(n - 1)].sent;
  for (int32_t k = 0; k < n; ++k) {
    const RcPacket& f = packets_.front();
    if (f.last) done.push_back(f.message);
    if (f.read_left == 1) {  // a READ's last PSN: the READ is answered
      reads_.pop_front();
      --reads_sent_;
    }
    packets_.pop_front();
  }
  una_ = (una_ + static_cast<uint32_t>(n)) & Packetizer::kPsnMask;
  cursor_ = cursor_ > static_cast<size_t>(n) ? cursor_ - n : 0;
  high_ -= static_cast<size_t>(n);
  rewound_ = false;
  timer_.on_progress(now, high_ > 0);
}

bool RcRequester::clip(uint32_t& psn) const {
  // An ACK or NAK acknowledges a READ only through its responses: one that reaches past a READ
  // not wholly answered (the responder sends its ACKs behind the READ's responses, so they were
  // lost) acknowledges only what precedes that READ. True if it reached past.
  if (reads_.empty()) return false;
  const int32_t n = psn_diff(psn, una_) + 1;
  if (n <= 0 || static_cast<size_t>(n) > high_) return false;
  const int32_t limit = std::max(0, psn_diff(reads_.front(), una_));
  if (n <= limit) return false;
  psn = (una_ + static_cast<uint32_t>(limit) - 1) & Packetizer::kPsnMask;
  return true;
}

void RcRequester::on_ack(uint32_t psn, Time now, std::vector<uint64_t>& done) {
  const bool past_read = clip(psn);
  acknowledge(psn, now, done);
  if (past_read && !rewound_) {  // go back: request the READ's rest again
    rewound_ = true;
    ++read_rewinds_;
    cursor_ = 0;
  }
}

void RcRequester::on_nak(uint32_t psn, Time now, std::vector<uint64_t>& done) {
  ++naks_;
  uint32_t acked = (psn - 1) & Packetizer::kPsnMask;
  const bool past_read = clip(acked);
  acknowledge(acked, now, done);
  // Go back: send again from the PSN the responder expects (now the oldest unacknowledged), or
  // from the first unanswered PSN of a READ before it.
  if (past_read || psn_diff(psn, una_) == 0) cursor_ = 0;
}

bool RcRequester::on_read_response(uint32_t psn, Time now, std::vector<uint64_t>& done,
                                   uint64_t& message) {
  const int32_t i = psn_diff(psn, una_);
  if (i < 0 || static_cast<size_t>(i) >= high_) return false;  // answered already, or not asked
  const RcPacket& e = packets_[static_cast<size_t>(i)];
  if (!e.read_left) return false;  // not a READ's PSN
  // The responder executed the READ: it had everything before it. But an earlier READ is
  // answered only by its own responses: if one before it is not, they were lost.
  const int32_t start = psn_diff(read_start(reads_, psn), una_);
  const int32_t limit = std::min(start, std::max(0, psn_diff(reads_.front(), una_)));
  if (limit > 0)
    acknowledge((una_ + static_cast<uint32_t>(limit) - 1) & Packetizer::kPsnMask, now, done);
  if (psn_diff(psn, una_) != 0) {
    // Responses before it were lost (the responder sends them in PSN order): go back, and
    // request the rest of the READ from the first missing PSN.
    if (!rewound_) {
      rewound_ = true;
      ++read_rewinds_;
      cursor_ = 0;
    }
    return false;
  }
  message = packets_.front().message;
  acknowledge(psn, now, done);
  return true;
}

Time RcRequester::on_timer(Time now, std::vector<uint64_t>& failed) {
  switch (timer_.check(now)) {
    case RetransmitTimer::Fired::kNo:
      break;
    case RetransmitTimer::Fired::kGiveUp:
      // Retries exhausted: every outstanding message fails (once per message).
      failed_ = true;
      for (size_t i = 0; i < packets_.size(); ++i)
        if (packets_[i].last) failed.push_back(packets_[i].message);
      packets_.clear();
      reads_.clear();
      reads_sent_ = 0;
      cursor_ = high_ = 0;
      break;
    case RetransmitTimer::Fired::kRetry:
      cursor_ = 0;  // go back to the oldest unacknowledged packet
      break;
  }
  return timer_.deadline();
}

RcResponder::RcResponder(const RcConfig& cfg, uint32_t first_psn)
    : epsn_(first_psn & Packetizer::kPsnMask), ack_every_(cfg.ack_every) {}

RcResponder::Outcome RcResponder::via(const PsnTrackerIn& in) {
  const PsnTrackerOut h = hw_->tick(in);
  accepted_ += h.placed;
  duplicates_ += h.duplicate;
  out_of_order_ += h.out_of_order;
  epsn_ = hw_->expected();
  nak_sent_ = hw_->nak_sent();
  unacked_ = hw_->unacked();
  Outcome o;
  o.accepted = h.placed;
  o.duplicate = in.read && h.duplicate;
  o.reply = static_cast<Reply>(h.reply);
  o.psn = h.psn;
  return o;
}

RcResponder::Outcome RcResponder::receive_read(uint32_t psn, uint32_t psns) {
  if (hw_) return via(PsnTrackerIn{true, true, psn, false, psns});
  Outcome o;
  const int32_t d = psn_diff(psn, epsn_);
  if (d == 0) {
    o.accepted = true;
    ++accepted_;
    epsn_ = (epsn_ + psns) & Packetizer::kPsnMask;
    nak_sent_ = false;
    // What was accepted before it and not yet ACKed, its responses acknowledge.
    unacked_ = 0;
  } else if (d < 0) {
    ++duplicates_;
    o.duplicate = true;
  } else {
    ++out_of_order_;
    if (!nak_sent_) {
      nak_sent_ = true;
      o.reply = Reply::kNak;
      o.psn = epsn_;
    }
  }
  return o;
}

RcResponder::Outcome RcResponder::receive(uint32_t psn, bool ack_req) {
  if (hw_) return via(PsnTrackerIn{true, false, psn, ack_req, 1});
  Outcome o;
  const int32_t d = psn_diff(psn, epsn_);
  if (d == 0) {
    o.accepted = true;
    ++accepted_;
    epsn_ = (epsn_ + 1) & Packetizer::kPsnMask;
    nak_sent_ = false;
    if (++unacked_ >= ack_every_ || ack_req) {
      unacked_ = 0;
      o.reply = Reply::kAck;
      o.psn = psn;
    }
  } else if (d < 0) {
    // A duplicate (its ACK was lost, or a go-back resent it): not delivered again; ACK what we
    // have so that the requester moves on.
    ++duplicates_;
    o.reply = Reply::kAck;
    o.psn = (epsn_ - 1) & Packetizer::kPsnMask;
  } else {
    // A gap: one NAK per gap; what follows it is dropped until the expected PSN comes.
    ++out_of_order_;
    if (!nak_sent_) {
      nak_sent_ = true;
      o.reply = Reply::kNak;
      o.psn = epsn_;
    }
  }
  return o;
}

}  // namespace fabricsim::nic
