#include "models/nic/rud_transport.h"
#include "models/common/fifo.h"

#include <algorithm>

namespace fabricsim::nic {

void RudConfig::visit(config::Visitor& v) {
  v.param("reorder_threshold", reorder_threshold, 64, 1, 1 << 20, "packets",
          "rud: a sent, unacknowledged packet is presumed lost (sent again) once this many "
          "packets posted after it have been acknowledged. Spraying reorders packets by up to "
          "the paths' queue differences, so a hole is not a loss at once; a lost packet with "
          "fewer behind it waits for the timeout (or a NACK, with trimming). 64: on a k = 4 fat "
          "tree of 800G (validation nic_spray) 16 resent 7,549 packets that were only late "
          "(0.80 of the ideal goodput against 0.95).");
}

RudRequester::RudRequester(const RcConfig& rc, const RudConfig& cfg, uint32_t first_psn)
    : SendWindow(rc, first_psn), cfg_(cfg) {}

void RudRequester::post_packet(uint64_t message, const TxPacket& pkt, bool last, uint32_t digest,
                               uint8_t tc) {
  packets_.push_back(SendEntry{RcPacket(pkt, message, last, 0, digest, tc)});
  const auto [it, fresh] = messages_.try_emplace(message);
  if (fresh) order_.push_back(message);
  Progress& m = it->second;
  ++m.outstanding;
  m.all_posted = last;
}

void RudRequester::queue_lost(size_t i, bool force) {
  SendEntry& e = packets_[i];
  if (e.acked || e.queued || (e.resent && !force)) return;
  e.queued = true;
  lost_.push_back(e.p.pkt.psn);
}

std::optional<uint32_t> RudRequester::peek() const {
  if (failed_) return std::nullopt;
  if (const SendEntry* e =
          first_lost(lost_, una_, high_, packets_, [](const SendEntry& x) { return !x.acked; }))
    return e->p.pkt.frame();
  if (!may_send_new()) return std::nullopt;
  return packets_[high_].p.pkt.frame();
}

std::optional<RcPacket> RudRequester::next(Time now) {
  if (failed_) return std::nullopt;
  if (SendEntry* e = take_lost([](const SendEntry& x) { return x.acked; })) {
    resend(*e, now);
    return e->p;
  }
  if (!may_send_new()) return std::nullopt;
  packets_[high_].p.sent = now;
  const RcPacket p = packets_[high_].p;
  ++high_;
  count_send(now);
  return p;
}

bool RudRequester::acknowledge(size_t i, std::vector<uint64_t>& done) {
  SendEntry& e = packets_[i];
  if (e.acked) return false;
  e.acked = true;
  acked_bytes_ += e.p.pkt.payload;
  if (acked_sent_ == Time::max() || e.p.sent > acked_sent_) acked_sent_ = e.p.sent;
  const auto it = messages_.find(e.p.message);
  if (--it->second.outstanding == 0 && it->second.all_posted && order_.front() == e.p.message)
    complete_in_order(done);
  return true;
}

void RudRequester::complete_in_order(std::vector<uint64_t>& done) {
  while (!order_.empty()) {
    const auto it = messages_.find(order_.front());
    if (it->second.outstanding != 0 || !it->second.all_posted) return;
    done.push_back(it->first);
    messages_.erase(it);
    order_.pop_front();
  }
}

void RudRequester::settle(bool any, Time now) {
  // The acknowledged front leaves the window.
  size_t n = 0;
  while (n < high_ && packets_[n].acked) ++n;
  for (size_t k = 0; k < n; ++k) packets_.pop_front();
  una_ = (una_ + static_cast<uint32_t>(n)) & Packetizer::kPsnMask;
  high_ -= n;
  if (!any) return;
  bool unacked = false;
  for (size_t k = 0; k < high_ && !unacked; ++k) unacked = !packets_[k].acked;
  timer_.on_progress(now, unacked);
  // The reorder allowance: a hole with reorder_threshold acknowledged packets after it is lost.
  int64_t later = 0;
  for (size_t i = high_; i-- > 0;) {
    if (packets_[i].acked)
      ++later;
    else if (later >= cfg_.reorder_threshold && !packets_[i].resent && !packets_[i].queued) {
      ++presumed_lost_;
      queue_lost(i, false);
    }
  }
}

void RudRequester::on_sack(const RudSack& s, Time now, std::vector<uint64_t>& done) {
  acked_sent_ = Time::max();
  acked_bytes_ = 0;
  bool any = false;
  // Everything up to cum, if within what was sent.
  const int32_t n = psn_diff(s.cum, una_) + 1;
  if (n > 0 && static_cast<size_t>(n) <= high_)
    for (int32_t k = 0; k < n; ++k) any |= acknowledge(static_cast<size_t>(k), done);
  const uint32_t base = s.base();
  for (uint32_t b = 0; b < kSackBits; ++b) {
    if (!((s.bitmap >> b) & 1)) continue;
    const int32_t i = psn_diff((base + b) & Packetizer::kPsnMask, una_);
    if (i < 0 || static_cast<size_t>(i) >= high_) continue;
    any |= acknowledge(static_cast<size_t>(i), done);
  }
  settle(any, now);
}

void RudRequester::on_nack(uint32_t psn, uint32_t cum, Time now, std::vector<uint64_t>& done) {
  acked_sent_ = Time::max();
  acked_bytes_ = nacked_bytes_ = 0;
  bool any = false;
  const int32_t n = psn_diff(cum, una_) + 1;
  if (n > 0 && static_cast<size_t>(n) <= high_)
    for (int32_t k = 0; k < n; ++k) any |= acknowledge(static_cast<size_t>(k), done);
  settle(any, now);
  const int32_t i = psn_diff(psn, una_);
  if (i < 0 || static_cast<size_t>(i) >= high_) return;
  // Trimmed: it is known lost, so it goes again even if it was resent in this recovery.
  ++nacked_;
  nacked_bytes_ = packets_[static_cast<size_t>(i)].p.pkt.payload;
  queue_lost(static_cast<size_t>(i), true);
}

Time RudRequester::on_timer(Time now, std::vector<uint64_t>& failed) {
  switch (timer_.check(now)) {
    case RetransmitTimer::Fired::kNo:
      break;
    case RetransmitTimer::Fired::kGiveUp:
      // Every message wholly posted and not completed, those acknowledged but waiting behind
      // an earlier one included (one still being posted fails with the QP: Nic::fail_qp).
      for (; !order_.empty(); order_.pop_front())
        if (messages_[order_.front()].all_posted) failed.push_back(order_.front());
      drop_all();
      messages_.clear();
      break;
    case RetransmitTimer::Fired::kRetry:
      // A new recovery: everything sent and not acknowledged goes again.
      requeue_sent([this](size_t i) { queue_lost(i, false); });
      break;
  }
  return timer_.deadline();
}

RudResponder::RudResponder(const RcConfig& rc, uint32_t first_psn)
    : epsn_(first_psn & Packetizer::kPsnMask),
      range_(static_cast<uint32_t>(rc.window_for(false))),
      ahead_((range_ + 63) / 64, 0) {}

RudSack RudResponder::sack(uint32_t psn) const {
  RudSack s;
  s.cum = (epsn_ - 1) & Packetizer::kPsnMask;
  // The block holding `psn` (block 0 if it is in order now, or behind).
  const int32_t d = psn_diff(psn, epsn_);
  s.block = d > 0 ? std::min<uint32_t>(static_cast<uint32_t>(d) / RudRequester::kSackBits,
                                       RudRequester::kMaxBlocks - 1)
                  : 0;
  const uint32_t first = s.block * RudRequester::kSackBits;
  for (uint32_t b = 0; b < RudRequester::kSackBits; ++b)
    if (placed_at(first + b)) s.bitmap |= 1u << b;
  return s;
}

RudResponder::Outcome RudResponder::via(const PsnTrackerIn& in) {
  const PsnTrackerOut h = hw_->tick(in);
  placed_ += h.placed;
  duplicates_ += h.duplicate;
  out_of_order_ += h.out_of_order;
  trimmed_ += h.trimmed;
  epsn_ = hw_->expected();
  for (size_t w = 0; w < ahead_.size(); ++w)
    ahead_[w] = w < PsnTrackerIf::kWords ? hw_->ahead(static_cast<int>(w)) : 0;
  Outcome o;
  o.placed = h.placed;
  o.delivered = h.delivered;
  o.reply = h.reply != 0;
  o.nack = h.reply == 2;
  if (o.reply) o.sack = RudSack{h.cum, h.block, static_cast<uint32_t>(h.bitmap)};
  return o;
}

RudResponder::Outcome RudResponder::receive(uint32_t psn, bool trimmed) {
  if (hw_) return via(PsnTrackerIn{true, false, psn, trimmed, 1});
  Outcome o;
  const int32_t d = psn_diff(psn, epsn_);
  const auto range = static_cast<int32_t>(range_);
  if (d < 0 || (d > 0 && d <= range && placed_at(static_cast<uint32_t>(d)))) {
    ++duplicates_;  // placed already (a resend that crossed its ACK): say so again
    o.reply = true;
    o.sack = sack(psn);
    return o;
  }
  if (d > range) return o;  // beyond any window the requester may have: cannot be
  if (trimmed) {
    ++trimmed_;
    o.reply = o.nack = true;
    o.sack = sack(psn);
    return o;
  }
  o.placed = true;
  ++placed_;
  o.reply = true;
  if (d > 0) {
    ++out_of_order_;
    ahead_[static_cast<size_t>(d - 1) >> 6] |= 1ull << ((d - 1) & 63);
    o.sack = sack(psn);
    return o;
  }
  // In order: move over it and over what had arrived beyond it.
  for (;;) {
    epsn_ = (epsn_ + 1) & Packetizer::kPsnMask;
    ++o.delivered;
    const bool next = ahead_[0] & 1;
    for (size_t w = 0; w < ahead_.size(); ++w) {
      ahead_[w] >>= 1;
      if (w + 1 < ahead_.size()) ahead_[w] |= (ahead_[w + 1] & 1) << 63;
    }
    if (!next) break;
  }
  o.sack = sack(psn);
  return o;
}

}  // namespace fabricsim::nic
