#include "models/nic/nic.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "models/common/prefetch.h"
#include "models/nic/payload_digest.h"

namespace fabricsim::nic {

namespace {

constexpr uint64_t kWqeAddr = uint64_t{1} << 60;  // the send rings (addresses only split TLPs)
constexpr uint64_t kCqAddr = uint64_t{2} << 60;

Opcode work_opcode(Verb v) {
  switch (v) {
    case Verb::kSend:
      return Opcode::kSend;
    case Verb::kWriteImm:
      return Opcode::kRdmaWriteImm;
    default:
      return Opcode::kRdmaWrite;
  }
}

bool is_data(uint8_t op) {
  return op <= static_cast<uint8_t>(BthOpcode::kWriteOnlyImm);
}

// A receive CQE: SEND and RDMA WRITE with immediate complete at the receiver too.
bool receive_cqe(BthOpcode op) {
  return op != BthOpcode::kWriteLast && op != BthOpcode::kWriteOnly;
}

}  // namespace

Nic::Nic(int id, int hosts, const NicConfig& cfg, BitRate line_rate, bool ect, bool entropy)
    : id_(id),
      cfg_(cfg),
      line_(line_rate),
      ect_(ect),
      selective_(cfg.transport == "selective_repeat"),
      rud_(cfg.transport == "rud"),
      entropy_(entropy),
      packetizer_(cfg.packet),
      scheduler_(cfg.scheduler),
      cnp_(cfg.cnp_interval()),
      pcie_(cfg.pcie),
      memory_(cfg.memory),
      dma_(pcie_, memory_) {
  if (cfg.cc != "none") cc_entry_ = &CcRegistry::global().at(cfg.cc);
  if (cfg.crc_impl != link::Crc32Registry::kModel)
    crc_ = link::Crc32Registry::global().at(cfg.crc_impl).make();
  if (cc_entry_ && cc_entry_->telemetry) {
    int_header_ = true;
    packetizer_.add_header(IntStack::kWireBytes);
  }
  ack_each_ = cfg.ack_each_packet();
  ecn_echo_ = rud_ && cc_entry_ && cc_entry_->ecn_echo;
  ack_bytes_ = rud_ && cc_entry_ ? cc_entry_->ack_bytes : 0;
  // Up to 8,192 (peer, index) pairs (32 KB a NIC) the QPs are found by a table, beyond by hash.
  const int64_t pairs = int64_t{hosts} * cfg.qps_per_pair;
  if (pairs <= 8192) dense_.assign(static_cast<size_t>(pairs), kNoQp);
}

uint32_t Nic::qp_for(int32_t peer, uint16_t index) {
  const auto q = static_cast<uint32_t>(qps_.size());
  if (!dense_.empty()) {  // a direct table: one load on every packet's path
    uint32_t& slot = dense_[dense_slot(peer, index)];
    if (slot != kNoQp) return slot;
    slot = q;
  } else {
    const uint64_t key = static_cast<uint64_t>(peer) << 16 | index;
    const auto it = qp_index_.find(key);
    if (it != qp_index_.end()) return it->second;
    qp_index_.emplace(key, q);
  }
  qps_.emplace_back();
  Qp& qp = qps_.back();
  qp.peer = peer;
  qp.index = index;
  // The QP's entropy: RC keeps one (RoCE: the UDP source port of the QP, so a pair's QPs take
  // different paths); RUD starts its per-packet cycle there.
  if (entropy_)
    qp.entropy =
        static_cast<uint8_t>(mix((uint64_t{static_cast<uint32_t>(id_)} << 40) ^
                                 (uint64_t{qp.index} << 24) ^ static_cast<uint32_t>(peer)));
  if (selective_ || rud_) {
    if (rud_) {
      qp.req.emplace<RudRequester>(cfg_.rc, cfg_.rud, 0);
      qp.resp.emplace<RudResponder>(cfg_.rc, 0);
    } else {
      qp.req.emplace<SrRequester>(cfg_.rc, 0);
      qp.resp.emplace<SrResponder>(cfg_.rc, 0);
    }
  } else {
    qp.req.emplace<RcRequester>(cfg_.rc, 0);
    qp.resp.emplace<RcResponder>(cfg_.rc, 0);
  }
  qp.req_kind = static_cast<uint8_t>(qp.req.index());
  qp.resp_kind = static_cast<uint8_t>(qp.resp.index());
  if (cfg_.rx_impl != PsnTrackerRegistry::kModel) attach_tracker(qp);
  if (cc_entry_) {
    qp.cc = cc_entry_->make(cfg_.cc_params.at(cfg_.cc), line_);
    CcPath path = path_ ? path_(peer) : CcPath{};
    path.mtu = packetizer_.mtu();
    qp.cc->set_path(path);
  }
  scheduler_.add_qp(q);
  if (qp.cc && qp.cc->window()) update_rate(q);  // a window-based algorithm's first window
  return q;
}

void Nic::post(const Message& m, Time now) {
  // (The run's configuration refuses this at input; a program driving the NIC itself gets an
  // error, not a QP that never finishes its READ.)
  if (m.verb == Verb::kRead && cfg_.transport == "rud")
    throw std::invalid_argument("nic: RDMA READ posted on a RUD QP (RUD carries no READ)");
  SentMessage s;
  s.m = m;
  s.qp = qp_for(m.dst, static_cast<uint16_t>(m.qp));
  s.seq = qps_[s.qp].messages++;
  // (max_inline 0: none, a 0-byte message included.)
  s.inlined = cfg_.max_inline > 0 && m.bytes <= static_cast<uint64_t>(cfg_.max_inline) &&
              m.verb != Verb::kRead;
  sent_.push_back(s);
  ++stats_.posted;
  stats_.bytes_posted += m.bytes;
  if (m.verb != Verb::kRead) unsent_bytes_ += m.bytes;
  const auto msg = static_cast<uint32_t>(sent_.size() - 1);
  // (A READ's data is placed here, its record placed_read: no receiver's record to match.)
  qps_[s.qp].unmatched.push_back(m.verb == Verb::kRead ? kNoMsg : msg);
  if (!s.inlined) {
    // The driver rings the doorbell: an 8 B MMIO write to the NIC's BAR.
    const Time arrived = pcie_.send_tlp(tlm_host::PcieLink::kToDevice, now, 8).arrived;
    push(arrived + cfg_.doorbell_latency, Ev::kDoorbell, msg);
    return;
  }
  // Inline: the driver writes the WQE itself through the BAR, in 64 B write-combined blocks
  // (control and remote-address segments, 32 B; the inline header, 4 B; the data), and the NIC
  // takes it as it lands: no WQE fetch, no payload read.
  constexpr uint64_t kInlineHeader = 36, kBlock = 64;
  Time arrived = now;
  for (uint64_t b = 0; b < (kInlineHeader + m.bytes + kBlock - 1) / kBlock; ++b)
    arrived = pcie_.send_tlp(tlm_host::PcieLink::kToDevice, now, kBlock).arrived;
  ++inline_posts_;
  push(arrived + cfg_.doorbell_latency, Ev::kWqe, msg);
}

uint64_t Nic::checksum(const SentMessage& s) const {
  // (A READ's responses are cut as a WRITE's packets are: the same offsets and lengths.)
  const Message& m = s.m;
  uint64_t sum = 0;
  const uint64_t n = packetizer_.packets(m.bytes);
  for (uint64_t i = 0; i < n; ++i) {
    const TxPacket t = packetizer_.packet(work_opcode(m.verb), m.bytes, i, 0);
    sum += mix(digest(m.id, t.offset, t.payload));
  }
  return sum;
}

void Nic::prefetch_arrival(const Packet& p) const {
  if (dense_.empty() || p.src < 0) return;
  const WireHeader h = WireHeader::read(p);
  const size_t slot = dense_slot(p.src, h.qp);
  if (slot >= dense_.size() || dense_[slot] == kNoQp) return;
  const Qp& qp = qps_[dense_[slot]];
  if (is_data(h.opcode)) {  // its kinds and peer, then the receive side: message, responder
    __builtin_prefetch(&qp);
    prefetch_lines(&qp.rx_bytes, reinterpret_cast<const char*>(&qp.resp) + 64);
  } else if (h.opcode == kOpAck) {
    prefetch_send_side(qp);
  }
}

void Nic::prefetch_self() const {
  prefetch_object(*this);
}

void Nic::prefetch_send_side(const Qp& qp) {
  // Its first lines (kinds, timers, congestion control, the message being cut, its reads),
  // then the requester (go-back-N's: the shipped transport).
  prefetch_lines(&qp, reinterpret_cast<const char*>(&qp.req) + sizeof(RcRequester));
}

void Nic::prefetch_next_turn(uint32_t q) const {
  const uint32_t n = scheduler_.next_turn();
  if (n == q || n >= qps_.size()) return;
  scheduler_.prefetch(n);
  prefetch_send_side(qps_[n]);
}

void Nic::prefetch_next_event() const {
  if (events_.empty()) return;
  const Event& e = events_.top();
  if (e.kind == Ev::kPayload && e.arg < qps_.size()) prefetch_send_side(qps_[e.arg]);
}

void Nic::run(Time now) {
  while (!events_.empty() && events_.top().t <= now) {
    const Event e = events_.top();

    events_.pop();
    prefetch_next_event();
    switch (e.kind) {
      case Ev::kTx:
        if (e.t == tx_wake_) tx_wake_ = Time::max();
        break;  // the caller looks at the wire after run()
      case Ev::kDoorbell:
        // The WQE fetch: one 64 B read of the send ring.
        ++stats_.wqe_fetches;
        push(dma_.read(now, kWqeAddr + uint64_t{e.arg} * 64, 64, nullptr), Ev::kWqe, e.arg);
        break;
      case Ev::kWqe:
        on_wqe(e.arg, now);
        break;
      case Ev::kPayload:
        land_reads(e.arg, now);
        break;
      case Ev::kRto:
        if (qps_[e.arg].rto_at == e.t) on_rto(e.arg, now);
        break;
      case Ev::kCc:
        if (qps_[e.arg].cc_at == e.t) on_cc_timer(e.arg, now);
        break;
      case Ev::kResp:
        land_responses(e.arg, now);
        break;
      case Ev::kReadCqe:
        complete_read(e.arg, now);
        break;
      case Ev::kRx:
        while (!rx_pipe_.empty() && rx_pipe_.front().t <= now) {
          const Arriving a = rx_pipe_.front();
          rx_pipe_.pop_front();
          take(a.p, a.tel.hops == kNoStack ? nullptr : &a.tel, now);
        }
        if (!rx_pipe_.empty()) push(rx_pipe_.front().t, Ev::kRx, 0);
        break;
    }
  }
}

void Nic::on_wqe(uint32_t msg, Time now) {
  const uint32_t q = sent_[msg].qp;
  if (req_failed(qps_[q])) {
    complete(msg, false, now);
    return;
  }
  const Message& m = sent_[msg].m;
  const Cut c{msg, m.verb, static_cast<uint8_t>(m.tc), m.bytes, m.id, sent_[msg].inlined};
  Qp& qp = qps_[q];
  if (qp.cuts++ == 0)
    qp.cut = c;
  else
    qp.cuts_after.push_back(c);
  fill_reads(q, now);
}

void Nic::fill_reads(uint32_t q, Time now) {
  Qp& qp = qps_[q];
  // Payload reads, one per packet, while fewer than max_reads packets are read or reading and
  // not yet sent: the NIC fetches just ahead of the wire.
  while (qp.cuts && qp.ahead < static_cast<uint32_t>(cfg_.max_reads)) {
    if (cfg_.max_reads_nic && ahead_total_ >= static_cast<uint64_t>(cfg_.max_reads_nic)) {
      if (!qp.read_wait) {  // its turn comes when a slot frees (serve_read_waiters)
        qp.read_wait = true;
        read_waiters_.push_back(q);
      }
      return;
    }
    const Cut& c = qp.cut;
    const uint32_t msg = c.msg;
    if (c.verb == Verb::kRead) {
      cut_read(qp, msg, now);
      continue;
    }
    const TxPacket t = packetizer_.packet(work_opcode(c.verb), c.bytes, qp.cut_index, qp.next_psn);
    qp.next_psn = (qp.next_psn + 1) & Packetizer::kPsnMask;
    const bool last = ++qp.cut_index == packetizer_.packets(c.bytes);
    const Time in_nic = t.payload && !c.inlined
                            ? dma_.read(now, (uint64_t{msg} << 32) + t.offset, t.payload, nullptr)
                            : now;
    const Time ready = in_nic + cfg_.tx_pipeline;
    // Reads of a QP complete in the order they were asked (the link is in order): one event,
    // at the oldest read's completion, stands for them all.
    if (qp.reading.empty()) push(ready, Ev::kPayload, q);
    qp.reading.push_back(
        {t, msg, digest(c.id, t.offset, t.payload, crc_.get()), last, c.tc, ready});
    ++qp.ahead;
    ++ahead_total_;
    if (last) {
      next_cut(qp);
      qp.cut_index = 0;
    }
  }
}

void Nic::land_reads(uint32_t q, Time now) {
  Qp& qp = qps_[q];
  // Reads of one QP complete in the order they were asked (the link is in order).
  while (!qp.reading.empty() && qp.reading.front().ready <= now) {
    const Reading& r = qp.reading.front();
    if (r.pkt.opcode == BthOpcode::kReadRequest) {
      const auto n = static_cast<uint32_t>(packetizer_.packets(sent_[r.msg].m.bytes));
      qp.gbn() ? qp.gbn()->post_read(r.msg, r.pkt, n) : qp.sr()->post_read(r.msg, r.pkt, n);
    } else if (qp.rud()) {
      qp.rud()->post_packet(r.msg, r.pkt, r.last, r.digest, r.tc);
    } else if (qp.gbn()) {
      qp.gbn()->post_packet(r.msg, r.pkt, r.last, r.digest, r.tc);
    } else {
      qp.sr()->post_packet(r.msg, r.pkt, r.last, r.digest, r.tc);
    }
    qp.reading.pop_front();
  }
  if (!qp.reading.empty()) push(qp.reading.front().ready, Ev::kPayload, q);
  offer_turn(q);
}

void Nic::offer_turn(uint32_t q) {
  Qp& qp = qps_[q];
  if (qp.token) return;
  std::optional<uint32_t> frame = qp.rud()   ? qp.rud()->peek()
                                  : qp.gbn() ? qp.gbn()->peek()
                                             : qp.sr()->peek();
  if (qp.rd && !qp.rd->ready.empty() && (!frame || qp.rd->turn))
    frame = static_cast<uint32_t>(qp.rd->ready.front().size.count());
  if (!frame) return;
  scheduler_.enqueue(q, *frame);
  qp.token = true;
}

void Nic::arm_timers(uint32_t q) {
  Qp& qp = qps_[q];
  const Time rto = qp.rud()   ? qp.rud()->deadline()
                   : qp.gbn() ? qp.gbn()->deadline()
                              : qp.sr()->deadline();
  if (rto != Time::max() && rto < qp.rto_at) {
    qp.rto_at = rto;
    push(rto, Ev::kRto, q);
  }
  if (qp.cc) {
    const Time t = qp.cc->next_timer();
    if (t != Time::max() && t < qp.cc_at) {
      qp.cc_at = t;
      push(t, Ev::kCc, q);
    }
  }
}

void Nic::on_rto(uint32_t q, Time now) {
  Qp& qp = qps_[q];
  qp.rto_at = Time::max();
  done_.clear();
  const uint64_t before = req_timeouts(qp);
  qp.rud()   ? qp.rud()->on_timer(now, done_)
  : qp.gbn() ? qp.gbn()->on_timer(now, done_)
             : qp.sr()->on_timer(now, done_);
  const uint64_t expired = req_timeouts(qp) - before;
  stats_.timeouts += expired;
  if (qp.cc && expired) {
    qp.cc->on_timeout(now);
    update_rate(q);
  }
  for (const uint64_t m : done_) complete(m, false, now);
  if (req_failed(qp)) fail_qp(q, now);
  arm_timers(q);
  offer_turn(q);
}

void Nic::fail_qp(uint32_t q, Time now) {
  // After its retries the QP is in error: what it has not sent yet fails with it (a real QP
  // flushes its send queue with errors).
  Qp& qp = qps_[q];
  for (const Reading& r : qp.reading) complete(r.msg, false, now);
  if (qp.cuts) complete(qp.cut.msg, false, now);
  for (const Cut& c : qp.cuts_after) complete(c.msg, false, now);
  qp.reading.clear();
  qp.cuts = 0;
  qp.cuts_after.clear();
  qp.cut_index = 0;
  ahead_total_ -= qp.ahead;
  qp.ahead = 0;
  serve_read_waiters(now);
}

void Nic::serve_read_waiters(Time now) {
  // Each waiting QP in turn reads what the freed slots allow; one still short when they are
  // used up goes back to the end of the line (fill_reads queues it again).
  while (!read_waiters_.empty() && ahead_total_ < static_cast<uint64_t>(cfg_.max_reads_nic)) {
    const uint32_t w = read_waiters_.front();
    read_waiters_.pop_front();
    qps_[w].read_wait = false;
    fill_reads(w, now);
  }
}

void Nic::on_cc_timer(uint32_t q, Time now) {
  Qp& qp = qps_[q];
  qp.cc_at = Time::max();
  qp.cc->on_timer(now);
  update_rate(q);
  arm_timers(q);
}

void Nic::update_rate(uint32_t q) {
  Qp& qp = qps_[q];
  if (!qp.cc) return;
  scheduler_.set_rate(q, qp.cc->rate());
  // A window-based algorithm's window, in whole packets of payload (at least one).
  if (const uint64_t w = qp.cc->window()) {
    const uint64_t packets = std::max<uint64_t>(1, (w + packetizer_.mtu() - 1) / packetizer_.mtu());
    if (qp.rud())
      qp.rud()->limit_window(packets);
    else if (qp.gbn())
      qp.gbn()->limit_window(packets);
    else
      qp.sr()->limit_window(packets);
  }
}

bool Nic::next_frame(Time now, Packet& out) {
  IntStack tel;
  bool has_tel = false;
  return next_frame(now, out, tel, has_tel);
}

bool Nic::next_frame(Time now, Packet& out, IntStack& tel, bool& has_tel) {
  has_tel = false;
  if (!control_.empty()) {
    out = control_.front();
    control_.pop_front();
    if (int_header_) {
      tel = control_tel_.front();
      control_tel_.pop_front();
      has_tel = tel.hops != kNoStack;
    }
    ++stats_.control_packets;
    return true;
  }
  for (;;) {
    Time next;
    const std::optional<uint32_t> pick = scheduler_.pick(now, next);
    if (!pick) {
      if (next != Time::max()) wake_tx(next);  // a pacer lets a QP go then
      return false;
    }
    const uint32_t q = *pick;
    prefetch_next_turn(q);
    Qp& qp = qps_[q];
    qp.token = false;
    if (response_turn(qp)) {
      send_response(q, now, out);
      return true;
    }
    const std::optional<RcPacket> rp = qp.rud()   ? qp.rud()->next(now)
                                       : qp.gbn() ? qp.gbn()->next(now)
                                                  : qp.sr()->next(now);
    if (!rp) {  // its window closed or it failed since its turn was queued
      offer_turn(q);
      continue;
    }
    const TxPacket& t = rp->pkt;
    WireHeader h;
    h.opcode = static_cast<uint8_t>(t.opcode);
    h.qp = qp.index;
    h.psn = t.psn;
    h.ack_req = rp->ack_req || ack_each_;  // HPCC: an ACK, and its telemetry, per packet
    // Coalesced RUD ACKs (NSCC): a message's last, a resend, or one that fills the window asks.
    if (ack_bytes_)
      h.ack_req |= rp->last || t.psn != qp.first_unsent_psn || qp.rud()->window_full();
    h.aux = rp->digest;  // (computed as it was cut: fill_reads)
    uint8_t tc = rp->tc;
    if (rp->read_left) {  // a READ request: its RETH's index, how many responses it asks for
      const SentMessage& s = sent_[rp->message];
      h.aux = s.reth;
      h.span = static_cast<uint8_t>(rp->span);
      tc = static_cast<uint8_t>(s.m.tc);
    }
    // RC: the QP's entropy; RUD: a new one per packet, cycling through all 256 (each path's
    // share the same over every 256 packets).
    h.entropy = qp.rud() && entropy_ ? qp.entropy++ : qp.entropy;
    out = Packet();
    h.write(out);
    out.src = id_;
    out.dst = qp.peer;
    out.tc = tc;
    out.ecn = ect_ ? kEcnEct0 : 0;
    out.size = Bytes(t.frame());
    out.inject_time = now;
    if (int_header_ && !rp->read_left) {  // a data packet: an empty stack for the switches
      tel.hops = 0;
      has_tel = true;
    }
    ++(rp->read_left ? stats_.read_requests : stats_.data_packets);
    if (qp.rd) qp.rd->turn = true;  // the responder's turn next
    // A message's first packet out is its first (offset 0): the transports send new packets in
    // PSN order. Only then is its record read.
    if (t.offset == 0) {
      SentMessage& s = sent_[rp->message];
      if (s.first_out == Time::max()) s.first_out = now;
    }
    if (t.psn == qp.first_unsent_psn) {  // its first transmission: a read slot frees
      // (A READ request's first transmission sends all its PSNs.)
      qp.first_unsent_psn =
          (qp.first_unsent_psn + (rp->read_left ? rp->read_left : 1)) & Packetizer::kPsnMask;
      --qp.ahead;
      --ahead_total_;
      if (!rp->read_left) unsent_bytes_ -= t.payload;
      if (!read_waiters_.empty()) serve_read_waiters(now);  // they came first
      fill_reads(q, now);
    } else {
      ++stats_.retransmitted;
    }
    if (qp.cc) {
      qp.cc->on_send(now, t.frame());
      update_rate(q);
    }
    arm_timers(q);
    offer_turn(q);
    return true;
  }
}

Time Nic::dma_write(Time now, uint64_t bytes) {
  // Posted: in host memory a link latency after its last byte left.
  return dma_.write(now, kCqAddr, bytes, nullptr) + cfg_.pcie.latency;
}

void Nic::complete(uint64_t message, bool ok, Time now) {
  if (!sent_.held(message)) return;  // completed before, and its row since written
  SentMessage& s = sent_[message];
  if (s.state != SentMessage::State::kPosted) return;
  s.completion = dma_write(now, Cqe::kBytes);  // the send CQE
  s.state = ok ? SentMessage::State::kDone : SentMessage::State::kFailed;
  if (ok) {
    ++stats_.completed;
    stats_.bytes_completed += s.m.bytes;
    if (notify_) completed_.push_back(static_cast<uint32_t>(message));
  } else {
    ++stats_.failed;
  }
}

void Nic::queue_control(int32_t dst, uint8_t tc, uint8_t opcode, uint16_t index, uint32_t psn,
                        bool nak, bool sacked, uint32_t aux, Qp* in_line, Time now,
                        const IntStack* tel) {
  WireHeader h;
  h.opcode = opcode;
  h.qp = index;
  h.psn = psn;
  h.nak = nak;
  h.sacked = sacked;
  h.aux = aux;
  Packet p;
  h.write(p);
  p.src = id_;
  p.dst = dst;
  p.tc = tc;
  p.size =
      Bytes(opcode == kOpCnp ? packetizer_.cnp_bytes() : packetizer_.header_bytes(BthOpcode::kAck));
  if (in_line && in_line->rd && in_line->rd->busy())
    reply_in_line(*in_line, p, now);  // (behind READ responses: without its telemetry)
  else
    push_control(p, tel);
}

void Nic::push_control(const Packet& p, const IntStack* tel) {
  control_.push_back(p);
  if (!int_header_) return;
  if (tel)
    control_tel_.push_back(*tel);
  else
    control_tel_.emplace_back().hops = kNoStack;
}

void Nic::receive(const Packet& p, Time now) {
  arrive(p, nullptr, now);
}

void Nic::receive_int(const Packet& p, const IntStack& tel, Time now) {
  arrive(p, &tel, now);
}

void Nic::arrive(const Packet& p, const IntStack* tel, Time now) {
  if (cfg_.rx_pipeline == Time()) return take(p, tel, now);
  // A constant delay: packets leave the pipeline in the order they came.
  if (rx_pipe_.empty()) push(now + cfg_.rx_pipeline, Ev::kRx, 0);
  rx_pipe_.push_back({now + cfg_.rx_pipeline, p, tel ? *tel : IntStack{}});
  if (!tel) rx_pipe_.back().tel.hops = kNoStack;
}

void Nic::take(const Packet& p, const IntStack* tel, Time now) {
  const WireHeader h = WireHeader::read(p);
  if (is_data(h.opcode) || Packetizer::is_read_response(h.opcode)) {
    const uint64_t headers = packetizer_.header_bytes(static_cast<BthOpcode>(h.opcode));
    if (p.size.count() > headers) arrived_payload_ += p.size.count() - headers;  // (not trimmed)
  }
  const uint32_t q = qp_for(p.src, h.qp);
  Qp& qp = qps_[q];
  if (is_data(h.opcode)) {
    // A trimmed data packet (its payload cut by a switch, switch.trimming) is a loss to the RC
    // transports; RUD answers it with a NACK.
    if ((p.ecn & kTrimmed) && !qp.rud_rx()) {
      ++stats_.trimmed_received;
      return;
    }
    receive_data(qp, q, p, h, tel, now);
  } else if (h.opcode == static_cast<uint8_t>(BthOpcode::kReadRequest)) {
    receive_read_request(qp, q, p, h, now);
  } else if (Packetizer::is_read_response(h.opcode)) {
    receive_read_response(qp, q, p, h, now);
  } else if (h.opcode == kOpAck) {
    receive_ack(qp, q, h, tel, now);
  } else if (h.opcode == kOpCnp) {
    ++stats_.cnps_received;
    if (qp.cc) {
      qp.cc->on_cnp(now);
      update_rate(q);
      arm_timers(q);
    }
  }
}

void Nic::receive_data(Qp& qp, uint32_t q, const Packet& p, const WireHeader& h,
                       const IntStack* tel, Time now) {
  const auto op = static_cast<BthOpcode>(h.opcode);
  const uint32_t payload = static_cast<uint32_t>(p.size.count()) - packetizer_.header_bytes(op);
  Placed pl{payload, h.aux, Packetizer::ends_message(op), op, Time()};
  if (qp.rud_rx()) {
    receive_rud_data(qp, p, h, pl, tel, now);
    return;
  }
  bool reply = false, nak = false, sacked = false;
  uint32_t reply_psn = 0;
  if (qp.gbn_rx()) {
    const RcResponder::Outcome o = qp.gbn_rx()->receive(h.psn, h.ack_req);
    if (o.accepted) {
      pl.written = payload ? dma_write(now, payload) : now;
      deliver(qp, pl, now);
    }
    reply = o.reply != RcResponder::Reply::kNone;
    nak = o.reply == RcResponder::Reply::kNak;
    reply_psn = o.psn;
  } else {
    const uint32_t before = qp.sr_rx()->expected();
    const SrResponder::Outcome o = qp.sr_rx()->receive(h.psn, h.ack_req);
    if (o.placed) pl.written = payload ? dma_write(now, payload) : now;
    place(qp, *qp.sr_rx(), o.placed, h.psn, pl, before, o.delivered, now);
    reply = o.reply != RcResponder::Reply::kNone;
    nak = o.reply == RcResponder::Reply::kNak;
    reply_psn = o.sack.cum;
    sacked = o.placed && h.psn != o.sack.cum;  // IRN: the SACK names the packet that prompted it
  }
  if (reply) {
    ++(nak ? stats_.naks_sent : stats_.acks_sent);
    queue_control(p.src, p.tc, kOpAck, qp.index, reply_psn, nak, sacked, h.psn, &qp, now, tel);
  }
  ecn_feedback(q, p, now);
}

void Nic::ecn_feedback(uint32_t q, const Packet& p, Time now) {
  if (p.ecn == kEcnCe || p.ecn == kEcnEct0) {
    if (cnp_.on_packet(q, p.ecn == kEcnCe, now)) {
      ++stats_.cnps_sent;
      queue_control(p.src, p.tc, kOpCnp, qps_[q].index, 0, false, false, 0);
    }
  }
}

template <class Rx>
void Nic::place(Qp& qp, const Rx& rx, bool placed, uint32_t psn, const Placed& pl, uint32_t from,
                uint32_t delivered, Time now) {
  uint32_t i = 0;
  if (placed) {
    if (psn == from && delivered > 0) {  // the expected one: in order at once, not held
      deliver(qp, pl, now);
      i = 1;
    } else {
      if (qp.placed.empty()) {
        // A slot per PSN the responder may hold ahead of the expected one, and the expected one:
        // a power of two, so that PSN modulo the ring survives the 24-bit wrap.
        size_t slots = 1;
        while (slots < static_cast<size_t>(cfg_.rc.window_for(false)) + 1) slots <<= 1;
        qp.placed.resize(slots);
      }
      qp.placed[psn & (qp.placed.size() - 1)] = pl;
    }
  }
  for (; i < delivered; ++i) deliver(qp, qp.placed[(from + i) & (qp.placed.size() - 1)], now);
  if (!qp.placed.empty() && !rx.holds_ahead()) std::vector<Placed>().swap(qp.placed);
}

// (The READ responder places through it too: nic_read.cpp; RUD's: nic_rud.cpp.)
template void Nic::place<SrResponder>(Qp&, const SrResponder&, bool, uint32_t, const Placed&,
                                      uint32_t, uint32_t, Time);
template void Nic::place<RudResponder>(Qp&, const RudResponder&, bool, uint32_t, const Placed&,
                                       uint32_t, uint32_t, Time);

void Nic::deliver(Qp& qp, const Placed& pl, Time now) {
  qp.rx_bytes += pl.payload;
  qp.rx_sum += mix(pl.digest);
  if (fault_ && ++fault_count_ == 3) qp.rx_sum ^= 1;
  qp.rx_written = std::max(qp.rx_written, pl.written);
  if (!pl.last) return;
  ReceivedMessage r;
  r.src = qp.peer;
  r.qp_index = qp.index;
  r.seq = qp.rx_messages++;
  r.bytes = qp.rx_bytes;
  r.checksum = qp.rx_sum;
  r.delivered = qp.rx_written;
  r.completion = receive_cqe(pl.op) ? dma_write(now, Cqe::kBytes) : r.delivered;
  received_.push_back(r);
  if (notify_) delivered_.push_back(static_cast<uint32_t>(received_.size() - 1));
  ++stats_.messages_delivered;
  stats_.bytes_delivered += r.bytes;
  qp.rx_bytes = qp.rx_sum = 0;
  qp.rx_written = Time();
}

void Nic::receive_ack(Qp& qp, uint32_t q, const WireHeader& h, const IntStack* tel, Time now) {
  ++(h.nak ? stats_.naks_received : stats_.acks_received);
  done_.clear();
  if (qp.rud()) {
    receive_rud_ack(qp, h, now);
  } else if (qp.gbn()) {
    if (h.nak)
      qp.gbn()->on_nak(h.psn, now, done_);
    else
      qp.gbn()->on_ack(h.psn, now, done_);
  } else {
    if (h.sacked)
      qp.sr()->on_sack(h.psn, h.aux, now, done_);
    else
      qp.sr()->on_reply(Sack{h.psn, 0}, now, done_);
  }
  for (const uint64_t m : done_) complete(m, true, now);
  // An RTT sample for a delay-based congestion control: the newest packet it acknowledged.
  const Time sent = qp.rud()   ? qp.rud()->acked_sent()
                    : qp.gbn() ? qp.gbn()->acked_sent()
                               : qp.sr()->acked_sent();
  if (qp.cc && (sent != Time::max() || ecn_echo_)) {
    const BitRate before = qp.cc->rate();
    const uint64_t window = qp.cc->window();
    if (ecn_echo_) echo_to_cc(qp, h, sent, now);
    if (sent != Time::max()) {
      if (tel) qp.cc->on_telemetry(now, now - sent, *tel);
      qp.cc->on_ack(now, now - sent);
    }
    // (Swift's window moves while its rate stays at the line's.)
    if (qp.cc->rate().as_bps() != before.as_bps() || qp.cc->window() != window) update_rate(q);
  }
  arm_timers(q);
  offer_turn(q);
}

Nic::Stats Nic::stats() const {
  Stats s = stats_;
  s.out_of_order = s.duplicates = 0;
  for (const Qp& qp : qps_) {
    if (qp.rud()) {
      s.out_of_order += qp.rud_rx()->out_of_order();
      s.duplicates += qp.rud_rx()->duplicates();
      s.trimmed_received += qp.rud_rx()->trimmed();
      s.nacks_received += qp.rud()->nacked();
      s.presumed_lost += qp.rud()->presumed_lost();
    } else if (qp.gbn_rx()) {
      s.out_of_order += qp.gbn_rx()->out_of_order();
      s.duplicates += qp.gbn_rx()->duplicates();
    } else {
      s.out_of_order += qp.sr_rx()->out_of_order();
      s.duplicates += qp.sr_rx()->duplicates();
    }
  }
  return s;
}

void Nic::qp_rates(Time now, std::vector<QpRate>& out) const {
  for (const Qp& qp : qps_)
    if (qp.cc) out.push_back({qp.peer, qp.index, qp.cc->rate(), qp.cc->state(now)});
}

void Nic::register_stats(stats::Registry& r, const std::string& prefix) const {
  r.counter(prefix + ".messages_posted", &stats_.posted, "messages");
  r.counter(prefix + ".messages_completed", &stats_.completed, "messages");
  r.counter(prefix + ".messages_failed", &stats_.failed, "messages");
  r.counter(prefix + ".data_packets_sent", &stats_.data_packets, "packets");
  r.counter(prefix + ".retransmitted_packets", &stats_.retransmitted, "packets");
  r.counter(prefix + ".naks_sent", &stats_.naks_sent, "packets");
  r.counter(prefix + ".cnps_sent", &stats_.cnps_sent, "packets");
  r.counter(prefix + ".timeouts", &stats_.timeouts, "");
  r.counter(prefix + ".wqe_fetches", &stats_.wqe_fetches, "reads");
  // Only with inline data in play (a run without it reads as before).
  if (cfg_.max_inline > 0) r.counter(prefix + ".wqes_inline", &inline_posts_, "WQEs");
  r.counter(prefix + ".read_requests_sent", &stats_.read_requests, "packets");
  r.counter(prefix + ".read_responses_sent", &stats_.read_responses, "packets");
  if (rud_) {  // (only then: the other transports' results keep their counters)
    const Nic* n = this;
    r.value_fn(
        prefix + ".rud_presumed_lost", [n] { return double(n->stats().presumed_lost); }, "packets");
    r.value_fn(
        prefix + ".rud_nacks_received", [n] { return double(n->stats().nacks_received); },
        "packets");
    r.value_fn(
        prefix + ".trimmed_received", [n] { return double(n->stats().trimmed_received); },
        "packets");
  }
  const tlm_host::PcieLink* l = &pcie_;
  r.value_fn(
      prefix + ".pcie_to_host_busy_ns",
      [l] { return l->busy(tlm_host::PcieLink::kToHost).as_fs() * 1e-6; }, "ns");
  r.value_fn(
      prefix + ".pcie_to_device_busy_ns",
      [l] { return l->busy(tlm_host::PcieLink::kToDevice).as_fs() * 1e-6; }, "ns");
}

void Nic::attach_tracker(Qp& qp) {
  PsnTrackerParams p;
  p.mode = qp.rud_rx()  ? PsnTrackerMode::kRud
           : qp.sr_rx() ? PsnTrackerMode::kSelective
                        : PsnTrackerMode::kGoBackN;
  // (Go-back-N places nothing ahead: any range will do; the others' was checked in validate.)
  p.range = p.mode == PsnTrackerMode::kGoBackN ? PsnTrackerIf::kMaxRange
                                               : static_cast<uint32_t>(cfg_.rc.window_for(false));
  p.ack_every = static_cast<uint32_t>(cfg_.rc.ack_every);
  p.first_psn = 0;  // as the responders above
  auto hw = PsnTrackerRegistry::global().at(cfg_.rx_impl).make(p);
  if (auto* r = qp.rud_rx())
    r->attach(std::move(hw));
  else if (auto* s = qp.sr_rx())
    s->attach(std::move(hw));
  else
    qp.gbn_rx()->attach(std::move(hw));
}

}  // namespace fabricsim::nic
