// The NIC's packetizer: a work request cut into packets of at most the path MTU, each with the
// RC transport's BTH opcode, its PSN and the exact bytes of its header stack.
//
// Hardware: the transmit side of an RDMA NIC's transport engine. A message of S bytes becomes
// max(1, ceil(S / mtu)) packets, FIRST / MIDDLE ... / LAST or ONLY; an RDMA READ request is one
// packet, its responses are segmented the same way by the responder. Header stacks, per packet
// (Linux include/rdma/ib_pack.h [V], hardware-facts.md):
//   RoCEv2 over IPv4: Ethernet 14 (+ VLAN 4) + IPv4 20 + UDP 8 + BTH 12 + ext + ICRC 4 + FCS 4
//   RoCEv2 over IPv6: as IPv4 with a 40 B IPv6 header
//   InfiniBand:       LRH 8 (+ GRH 40) + BTH 12 + ext + ICRC 4 + VCRC 2
// where ext is RETH 16 (RDMA WRITE FIRST/ONLY, READ request), ImmDt 4 (the last or only packet
// of a *_WITH_IMMEDIATE), AETH 4 (ACK, READ response FIRST/LAST/ONLY). A 4096 B RoCEv2/IPv4
// packet thus carries 62 B of headers. Ethernet's preamble, IFG and minimum frame are the MAC's
// (link/wire_format.h), not the packetizer's. Parameters: mtu (256-4096 B), headers, vlan, grh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/config/config.h"
#include "models/nic/work_queue_format.h"

namespace fabricsim::nic {

// IBA RC opcodes (the BTH's OpCode field, RC transport) [R: IBA Vol 1 table 38].
enum class BthOpcode : uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendLastImm = 0x03,
  kSendOnly = 0x04,
  kSendOnlyImm = 0x05,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0a,
  kWriteOnlyImm = 0x0b,
  kReadRequest = 0x0c,
  kReadResponseFirst = 0x0d,
  kReadResponseMiddle = 0x0e,
  kReadResponseLast = 0x0f,
  kReadResponseOnly = 0x10,
  kAck = 0x11,
};

struct PacketizerConfig : config::Configurable {
  Bytes mtu;
  std::string headers;  // roce_v2_ipv4 | roce_v2_ipv6 | infiniband
  bool vlan = false;
  bool grh = false;

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
};

struct TxPacket {
  BthOpcode opcode;
  uint32_t psn;      // 24 bits
  uint32_t payload;  // bytes of the message in it
  uint32_t headers;  // bytes of its header stack (FCS or VCRC included)
  uint64_t offset;   // of its payload in the message
  uint32_t frame() const { return payload + headers; }
};

class Packetizer {
 public:
  static constexpr uint32_t kPsnMask = (1u << 24) - 1;
  explicit Packetizer(const PacketizerConfig& cfg);

  // Header bytes of a packet with this opcode (its extension headers included).
  uint32_t header_bytes(BthOpcode op) const;
  // The packets of a work request starting at `psn` (requests: SEND, RDMA WRITE [with immediate],
  // RDMA READ's request), appended to `out`; returns the PSN after them.
  uint32_t segment(const Wqe& w, uint32_t psn, std::vector<TxPacket>& out) const;
  // The responder's READ response packets for `bytes` starting at `psn`.
  uint32_t read_response(uint64_t bytes, uint32_t psn, std::vector<TxPacket>& out) const;
  uint32_t mtu() const { return mtu_; }
  // A RoCEv2 CNP: the header stack and 16 reserved bytes after the BTH.
  uint32_t cnp_bytes() const { return base_ - extra_ + 16; }
  // Every data and ACK packet carries `bytes` more header (an INT header: telemetry.h); a CNP
  // does not.
  void add_header(uint32_t bytes) {
    base_ += bytes;
    extra_ += bytes;
  }
  // A message of `bytes` is max(1, ceil(bytes / mtu)) packets; packet(verb, bytes, i, psn) is
  // its i-th (SEND, RDMA WRITE [with immediate]), with PSN psn: what segment() cuts, one at a
  // time (a NIC cuts a long message as it sends it, not all at once).
  uint64_t packets(uint64_t bytes) const {
    // (On every packet's path: a shift for the power-of-two MTUs, not a 64-bit divide.)
    if (bytes <= mtu_) return 1;
    return mtu_shift_ ? (bytes + mtu_ - 1) >> mtu_shift_ : (bytes + mtu_ - 1) / mtu_;
  }
  TxPacket packet(Opcode verb, uint64_t bytes, uint64_t i, uint32_t psn) const;
  // The i-th READ response packet of a READ of `bytes` (FIRST/MIDDLE/LAST/ONLY), PSN psn.
  TxPacket read_response_packet(uint64_t bytes, uint64_t i, uint32_t psn) const;
  // Whether a packet of this opcode is a READ response.
  static bool is_read_response(uint8_t op) {
    return op >= static_cast<uint8_t>(BthOpcode::kReadResponseFirst) &&
           op <= static_cast<uint8_t>(BthOpcode::kReadResponseOnly);
  }
  // Whether a data packet of this opcode ends its message.
  static bool ends_message(BthOpcode op) {
    switch (op) {
      case BthOpcode::kSendLast:
      case BthOpcode::kSendLastImm:
      case BthOpcode::kSendOnly:
      case BthOpcode::kSendOnlyImm:
      case BthOpcode::kWriteLast:
      case BthOpcode::kWriteLastImm:
      case BthOpcode::kWriteOnly:
      case BthOpcode::kWriteOnlyImm:
        return true;
      default:
        return false;
    }
  }

  struct Ops {
    BthOpcode first, middle, last, only;
  };

 private:
  static Ops ops(Opcode verb);
  TxPacket nth(uint64_t bytes, uint64_t i, uint32_t psn, const Ops& ops) const;
  uint32_t cut(uint64_t bytes, uint32_t psn, const Ops& ops, std::vector<TxPacket>& out) const;
  uint32_t mtu_;
  uint32_t mtu_shift_ = 0;  // log2(mtu_) when mtu_ is a power of two (it is, once validated)
  uint32_t base_;           // header bytes every packet has (link, network, transport, CRCs)
  uint32_t extra_ = 0;      // of those, add_header()'s
};

}  // namespace fabricsim::nic
