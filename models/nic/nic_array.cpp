#include "models/nic/nic_array.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

namespace fabricsim::nic {

NicArray::NicArray(const NicConfig& cfg, const std::vector<BitRate>& line_rates, bool ect,
                   std::unique_ptr<MessageSource> source, bool entropy)
    : bound_for_(line_rates.size(), 0),
      source_(std::move(source)),
      queued_(line_rates.size(), Time::max()) {
  for (size_t h = 0; h < line_rates.size(); ++h)
    nics_.push_back(std::make_unique<Nic>(static_cast<int>(h), static_cast<int>(line_rates.size()),
                                          cfg, line_rates[h], ect, entropy));
  for (auto& n : nics_) n->share_reths(&reths_);
  if (source_) {
    total_ = source_->total();
    have_next_ = source_->next(next_);
  }
}

NicArray::NicArray(const NicConfig& cfg, const std::vector<BitRate>& line_rates, bool ect,
                   std::unique_ptr<MessageDriver> driver, bool entropy)
    : NicArray(cfg, line_rates, ect, std::unique_ptr<MessageSource>(), entropy) {
  driver_ = std::move(driver);
  total_ = driver_->total();
  for (auto& n : nics_) n->notify();
}

namespace {
// A message's identity at both ends: (source, destination, QP index, its position on the QP).
uint64_t message_key(int src, int dst, int qp, uint64_t seq) {
  return (static_cast<uint64_t>(src) << 48) ^ (static_cast<uint64_t>(dst) << 32) ^
         (static_cast<uint64_t>(qp) << 24) ^ seq;
}
}  // namespace

void NicArray::post(const Message& m, Time now) {
  post_to_nic(m, now);
  const Nic& n = *nics_[m.src];
  ids_[message_key(m.src, m.dst, m.qp, n.sent().back().seq)] = m.id;
  schedule(m.src, now);
}

void NicArray::take_notices(int h) {
  nics_[h]->take_notices(done_scratch_, rx_scratch_);
  for (uint32_t i : done_scratch_) {
    const SentMessage& s = nics_[h]->sent()[i];
    notices_.push({s.completion, notice_seq_++, s.m.id, false});
  }
  for (uint32_t i : rx_scratch_) {
    const ReceivedMessage& r = nics_[h]->received()[i];
    const auto it = ids_.find(message_key(r.src, h, r.qp_index, r.seq));
    if (it == ids_.end()) continue;  // (the integrity check reports a delivery nobody posted)
    notices_.push({r.completion, notice_seq_++, it->second, true});
    ids_.erase(it);
  }
}

void NicArray::match_received(int h) {
  Nic& n = *nics_[h];
  if (n.received().empty()) return;
  for (const ReceivedMessage& r : n.received()) {
    ++delivered_;
    if (r.src < 0 || static_cast<size_t>(r.src) >= nics_.size()) continue;
    SentMessage* s = nics_[r.src]->take_unmatched(h, r.qp_index, r.seq);
    if (!s) continue;  // (check() counts it: delivered that no sender posted, or twice)
    ++matched_;
    s->delivered = r.delivered;
    // The sender's sum is worked out here, for what was delivered whole: as much work as its
    // packets were (a part delivered is a violation without it).
    const bool whole = r.bytes == s->m.bytes;
    s->rx = !whole                       ? SentMessage::Rx::kShort
            : r.checksum != checksum(*s) ? SentMessage::Rx::kBadSum
                                         : SentMessage::Rx::kIntact;
    if (s->rx != SentMessage::Rx::kIntact) not_intact_[s->m.id] = {r.bytes, r.checksum};
  }
  n.clear_received();
}

void NicArray::receive(int h, const Packet& p, Time t) {
  nics_[h]->receive(p, t);
  touch(h, t);
}

void NicArray::receive_int(int h, const Packet& p, const IntStack& tel, Time t) {
  nics_[h]->receive_int(p, tel, t);
  touch(h, t);
}

void NicArray::touch(int h, Time now) {
  Nic& n = *nics_[h];
  n.run(now);
  // Frames go while the MAC takes them at once; otherwise a look when it is free (or when it
  // says, through tx_ready, that flow control let its waiting frames go).
  for (;;) {
    const Time free = ports_->tx_free(h, now);
    if (free > now) {
      if (free != Time::max()) n.wake_tx(free);
      break;
    }
    Packet p;
    IntStack tel;
    bool has_tel = false;
    if (!n.next_frame(now, p, tel, has_tel)) break;
    if (has_tel)
      ports_->send_int(h, p, tel, now);
    else
      ports_->send(h, p, now);
  }
  if (driver_) take_notices(h);
  match_received(h);
  schedule(h, n.next_event());
}

void NicArray::schedule(int h, Time t) {
  if (t >= queued_[h]) return;
  queued_[h] = t;
  if (t >= window_end_) wakes_.push({t, int64_t{h}});
}

bool NicArray::window_safe() const {
  if (stopped_ || next_sample_ != Time::max() || (source_ && have_next_)) return false;
  return !driver_ || (driver_started_ && driver_->first_unposted() == UINT64_MAX);
}

void NicArray::begin_window(Time end, std::vector<int>& hosts) {
  window_end_ = end;
  while (!wakes_.empty() && wakes_.top().first < end) {
    const auto [t, w] = wakes_.top();
    wakes_.pop();
    if (t == queued_[w]) hosts.push_back(static_cast<int>(w));  // (else superseded)
  }
}

void NicArray::run_host(int h, Time now) {
  // As run()'s pass over the wake-ups due, for NIC h alone.
  while (queued_[h] <= now) {
    queued_[h] = Time::max();
    touch(h, now);
  }
}

Time NicArray::end_window(Time end) {
  window_end_ = Time();
  if (driver_) {
    // What the NICs told the driver, in time order (it posts no more: each only ends work).
    tell_driver(end);
    driver_next_ = driver_->run(end - Time::fs(1));
  }
  return next_time();
}

bool NicArray::tell_driver(Time before) {
  bool told = false;
  while (!notices_.empty() && notices_.top().t < before) {
    const Notice x = notices_.top();
    notices_.pop();
    if (x.delivered)
      driver_->delivered(x.id, x.t);
    else
      driver_->completed(x.id, x.t);
    told = true;
  }
  return told;
}

Time NicArray::run(Time now) {
  if (driver_ && !driver_started_) {
    driver_started_ = true;
    driver_->start(*this, now);
  }
  // The driver's notices due, its own work, and the NICs it made busy, until nothing is due.
  for (bool busy = true; driver_ && busy;) {
    busy = tell_driver(now + Time::fs(1));
    driver_next_ = driver_->run(now);
    while (!wakes_.empty() && wakes_.top().first <= now) {
      const auto [t, w] = wakes_.top();
      wakes_.pop();
      const int h = static_cast<int>(w);
      if (t != queued_[h]) continue;
      queued_[h] = Time::max();
      touch(h, now);
      busy = true;
    }
  }
  while (have_next_ && next_.start <= now && !stopped_) {
    post_to_nic(next_, now);
    const int src = next_.src;
    have_next_ = source_->next(next_);
    touch(src, now);
  }
  while (!wakes_.empty() && wakes_.top().first <= now) {
    const auto [t, w] = wakes_.top();
    wakes_.pop();
    const int h = static_cast<int>(w);
    if (t != queued_[h]) continue;  // superseded by an earlier one
    queued_[h] = Time::max();
    touch(h, now);
  }
  while (next_sample_ <= now) {
    for (size_t h = 0; h < nics_.size(); ++h) {
      scratch_.clear();
      nics_[h]->qp_rates(next_sample_, scratch_);
      for (auto& q : scratch_) {
        if (rate_rows_.size() >= rate_max_rows_) {
          ++rate_rows_dropped_;
          continue;
        }
        rate_rows_.push_back({next_sample_, static_cast<int32_t>(h), std::move(q)});
      }
    }
    next_sample_ = stopped_ ? Time::max() : next_sample_ + rate_interval_;
  }
  return next_time();
}

Time NicArray::next_time() const {
  Time next = wakes_.empty() ? Time::max() : wakes_.top().first;
  if (have_next_ && !stopped_) next = std::min(next, next_.start);
  if (driver_) {
    next = std::min(next, driver_next_);
    if (!notices_.empty()) next = std::min(next, notices_.top().t);
  }
  return std::min(next, next_sample_);
}

Time NicArray::done_not_before(Time now) const {
  if (driver_ || nics_.empty()) return now;
  Time sent = now;
  bool fired = false;
  // (One packet may be on its way in. Bytes in the receive pipeline are not counted yet, but
  // the work cannot end before they leave it, which takes at least their time at line rate.)
  const uint64_t in_way = nics_.front()->config().packet.mtu.count();
  for (size_t h = 0; h < nics_.size(); ++h) {
    const Nic& n = *nics_[h];
    fired = fired || n.timeouts_so_far() > 0;
    uint64_t b = n.unsent_bytes();
    // (Duplicates count as arrived: the bound only gets lower.)
    if (bound_for_[h] > n.arrived_payload() + in_way)
      b = std::max(b, bound_for_[h] - n.arrived_payload() - in_way);
    const Time left = n.line_rate().serialization(Bytes(b));
    sent = std::max(sent, now + left);
  }
  // A failure ends a message without its bytes: it needs retry_count + 1 expiries in a row of
  // a timer re-armed to rto() after each (rc_transport.h), the first one at `now` at the
  // earliest when none has fired yet.
  const RcConfig& rc = nics_.front()->config().rc;
  const Time rto = rc.rto();
  const Time fail = fired || rc.retry_count == 0 ? now
                    : rto.as_fs() > (Time::max() - now).as_fs() / rc.retry_count
                        ? Time::max()
                        : now + rto * rc.retry_count;
  const Time lb = std::min(sent, fail);
  return have_next_ && !stopped_ ? std::max(lb, next_.start) : lb;
}

uint64_t NicArray::outstanding() const {
  uint64_t n = 0;
  for (const auto& nic : nics_) n += nic->outstanding();
  return n;
}

NicArray::Progress NicArray::progress() const {
  Progress p;
  for (const auto& nic : nics_) {
    const Nic::Stats& s = nic->own_counters();
    p.posted += s.posted;
    p.completed += s.completed;
    p.failed += s.failed;
    p.bytes_posted += s.bytes_posted;
    p.bytes_completed += s.bytes_completed;
    p.payload_arrived += nic->arrived_payload();
  }
  return p;
}

Nic::Stats NicArray::totals() const {
  Nic::Stats t;
  for (const auto& nic : nics_) {
    const Nic::Stats s = nic->stats();
    t.posted += s.posted;
    t.completed += s.completed;
    t.failed += s.failed;
    t.bytes_posted += s.bytes_posted;
    t.bytes_completed += s.bytes_completed;
    t.bytes_delivered += s.bytes_delivered;
    t.messages_delivered += s.messages_delivered;
    t.data_packets += s.data_packets;
    t.retransmitted += s.retransmitted;
    t.control_packets += s.control_packets;
    t.acks_sent += s.acks_sent;
    t.naks_sent += s.naks_sent;
    t.acks_received += s.acks_received;
    t.naks_received += s.naks_received;
    t.cnps_sent += s.cnps_sent;
    t.cnps_received += s.cnps_received;
    t.timeouts += s.timeouts;
    t.out_of_order += s.out_of_order;
    t.duplicates += s.duplicates;
    t.wqe_fetches += s.wqe_fetches;
    t.read_requests += s.read_requests;
    t.read_responses += s.read_responses;
    t.read_responses_dropped += s.read_responses_dropped;
    t.trimmed_received += s.trimmed_received;
    t.nacks_received += s.nacks_received;
    t.presumed_lost += s.presumed_lost;
  }
  return t;
}

void NicArray::post_to_nic(const Message& m, Time now) {
  nics_[m.src]->post(m, now);
  bound_for_[static_cast<size_t>(m.verb == Verb::kRead ? m.src : m.dst)] += m.bytes;
  ++posted_;
  note_posted(m.src);
}

void NicArray::note_posted(int src) {
  if (!fct_order_) return;
  const auto index = static_cast<uint32_t>(nics_[src]->sent().size() - 1);
  unstreamed_.push({nics_[src]->sent().back().m.id, src, index});
}

void NicArray::stream_fct(const std::function<void(const Fct&)>& f) {
  const uint64_t floor = driver_                   ? driver_->first_unposted()
                         : have_next_ && !stopped_ ? next_.id
                                                   : UINT64_MAX;
  Fct row;
  while (!unstreamed_.empty() && unstreamed_.top().id < floor) {
    const Posted p = unstreamed_.top();
    const SentMessage& s = nics_[p.nic]->sent()[p.index];
    if (s.state != SentMessage::State::kDone || s.rx != SentMessage::Rx::kIntact) break;
    row.sent = &s;
    row.received =
        Delivered{s.m.src, static_cast<uint16_t>(s.m.qp), s.seq, s.m.bytes, 0, s.delivered};
    f(row);
    nics_[p.nic]->release(p.index);
    unstreamed_.pop();
    ++streamed_;
  }
}

void NicArray::for_each_fct(const std::function<void(const Fct&)>& f, bool sums) const {
  // (NIC, index) of every record held, in id order: 8 B a message.
  std::vector<std::pair<int32_t, uint32_t>> order;
  order.reserve(posted_ - streamed_);
  for (size_t h = 0; h < nics_.size(); ++h)
    nics_[h]->sent().for_each_held([&order, h](size_t i, const SentMessage&) {
      order.emplace_back(static_cast<int32_t>(h), static_cast<uint32_t>(i));
    });
  auto rec = [this](const std::pair<int32_t, uint32_t>& x) -> const SentMessage& {
    return nics_[x.first]->sent()[x.second];
  };
  std::sort(order.begin(), order.end(),
            [&rec](const auto& a, const auto& b) { return rec(a).m.id < rec(b).m.id; });
  Fct row;
  for (const auto& x : order) {
    const SentMessage* s = &rec(x);
    row.sent = s;
    row.received.reset();
    const Nic& n = *nics_[x.first];
    if (s->m.verb == Verb::kRead) {  // placed at its requester, this NIC
      if (const ReceivedMessage* r = n.placed_read(x.second))
        row.received = Delivered{r->src, r->qp_index, r->seq, r->bytes, r->checksum, r->delivered};
    } else if (s->rx != SentMessage::Rx::kNone) {
      Delivered d{s->m.src, static_cast<uint16_t>(s->m.qp), s->seq, s->m.bytes, 0, s->delivered};
      if (s->rx != SentMessage::Rx::kIntact)
        std::tie(d.bytes, d.checksum) = not_intact_.at(s->m.id);
      else if (sums)
        d.checksum = checksum(*s);
      row.received = d;
    }
    f(row);
  }
}

std::vector<NicArray::Fct> NicArray::fct() const {
  std::vector<Fct> rows;
  rows.reserve(posted_);
  for_each_fct([&rows](const Fct& r) { rows.push_back(r); }, true);
  return rows;
}

void NicArray::check(std::vector<std::string>& violations, size_t max_listed) const {
  size_t bad = 0;
  auto report = [&](const std::string& m) {
    if (++bad <= max_listed) violations.push_back(m);
  };
  for_each_fct(
      [&](const Fct& f) {
        const SentMessage& s = *f.sent;
        if (f.received) {
          // (Matched as delivered, match_received; a READ's record is its requester's own.)
          const bool whole = f.received->bytes == s.m.bytes;
          const bool intact = s.m.verb == Verb::kRead ? whole && f.received->checksum == checksum(s)
                                                      : s.rx == SentMessage::Rx::kIntact;
          if (!whole)
            report(fmt::format(
                "nic: message {} ({} -> {}, {} B) arrived with {} B: its data was lost, "
                "duplicated or misplaced",
                s.m.id, s.m.src, s.m.dst, s.m.bytes, f.received->bytes));
          else if (!intact)
            report(fmt::format(
                "nic: message {} ({} -> {}, {} B) arrived with checksum {:016x}, sent with "
                "checksum {:016x}: its data was lost, duplicated or misplaced",
                s.m.id, s.m.src, s.m.dst, s.m.bytes, f.received->checksum, checksum(s)));
        } else if (s.state == SentMessage::State::kDone) {
          report(
              fmt::format("nic: message {} ({} -> {}) completed at its sender but was never "
                          "delivered",
                          s.m.id, s.m.src, s.m.dst));
        }
      },
      false);
  if (delivered_ != matched_)
    report(
        fmt::format("nic: {} messages were delivered that no sender posted (or delivered "
                    "twice)",
                    delivered_ - matched_));
  if (bad > max_listed)
    violations.push_back(fmt::format("nic: {} more messages failed the check", bad - max_listed));
}

void NicArray::check_done(std::vector<std::string>& violations, const std::string& when,
                          size_t max_ids) const {
  std::vector<uint64_t> failed, unfinished;
  for (const auto& n : nics_)  // (a record released was done)
    n->sent().for_each_held([&](size_t, const SentMessage& s) {
      if (s.state == SentMessage::State::kFailed)
        failed.push_back(s.m.id);
      else if (s.state != SentMessage::State::kDone)
        unfinished.push_back(s.m.id);
    });
  auto ids = [max_ids](std::vector<uint64_t>& v) {
    std::sort(v.begin(), v.end());
    std::string out;
    for (size_t i = 0; i < std::min(v.size(), max_ids); ++i)
      out += (i ? ", " : "") + std::to_string(v[i]);
    return out + (v.size() > max_ids ? ", ..." : "");
  };
  if (!failed.empty())
    violations.push_back(
        fmt::format("nic: {} of {} messages failed: their QPs gave up after nic.rc.retry_count "
                    "retransmission timeouts (ids {}; fct.csv's state column lists them all)",
                    failed.size(), posted_, ids(failed)));
  if (!unfinished.empty())
    violations.push_back(
        fmt::format("nic: {} of {} messages unfinished when the run ended {} (ids {})",
                    unfinished.size(), posted_, when, ids(unfinished)));
}

}  // namespace fabricsim::nic
