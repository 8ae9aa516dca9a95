#include "models/nic/rc_transport.h"

#include <algorithm>

namespace fabricsim::nic {

void RcConfig::visit(config::Visitor& v) {
  v.param("window", window, 256, 1, 1 << 22, "packets",
          "Requester: most packets sent and not yet acknowledged (a bandwidth-delay product: "
          "400 Gb/s x 10 us is ~120 packets of 4 KB) [S].");
  v.param("ack_every", ack_every, 16, 1, 1 << 20, "packets",
          "Responder: an ACK after this many packets in order, and whenever the requester asks "
          "(AckReq: a message's last packet, the packet that fills the window) [S].");
  v.param("timeout", timeout, Time::us(100), Time::ns(100), Time::us(10000000),
          "Requester: retransmission timer. IBA's local ACK timeout is 4.096 us x 2^n; RoCE "
          "drivers use ~0.5 ms to seconds, lossless fabrics rarely fire it [S].");
  v.param("retry_count", retry_count, 7, 0, 7, "",
          "Timeouts in a row without progress before the QP fails its messages (IBA: 0-7) [R].");
}

RcRequester::RcRequester(const RcConfig& cfg, uint32_t first_psn)
    : cfg_(cfg), una_(first_psn & Packetizer::kPsnMask), timer_(cfg.timeout, cfg.retry_count) {}

void RcRequester::post(uint64_t message, const std::vector<TxPacket>& pkts) {
  for (size_t i = 0; i < pkts.size(); ++i)
    packets_.push_back(RcPacket{pkts[i], message, i + 1 == pkts.size(), false, Time()});
}

std::optional<uint32_t> RcRequester::peek() const {
  if (failed_ || cursor_ >= packets_.size() || cursor_ >= static_cast<size_t>(cfg_.window))
    return std::nullopt;
  return packets_[cursor_].pkt.frame();
}

std::optional<RcPacket> RcRequester::next(Time now) {
  if (failed_ || cursor_ >= packets_.size() || cursor_ >= static_cast<size_t>(cfg_.window))
    return std::nullopt;
  packets_[cursor_].sent = now;
  RcPacket p = packets_[cursor_];
  p.ack_req = p.last || cursor_ + 1 == static_cast<size_t>(cfg_.window);
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
    if (packets_.front().last) done.push_back(packets_.front().message);
    packets_.pop_front();
  }
  una_ = (una_ + static_cast<uint32_t>(n)) & Packetizer::kPsnMask;
  cursor_ = cursor_ > static_cast<size_t>(n) ? cursor_ - n : 0;
  high_ -= static_cast<size_t>(n);
  timer_.on_progress(now, high_ > 0);
}

void RcRequester::on_ack(uint32_t psn, Time now, std::vector<uint64_t>& done) {
  acknowledge(psn, now, done);
}

void RcRequester::on_nak(uint32_t psn, Time now, std::vector<uint64_t>& done) {
  ++naks_;
  acknowledge((psn - 1) & Packetizer::kPsnMask, now, done);
  // Go back: send again from the PSN the responder expects (now the oldest unacknowledged).
  if (psn_diff(psn, una_) == 0) cursor_ = 0;
}

Time RcRequester::on_timer(Time now, std::vector<uint64_t>& failed) {
  switch (timer_.check(now)) {
    case RetransmitTimer::Fired::kNo:
      break;
    case RetransmitTimer::Fired::kGiveUp:
      // Retries exhausted: every outstanding message fails (once per message).
      failed_ = true;
      for (const RcPacket& p : packets_)
        if (p.last) failed.push_back(p.message);
      packets_.clear();
      cursor_ = high_ = 0;
      break;
    case RetransmitTimer::Fired::kRetry:
      cursor_ = 0;  // go back to the oldest unacknowledged packet
      break;
  }
  return timer_.deadline();
}

RcResponder::RcResponder(const RcConfig& cfg, uint32_t first_psn)
    : cfg_(cfg), epsn_(first_psn & Packetizer::kPsnMask) {}

RcResponder::Outcome RcResponder::receive(uint32_t psn, bool ack_req) {
  Outcome o;
  const int32_t d = psn_diff(psn, epsn_);
  if (d == 0) {
    o.accepted = true;
    ++accepted_;
    epsn_ = (epsn_ + 1) & Packetizer::kPsnMask;
    nak_sent_ = false;
    if (++unacked_ >= cfg_.ack_every || ack_req) {
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
