// What a NIC's packet carries for the transport, packed into the fields of a Packet the network
// does not read (`id` and `aux`, models/common/packet.h), so that NIC traffic costs the switches
// nothing: their per-packet state stays two cache lines.
//
// Hardware: the RoCEv2/InfiniBand base transport header (BTH: opcode, destination QP, AckReq,
// PSN) and the AETH of ACKs, reduced to what the model uses. The destination QP is the
// connection's index between the two NICs (0 .. nic.qps_per_pair - 1): the NICs create their QPs
// in pairs, so the index names the QP on either side. `aux` holds, per kind:
//   data (SEND, RDMA WRITE):  a CRC-32 standing for the packet's payload (nic.h, "Integrity");
//   ACK / NAK:                the PSN of the packet that prompted a selective-repeat reply
//                             (IRN's SACK), with `sacked` set;
//   READ request:             the index of its RETH (remote address and length) in the table the
//                             NICs of a run share (nic.h, "RDMA READ"): a RETH is 16 B, the
//                             packet has 5 spare; its 16 B are counted in the frame's size;
//   READ response:            its payload's CRC-32, as data;
//   RUD ACK / NACK:           the 32-bit SACK bitmap of block `block` (flags' top 5 bits) / the
//                             cumulative PSN (rud_transport.h); an ACK's ECN echo (`ece`,
//                             NSCC) is its AckReq bit, which no ACK otherwise uses;
//   CNP:                      nothing.
// Layout of `id`: opcode 8 bits | qp 8 | span 8 | psn 24 | flags 8 | entropy 8. The QP index
// needs 8 bits (nic.qps_per_pair <= 256). span: a READ request's response count (0: to its
// READ's end; a go-back-N request always asks for the rest). The entropy byte is the one field
// of `id` the network reads (packet_entropy(), when switches hash it: the UDP source port of
// RoCEv2 / UEC); the NIC writes it only then (Nic, "entropy"), else it stays 0.
#pragma once

#include <cstdint>

#include "models/common/packet.h"
#include "models/nic/packetizer.h"

namespace fabricsim::nic {

constexpr uint8_t kOpAck = 0x11;  // BthOpcode::kAck
constexpr uint8_t kOpCnp = 0x81;  // RoCEv2 CNP (IBA A17.9.2)

struct WireHeader {
  uint8_t opcode = 0;
  uint16_t qp = 0;
  uint32_t psn = 0;  // 24 bits; ACK: the last PSN received in order; NAK: the PSN expected
  bool ack_req = false;
  bool nak = false;     // an ACK packet's AETH syndrome says NAK (PSN sequence error)
  bool sacked = false;  // aux holds a selectively acknowledged PSN
  uint8_t span = 0;     // READ request: responses asked for (0: all to the READ's end)
  uint32_t aux = 0;
  uint8_t entropy = 0;  // read by the network, not by the transport

  uint8_t block = 0;  // RUD ACK: which 32-PSN SACK block aux holds (0-31)
  bool ece = false;   // ACK: the data packet that prompted it arrived CE-marked (ECN echo)

  static constexpr uint8_t kAckReq = 1, kNak = 2, kSacked = 4;

  void write(Packet& p) const {
    p.id = uint64_t{opcode} << 56 | (uint64_t{qp} & 0xff) << 48 | uint64_t{span} << 40 |
           uint64_t{psn & Packetizer::kPsnMask} << 16 | uint64_t(flags()) << 8 | entropy;
    p.aux = aux;
  }
  static WireHeader read(const Packet& p) {
    WireHeader h;
    h.opcode = static_cast<uint8_t>(p.id >> 56);
    h.qp = static_cast<uint16_t>((p.id >> 48) & 0xff);
    h.psn = static_cast<uint32_t>(p.id >> 16) & Packetizer::kPsnMask;
    const auto f = static_cast<uint8_t>(p.id >> 8);
    h.ack_req = f & kAckReq;
    h.ece = h.ack_req && h.opcode == kOpAck;
    h.nak = f & kNak;
    h.sacked = f & kSacked;
    h.span = static_cast<uint8_t>(p.id >> 40);
    h.block = f >> 3;
    h.aux = p.aux;
    h.entropy = packet_entropy(p);
    return h;
  }

 private:
  uint8_t flags() const {
    return static_cast<uint8_t>((ack_req || ece ? kAckReq : 0) | (nak ? kNak : 0) |
                                (sacked ? kSacked : 0) | (block & 31) << 3);
  }
};

}  // namespace fabricsim::nic
