// The NIC's side of the RUD transport (rud_transport.h): the responder placing what arrives and
// answering it (a SACK, or a NACK for a trimmed packet), coalesced when the congestion control
// asks (CcEntry::ack_bytes, NSCC: one ACK per 16 KB as UEC's sink sends them, at once on
// anything the sender must hear of now); the requester taking the answers; the ECN echo and the
// bytes acknowledged handed to such a congestion control. Apart from nic.cpp by job.
#include "models/nic/nic.h"

namespace fabricsim::nic {

bool Nic::rud_ack_now(Qp& qp, const RudResponder::Outcome& o, const WireHeader& h, const Placed& pl,
                      bool ce) {
  if (!ack_bytes_) return true;  // every packet (the per-packet SACK of UEC)
  // A NACK, a repeat, one out of order or filling a gap, a marked one and one that asks (a
  // message's last, a resend, one that fills the sender's window) are answered at once.
  const bool plain = o.placed && o.delivered == 1 && !ce && !h.ack_req && !pl.last;
  if (plain) {
    qp.rx_unacked += pl.payload;
    if (qp.rx_unacked < ack_bytes_) return false;
  }
  qp.rx_unacked = 0;
  return true;
}

void Nic::receive_rud_data(Qp& qp, const Packet& p, const WireHeader& h, Placed pl,
                           const IntStack* tel, Time now) {
  // RUD: placed as it arrives (any order); delivered to the receive side's message
  // accounting in PSN order (the CQE order); a packet answered at once with a SACK (or, when
  // coalescing, the last of ack_bytes_), a trimmed one (header only, kTrimmed) with a NACK for
  // its PSN.
  const bool trimmed = p.ecn & kTrimmed;
  const bool ce = !trimmed && p.ecn == kEcnCe;
  const uint32_t before = qp.rud_rx()->expected();
  const RudResponder::Outcome o = qp.rud_rx()->receive(h.psn, trimmed);
  if (o.placed) pl.written = pl.payload ? dma_write(now, pl.payload) : now;
  place(qp, *qp.rud_rx(), o.placed, h.psn, pl, before, o.delivered, now);
  if (o.reply && rud_ack_now(qp, o, h, pl, ce)) {
    WireHeader r;
    r.opcode = kOpAck;
    r.qp = qp.index;
    r.entropy = h.entropy;  // back on a path of its own, as the data came
    if (o.nack) {
      ++stats_.naks_sent;
      r.nak = true;
      r.psn = h.psn;
      r.aux = o.sack.cum;
    } else {
      ++stats_.acks_sent;
      r.sacked = true;
      r.psn = o.sack.cum;
      r.block = static_cast<uint8_t>(o.sack.block);
      r.aux = o.sack.bitmap;
      r.ece = ecn_echo_ && ce;
    }
    Packet a;
    r.write(a);
    a.src = id_;
    a.dst = p.src;
    a.tc = p.tc;
    a.size = Bytes(packetizer_.header_bytes(BthOpcode::kAck) + RudRequester::kSackBytes);
    push_control(a, tel);
  }
  // CNPs for the schemes that read them; an echoing one (NSCC) has its marks on the ACKs.
  if (!trimmed && !ecn_echo_) ecn_feedback(static_cast<uint32_t>(&qp - qps_.data()), p, now);
}

void Nic::receive_rud_ack(Qp& qp, const WireHeader& h, Time now) {
  if (h.nak)
    qp.rud()->on_nack(h.psn, h.aux, now, done_);
  else
    qp.rud()->on_sack(RudSack{h.psn, h.block, h.aux}, now, done_);
}

void Nic::echo_to_cc(Qp& qp, const WireHeader& h, Time sent, Time now) {
  const RudRequester& rq = *qp.rud();
  if (h.nak) {
    qp.cc->on_nack(now, rq.nacked_bytes());
    return;
  }
  qp.cc->on_echo(now, sent == Time::max() ? Time::max() : now - sent, rq.acked_bytes(), h.ece);
}

}  // namespace fabricsim::nic
