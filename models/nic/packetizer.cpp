#include "models/nic/packetizer.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::nic {

void PacketizerConfig::visit(config::Visitor& v) {
  v.param("mtu", mtu, Bytes(4096), Bytes(256), Bytes(4096),
          "Path MTU of the RDMA transport (payload per packet): 256, 512, 1024, 2048 or 4096 B "
          "[V: hardware-facts.md].");
  v.choice("headers", headers, "roce_v2_ipv4", {"roce_v2_ipv4", "roce_v2_ipv6", "infiniband"},
           "Header stack: RoCEv2 over IPv4 (62 B a packet) or IPv6 (82 B), or native "
           "InfiniBand (26 B) [V: ib_pack.h].");
  v.applies_when("vlan", "{headers}: roce_v2_ipv4 or roce_v2_ipv6",
                 [this] { return headers != "infiniband"; });
  v.applies_when("grh", "{headers}: infiniband", [this] { return headers == "infiniband"; });
  v.param("vlan", vlan, false, "RoCEv2: an 802.1Q tag, 4 B more per packet.");
  v.param("grh", grh, false, "InfiniBand: a global route header (40 B), as between subnets.");
}

void PacketizerConfig::validate(const config::Checker& c) const {
  const uint64_t m = mtu.count();
  c.require((m & (m - 1)) == 0, "mtu",
            mtu.str() + " is not an RDMA MTU (256, 512, 1024, 2048 or 4096 B)");
  c.require(!vlan || headers != "infiniband", "vlan", "a VLAN tag is for RoCEv2 headers");
  c.require(!grh || headers == "infiniband", "grh",
            "a GRH is for InfiniBand headers (RoCEv2 carries an IP header instead)");
}

Packetizer::Packetizer(const PacketizerConfig& cfg) : mtu_(static_cast<uint32_t>(cfg.mtu.count())) {
  constexpr uint32_t kBth = 12, kIcrc = 4;
  if (cfg.headers == "infiniband")
    base_ = 8 + (cfg.grh ? 40 : 0) + kBth + kIcrc + 2;  // LRH, GRH, BTH, ICRC, VCRC
  else if (cfg.headers == "roce_v2_ipv6")
    base_ = 14 + (cfg.vlan ? 4 : 0) + 40 + 8 + kBth + kIcrc + 4;  // ..., FCS
  else if (cfg.headers == "roce_v2_ipv4")
    base_ = 14 + (cfg.vlan ? 4 : 0) + 20 + 8 + kBth + kIcrc + 4;
  else
    throw std::invalid_argument("packetizer: unknown header stack " + cfg.headers);
  if (mtu_ > 1 && (mtu_ & (mtu_ - 1)) == 0)
    while ((uint32_t{1} << mtu_shift_) < mtu_) ++mtu_shift_;
}

uint32_t Packetizer::header_bytes(BthOpcode op) const {
  constexpr uint32_t kReth = 16, kImm = 4, kAeth = 4;
  switch (op) {
    case BthOpcode::kWriteFirst:
    case BthOpcode::kWriteOnly:
    case BthOpcode::kReadRequest:
      return base_ + kReth;
    case BthOpcode::kWriteOnlyImm:
      return base_ + kReth + kImm;
    case BthOpcode::kSendLastImm:
    case BthOpcode::kSendOnlyImm:
    case BthOpcode::kWriteLastImm:
      return base_ + kImm;
    case BthOpcode::kAck:
    case BthOpcode::kReadResponseFirst:
    case BthOpcode::kReadResponseLast:
    case BthOpcode::kReadResponseOnly:
      return base_ + kAeth;
    default:
      return base_;
  }
}

TxPacket Packetizer::nth(uint64_t bytes, uint64_t i, uint32_t psn, const Ops& ops) const {
  const uint64_t n = packets(bytes);
  const BthOpcode op = n == 1 ? ops.only : i == 0 ? ops.first : i + 1 == n ? ops.last : ops.middle;
  const auto payload = static_cast<uint32_t>(std::min<uint64_t>(mtu_, bytes - i * mtu_));
  return TxPacket{op, psn & kPsnMask, payload, header_bytes(op), i * mtu_};
}

uint32_t Packetizer::cut(uint64_t bytes, uint32_t psn, const Ops& ops,
                         std::vector<TxPacket>& out) const {
  const uint64_t n = packets(bytes);
  for (uint64_t i = 0; i < n; ++i) {
    out.push_back(nth(bytes, i, psn, ops));
    psn = (psn + 1) & kPsnMask;
  }
  return psn;
}

Packetizer::Ops Packetizer::ops(Opcode verb) {
  switch (verb) {
    case Opcode::kSend:
      return {BthOpcode::kSendFirst, BthOpcode::kSendMiddle, BthOpcode::kSendLast,
              BthOpcode::kSendOnly};
    case Opcode::kRdmaWrite:
      return {BthOpcode::kWriteFirst, BthOpcode::kWriteMiddle, BthOpcode::kWriteLast,
              BthOpcode::kWriteOnly};
    case Opcode::kRdmaWriteImm:
      return {BthOpcode::kWriteFirst, BthOpcode::kWriteMiddle, BthOpcode::kWriteLastImm,
              BthOpcode::kWriteOnlyImm};
    default:
      break;
  }
  throw std::invalid_argument("packetizer: only SEND and RDMA WRITE are cut into data packets");
}

TxPacket Packetizer::packet(Opcode verb, uint64_t bytes, uint64_t i, uint32_t psn) const {
  return nth(bytes, i, psn, ops(verb));
}

uint32_t Packetizer::segment(const Wqe& w, uint32_t psn, std::vector<TxPacket>& out) const {
  switch (w.opcode) {
    case Opcode::kSend:
    case Opcode::kRdmaWrite:
    case Opcode::kRdmaWriteImm:
      return cut(w.length, psn, ops(w.opcode), out);
    case Opcode::kRdmaRead: {
      // One request; the responses it asks for take the PSNs after it (IBA: a READ request
      // consumes as many PSNs as its responses).
      out.push_back(
          TxPacket{BthOpcode::kReadRequest, psn, 0, header_bytes(BthOpcode::kReadRequest), 0});
      return static_cast<uint32_t>((psn + packets(w.length)) & kPsnMask);
    }
    case Opcode::kRecv:
      break;
  }
  throw std::invalid_argument("packetizer: a RECV work request sends nothing");
}

namespace {
constexpr Packetizer::Ops kReadResponse{BthOpcode::kReadResponseFirst,
                                        BthOpcode::kReadResponseMiddle,
                                        BthOpcode::kReadResponseLast, BthOpcode::kReadResponseOnly};
}  // namespace

uint32_t Packetizer::read_response(uint64_t bytes, uint32_t psn, std::vector<TxPacket>& out) const {
  return cut(bytes, psn, kReadResponse, out);
}

TxPacket Packetizer::read_response_packet(uint64_t bytes, uint64_t i, uint32_t psn) const {
  return nth(bytes, i, psn, kReadResponse);
}

}  // namespace fabricsim::nic
