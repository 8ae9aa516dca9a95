// The NIC's RDMA READ path (nic.h, "RDMA READ"): the requester cutting a READ into its
// requests, the responder reading host memory for them and sending the responses (ACKs queued
// behind them in line), and the requester placing the responses and completing the READ. Apart
// from nic.cpp by job: the rest of the NIC never reads these.
#include <algorithm>

#include "models/nic/nic.h"
#include "models/nic/payload_digest.h"

namespace fabricsim::nic {

namespace {
constexpr uint64_t kReadAddr = uint64_t{3} << 60;  // what READs read, a region per RETH
}  // namespace

void Nic::cut_read(Qp& qp, uint32_t msg, Time now) {
  // One request, header only (BTH + RETH): nothing to read from host memory, so it is ready at
  // once, in line behind the QP's earlier packets. It takes a PSN per response.
  SentMessage& s = sent_[msg];
  const uint64_t n = packetizer_.packets(s.m.bytes);
  s.reth = static_cast<uint32_t>(reths_->size());
  reths_->push_back({s.m.id, s.m.bytes, qp.next_psn});
  const TxPacket t{BthOpcode::kReadRequest, qp.next_psn, 0,
                   packetizer_.header_bytes(BthOpcode::kReadRequest), 0};
  qp.next_psn = static_cast<uint32_t>((qp.next_psn + n) & Packetizer::kPsnMask);
  const uint32_t q = static_cast<uint32_t>(&qp - qps_.data());
  if (qp.reading.empty()) push(now, Ev::kPayload, q);
  qp.reading.push_back({t, msg, 0, true, static_cast<uint8_t>(s.m.tc), now});
  ++qp.ahead;
  ++ahead_total_;
  next_cut(qp);
  qp.cut_index = 0;
}

void Nic::receive_read_request(Qp& qp, uint32_t q, const Packet& p, const WireHeader& h, Time now) {
  ecn_feedback(q, p, now);
  if (h.aux >= reths_->size()) return;  // names no READ: dropped
  const Reth& r = (*reths_)[h.aux];
  const uint64_t n = packetizer_.packets(r.bytes);
  const int32_t k = psn_diff(h.psn, r.first_psn);
  if (k < 0 || static_cast<uint64_t>(k) >= n) return;  // not a PSN of that READ
  const auto rest = static_cast<uint32_t>(n - static_cast<uint64_t>(k));
  const uint32_t count = h.span ? std::min<uint32_t>(h.span, rest) : rest;
  bool run = false;
  if (qp.gbn_rx()) {
    const RcResponder::Outcome o = qp.gbn_rx()->receive_read(h.psn, rest);
    if (o.accepted) ++qp.rx_messages;  // the READ has its place among the QP's messages
    run = o.accepted || o.duplicate;
    if (o.reply == RcResponder::Reply::kNak) {
      ++stats_.naks_sent;
      queue_control(p.src, p.tc, kOpAck, qp.index, o.psn, true, false, h.psn, &qp, now);
    }
  } else {
    const SrResponder::Outcome o = qp.sr_rx()->receive_read(h.psn, rest);
    if (o.read) ++qp.rx_messages;
    run = o.read || o.duplicate;
    if (run) {
      if (!qp.rd) qp.rd = std::make_unique<Responding>();
      qp.rd->jobs.push_back({false, p.tc, h.aux, h.psn, count, static_cast<uint64_t>(k), Packet()});
      run = false;  // queued: what came in order beyond it is ACKed behind it
    }
    const uint32_t after = (h.psn + rest) & Packetizer::kPsnMask;
    place(qp, *qp.sr_rx(), false, h.psn, Placed(), after, o.delivered, now);
    if (o.reply != RcResponder::Reply::kNone) {
      ++stats_.acks_sent;
      queue_control(p.src, p.tc, kOpAck, qp.index, o.sack.cum, false, false, h.psn, &qp, now);
    }
    fill_responses(q, now);
    return;
  }
  if (run) {
    if (!qp.rd) qp.rd = std::make_unique<Responding>();
    qp.rd->jobs.push_back({false, p.tc, h.aux, h.psn, count, static_cast<uint64_t>(k), Packet()});
    fill_responses(q, now);
  }
}

void Nic::reply_in_line(Qp& qp, const Packet& control, Time now) {
  ReadJob j;
  j.control = true;
  j.pkt = control;
  qp.rd->jobs.push_back(j);
  fill_responses(static_cast<uint32_t>(&qp - qps_.data()), now);
}

void Nic::fill_responses(uint32_t q, Time now) {
  Qp& qp = qps_[q];
  if (!qp.rd) return;  // it never answered a READ
  Responding& rd = *qp.rd;
  // A payload DMA read per response, at most max_reads read and not yet sent (as the send
  // side's); an ACK or NAK in line follows the responses before it.
  while (!rd.jobs.empty()) {
    ReadJob& j = rd.jobs.front();
    Packet out;
    Time ready = now;
    if (j.control) {
      out = j.pkt;
      if (!rd.reading.empty()) ready = std::max(now, rd.reading.back().second);
    } else {
      if (rd.ahead >= static_cast<uint32_t>(cfg_.max_reads)) break;
      const Reth& r = (*reths_)[j.reth];
      const TxPacket t = packetizer_.read_response_packet(r.bytes, j.index, j.psn);
      if (t.payload)
        ready = dma_.read(now, kReadAddr + (uint64_t{j.reth} << 32) + t.offset, t.payload, nullptr);
      WireHeader h;
      h.opcode = static_cast<uint8_t>(t.opcode);
      h.qp = qp.index;
      h.psn = t.psn;
      h.aux = digest(r.message, t.offset, t.payload, crc_.get());
      h.write(out);
      out.src = id_;
      out.dst = qp.peer;
      out.tc = j.tc;
      out.ecn = ect_ ? kEcnEct0 : 0;
      out.size = Bytes(t.frame());
      ++rd.ahead;
    }
    if (rd.reading.empty()) push(ready, Ev::kResp, q);
    rd.reading.emplace_back(out, ready);
    if (j.control || --j.left == 0) {
      rd.jobs.pop_front();
    } else {
      j.psn = (j.psn + 1) & Packetizer::kPsnMask;
      ++j.index;
    }
  }
}

void Nic::land_responses(uint32_t q, Time now) {
  Qp& qp = qps_[q];
  Responding& rd = *qp.rd;
  // Reads complete in the order they were asked (the link is in order).
  while (!rd.reading.empty() && rd.reading.front().second <= now) {
    rd.ready.push_back(rd.reading.front().first);
    rd.reading.pop_front();
  }
  if (!rd.reading.empty()) push(rd.reading.front().second, Ev::kResp, q);
  offer_turn(q);
}

bool Nic::response_turn(Qp& qp) const {
  if (!qp.rd || qp.rd->ready.empty()) return false;
  // Responses and the QP's own packets take its turns alternately when both have one.
  return qp.rd->turn || !(qp.gbn() ? qp.gbn()->peek() : qp.sr()->peek());
}

void Nic::send_response(uint32_t q, Time now, Packet& out) {
  Qp& qp = qps_[q];
  Responding& rd = *qp.rd;
  out = rd.ready.front();
  rd.ready.pop_front();
  rd.turn = false;
  out.inject_time = now;
  if (Packetizer::is_read_response(static_cast<uint8_t>(out.id >> 56))) {
    ++stats_.read_responses;
    ++stats_.data_packets;
    --rd.ahead;
    // The QP's congestion control counts what its responder sends: responses are its traffic.
    if (qp.cc) {
      qp.cc->on_send(now, static_cast<uint32_t>(out.size.count()));
      update_rate(q);
      arm_timers(q);
    }
    fill_responses(q, now);
  } else {
    ++stats_.control_packets;  // an ACK or NAK that waited for the responses before it
    fill_responses(q, now);
  }
  offer_turn(q);
}

void Nic::receive_read_response(Qp& qp, uint32_t q, const Packet& p, const WireHeader& h,
                                Time now) {
  ecn_feedback(q, p, now);
  done_.clear();
  uint64_t msg = 0;
  const bool took = qp.gbn() ? qp.gbn()->on_read_response(h.psn, now, done_, msg)
                             : qp.sr()->on_read_response(h.psn, now, done_, msg);
  if (took) {
    // Placed in host memory by a posted DMA write; the requester sums what it places.
    ReceivedMessage& r = placed_[msg].r;
    const auto op = static_cast<BthOpcode>(h.opcode);
    const uint32_t payload = static_cast<uint32_t>(p.size.count()) - packetizer_.header_bytes(op);
    const Time written = payload ? dma_write(now, payload) : now;
    r.bytes += payload;
    r.checksum += mix(h.aux);
    if (fault_ && ++fault_count_ == 3) r.checksum ^= 1;
    r.delivered = std::max(r.delivered, written);
  } else {
    ++stats_.read_responses_dropped;
  }
  for (const uint64_t m : done_) {
    if (sent_[m].m.verb == Verb::kRead)  // its CQE once its last byte is in host memory
      push(std::max(now, placed_[m].r.delivered), Ev::kReadCqe, static_cast<uint32_t>(m));
    else
      complete(m, true, now);
  }
  arm_timers(q);
  offer_turn(q);
}

void Nic::complete_read(uint32_t msg, Time now) {
  SentMessage& s = sent_[msg];
  if (s.state != SentMessage::State::kPosted) return;
  PlacedRead& p = placed_[msg];
  p.done = true;
  p.r.src = qps_[s.qp].peer;
  p.r.qp_index = static_cast<uint16_t>(s.m.qp);
  p.r.seq = s.seq;
  ++stats_.messages_delivered;
  stats_.bytes_delivered += p.r.bytes;
  complete(msg, true, now);
  p.r.completion = s.completion;
}

}  // namespace fabricsim::nic
