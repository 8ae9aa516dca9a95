#include "models/nic/rc_selective.h"

#include <algorithm>

namespace fabricsim::nic {

SrRequester::SrRequester(const RcConfig& cfg, uint32_t first_psn)
    : SendWindow(cfg, first_psn), cfg_(cfg) {}

void SrRequester::post(uint64_t message, const std::vector<TxPacket>& pkts) {
  for (size_t i = 0; i < pkts.size(); ++i)
    packets_.push_back(SendEntry{RcPacket(pkts[i], message, i + 1 == pkts.size())});
}

void SrRequester::queue_lost(size_t i) {
  SendEntry& e = packets_[i];
  if (e.acked || e.queued || e.resent) return;
  e.queued = true;
  lost_.push_back(e.p.pkt.psn);
}

std::optional<uint32_t> SrRequester::peek() const {
  if (failed_) return std::nullopt;
  if (const SendEntry* e = first_lost(lost_, una_, high_, packets_,
                                      [](const SendEntry& x) { return !x.acked && !x.resent; }))
    return e->p.pkt.frame();
  if (!may_send_new() || new_read_blocked()) return std::nullopt;
  return packets_[high_].p.pkt.frame();
}

std::optional<RcPacket> SrRequester::next(Time now) {
  if (failed_) return std::nullopt;
  // (resent: asked for by a READ request just sent.)
  size_t i = 0;
  if (SendEntry* lost = take_lost([](const SendEntry& e) { return e.acked || e.resent; }, &i)) {
    SendEntry& e = *lost;
    resend(e, now);
    RcPacket p = e.p;
    p.ack_req = true;  // a retransmission asks for the news at once
    if (p.read_left) {
      // A READ's lost response (or its lost request): a request for it and for the lost ones
      // right after it in the READ (at most 255: the span field's width).
      uint32_t span = 1;
      for (size_t k = i + 1; span < 255 && span < p.read_left && k < high_ && packets_[k].queued &&
                             !packets_[k].acked;
           ++k, ++span)
        packets_[k].resent = true;
      p.span = span;
      p.ack_req = false;
    }
    return p;
  }
  if (!may_send_new() || new_read_blocked()) return std::nullopt;
  packets_[high_].p.sent = now;
  RcPacket p = packets_[high_].p;
  if (p.read_left) {  // a READ request: its PSNs are sent with it
    p.span = 0;
    high_ += p.read_left;
    ++reads_sent_;
    count_send(now);
    return p;
  }
  p.ack_req = p.last || high_ + 1 == window_;
  ++high_;
  count_send(now);
  return p;
}

void SrRequester::on_sack(uint32_t cum, uint32_t sacked, Time now, std::vector<uint64_t>& done) {
  cumulative(cum, now, done);
  // (The responder SACKs data packets only: a READ's PSNs below it unanswered are lost.)
  const int32_t i = psn_diff(sacked, una_);
  if (i < 0 || static_cast<size_t>(i) >= high_) return;
  packets_[static_cast<size_t>(i)].acked = true;
  for (int32_t k = 0; k < i; ++k) queue_lost(static_cast<size_t>(k));
}

void SrRequester::cumulative(uint32_t cum, Time now, std::vector<uint64_t>& done) {
  // Everything up to cum, if within what was sent.
  acked_sent_ = Time::max();
  int32_t n = psn_diff(cum, una_) + 1;
  if (n <= 0 || static_cast<size_t>(n) > high_) return;
  if (!reads_.empty()) {
    // A READ is acknowledged only by its responses: an ACK past one not wholly answered (the
    // responder sends ACKs behind a READ's responses, so they were lost) acknowledges what
    // precedes it, marks what follows it, and its missing responses are lost.
    const int32_t limit = std::max(0, psn_diff(reads_.front(), una_));
    if (n > limit) {
      for (int32_t k = limit; k < n; ++k) {
        SendEntry& e = packets_[static_cast<size_t>(k)];
        if (!e.p.read_left)
          e.acked = true;
        else if (!e.acked)
          queue_lost(static_cast<size_t>(k));
      }
      n = limit;
    }
  }
  acknowledge(n, now, done);
}

void SrRequester::acknowledge(int32_t n, Time now, std::vector<uint64_t>& done) {
  if (n <= 0) return;
  acked_sent_ = packets_[static_cast<size_t>(n - 1)].p.sent;
  for (int32_t k = 0; k < n; ++k) {
    const SendEntry& f = packets_.front();
    if (f.p.last) done.push_back(f.p.message);
    if (f.p.read_left == 1) {
      reads_.pop_front();
      --reads_sent_;
    }
    packets_.pop_front();
  }
  una_ = (una_ + static_cast<uint32_t>(n)) & Packetizer::kPsnMask;
  high_ -= static_cast<size_t>(n);
  timer_.on_progress(now, high_ > 0);
}

bool SrRequester::on_read_response(uint32_t psn, Time now, std::vector<uint64_t>& done,
                                   uint64_t& message) {
  int32_t i = psn_diff(psn, una_);
  if (i < 0 || static_cast<size_t>(i) >= high_) return false;  // answered already, or not asked
  if (!packets_[static_cast<size_t>(i)].p.read_left || packets_[static_cast<size_t>(i)].acked)
    return false;  // not a READ's PSN, or its response came already
  // The responder executed the READ: it had everything before it (acknowledged), but an earlier
  // READ is answered only by its responses, and the responses it sent before this one, of this
  // READ or an earlier one, that have not come were lost.
  const int32_t start = psn_diff(read_start(reads_, psn), una_);
  for (int32_t k = 0; k < i; ++k) {
    SendEntry& b = packets_[static_cast<size_t>(k)];
    if (k < start && !b.p.read_left)
      b.acked = true;
    else
      queue_lost(static_cast<size_t>(k));
  }
  SendEntry& e = packets_[static_cast<size_t>(i)];
  e.acked = true;
  message = e.p.message;
  // A response taken is progress (IBA restarts the timer on every valid response), though the
  // cumulative PSN may not move: a data packet before it may wait for its ACK behind the
  // responder's responses, which the timer must not count against it.
  timer_.on_progress(now, true);
  // Move over what is answered or acknowledged at the front.
  int32_t n = 0;
  while (static_cast<size_t>(n) < high_ && packets_[static_cast<size_t>(n)].acked) ++n;
  acknowledge(n, now, done);
  return true;
}

void SrRequester::on_reply(const Sack& s, Time now, std::vector<uint64_t>& done) {
  cumulative(s.cum, now, done);
  // Selective part: mark what the bitmap says arrived; below the highest of those, the rest is
  // lost.
  size_t highest = 0;
  bool any = false;
  for (uint32_t b = 0; b < 64; ++b) {
    if (!((s.bitmap >> b) & 1)) continue;
    const int32_t i = psn_diff((s.cum + 1 + b) & Packetizer::kPsnMask, una_);
    if (i < 0 || static_cast<size_t>(i) >= high_) continue;
    packets_[static_cast<size_t>(i)].acked = true;
    highest = static_cast<size_t>(i);
    any = true;
  }
  if (any)
    for (size_t i = 0; i < highest; ++i) queue_lost(i);
}

Time SrRequester::on_timer(Time now, std::vector<uint64_t>& failed) {
  switch (timer_.check(now)) {
    case RetransmitTimer::Fired::kNo:
      break;
    case RetransmitTimer::Fired::kGiveUp:
      for (const SendEntry& e : packets_)
        if (e.p.last) failed.push_back(e.p.message);
      drop_all();
      reads_.clear();
      reads_sent_ = 0;
      break;
    case RetransmitTimer::Fired::kRetry:
      // A new recovery: everything sent and not SACKed goes again.
      requeue_sent([this](size_t i) { queue_lost(i); });
      break;
  }
  return timer_.deadline();
}

SrResponder::SrResponder(const RcConfig& cfg, uint32_t first_psn)
    : cfg_(cfg),
      epsn_(first_psn & Packetizer::kPsnMask),
      range_(static_cast<uint32_t>(cfg.window_for(false))),
      ahead_((range_ + 63) / 64, 0) {}

Sack SrResponder::sack() const {
  // Bit 0 is the expected PSN itself (never received, or it would be cumulative); the bitmap
  // reports the next 63 PSNs (a wider placement range keeps the rest to itself).
  return Sack{(epsn_ - 1) & Packetizer::kPsnMask, ahead_[0] << 1};
}

void SrResponder::shift(uint32_t k) {
  const size_t words = ahead_.size(), ws = k / 64, bs = k % 64;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t lo = w + ws < words ? ahead_[w + ws] : 0;
    const uint64_t hi = w + ws + 1 < words ? ahead_[w + ws + 1] : 0;
    ahead_[w] = bs ? (lo >> bs) | (hi << (64 - bs)) : lo;
  }
}

SrResponder::Outcome SrResponder::via(const PsnTrackerIn& in) {
  const PsnTrackerOut h = hw_->tick(in);
  placed_ += h.placed;
  duplicates_ += h.duplicate;
  out_of_order_ += h.out_of_order;
  beyond_ += h.beyond;
  epsn_ = hw_->expected();
  for (size_t w = 0; w < ahead_.size(); ++w)
    ahead_[w] = w < PsnTrackerIf::kWords ? hw_->ahead(static_cast<int>(w)) : 0;
  unacked_ = hw_->unacked();
  Outcome o;
  o.placed = !in.read && h.placed;
  o.delivered = h.delivered;
  o.reply = static_cast<RcResponder::Reply>(h.reply);
  if (o.reply != RcResponder::Reply::kNone) o.sack = Sack{h.cum, h.bitmap};
  o.read = h.read;
  o.duplicate = in.read && h.duplicate;
  return o;
}

SrResponder::Outcome SrResponder::receive_read(uint32_t psn, uint32_t psns) {
  if (hw_) return via(PsnTrackerIn{true, true, psn, false, psns});
  Outcome o;
  const int32_t d = psn_diff(psn, epsn_);
  if (d < 0) {
    ++duplicates_;
    o.duplicate = true;
    return o;
  }
  if (d > 0) {
    ++out_of_order_;
    return o;
  }
  o.read = true;
  ++placed_;
  // Past the READ's PSNs (none of them is ever placed ahead), then over what came beyond.
  // (Bit i stands for PSN expected + 1 + i; while moving, bit 0 stands for the expected PSN.)
  epsn_ = (epsn_ + psns) & Packetizer::kPsnMask;
  shift(psns - 1);
  while (ahead_[0] & 1) {
    shift(1);
    epsn_ = (epsn_ + 1) & Packetizer::kPsnMask;
    ++o.delivered;
  }
  shift(1);
  if (o.delivered || holds_ahead()) {
    unacked_ = 0;
    o.reply = RcResponder::Reply::kAck;
    o.sack = sack();
  }
  return o;
}

SrResponder::Outcome SrResponder::receive(uint32_t psn, bool ack_req) {
  if (hw_) return via(PsnTrackerIn{true, false, psn, ack_req, 1});
  Outcome o;
  const int32_t d = psn_diff(psn, epsn_);
  const auto range = static_cast<int32_t>(range_);
  if (d < 0 || (d > 0 && d <= range && ahead(static_cast<uint32_t>(d - 1)))) {
    ++duplicates_;
    o.reply = RcResponder::Reply::kAck;
    o.sack = sack();
    return o;
  }
  if (d > range) {
    ++beyond_;  // cannot be placed: dropped, the requester will send it again
    return o;
  }
  o.placed = true;
  ++placed_;
  if (d > 0) {
    ++out_of_order_;
    ahead_[static_cast<size_t>(d - 1) >> 6] |= 1ull << ((d - 1) & 63);
    o.reply = RcResponder::Reply::kNak;
    o.sack = sack();
    return o;
  }
  // In order: move over it and over what had arrived beyond it.
  bool any = false;
  do {
    epsn_ = (epsn_ + 1) & Packetizer::kPsnMask;
    ++o.delivered;
    const bool next = ahead_[0] & 1;
    // Shift the bitmap down by one PSN, word by word.
    any = false;
    for (size_t w = 0; w < ahead_.size(); ++w) {
      ahead_[w] >>= 1;
      if (w + 1 < ahead_.size()) ahead_[w] |= (ahead_[w + 1] & 1) << 63;
      any |= ahead_[w] != 0;
    }
    if (!next) break;
  } while (true);
  unacked_ += o.delivered;
  if (unacked_ >= cfg_.ack_every || ack_req || any) {
    unacked_ = 0;
    o.reply = RcResponder::Reply::kAck;
    o.sack = sack();
  }
  return o;
}

}  // namespace fabricsim::nic
