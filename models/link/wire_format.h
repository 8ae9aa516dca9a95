// Wire-level accounting of one (sub-)port: SerDes lanes -> PCS transcoding -> FEC -> MAC data rate,
// and the time a frame occupies the wire.
//
// Hardware: an IEEE 802.3 PHY (or an IB PHY using the same PAM4 SerDes and FEC). With RS-FEC the
// 64b/66b PCS blocks are transcoded to 256b/257b and protected by Reed-Solomon over 10-bit symbols
// [V2: 802.3 cl. 91/119; hardware-facts.md "Ethernet link layer"], so
//   MAC rate = lanes x lane_rate x (k / n) x (256 / 257)
// e.g. 800GBASE-R: 8 x 106.25G x 514/544 x 256/257 = 800 Gb/s exactly [I]. Without FEC the PCS
// runs 64b/66b: MAC rate = lanes x lane_rate x 64/66. Alignment markers are inserted by deleting
// idles (the MAC rate above is exact), so they cost no MAC bandwidth and are not modelled.
// Ethernet framing: a frame of F bytes (DA..FCS) occupies max(F, 64) + 8 (preamble+SFD) + 12 (IFG)
// bytes at the MAC rate [R: 802.3 cl. 4; hardware-facts.md]. InfiniBand framing: no minimum frame,
// no IFG; each packet carries a start and an end delimiter, 2 bytes [R: IBTA Vol 2 PHY, SDP/EGP].
#pragma once

#include <cstdint>

#include "models/common/packet.h"
#include "models/common/units.h"

namespace fabricsim::link {

enum class FecType { kRs544, kRs528, kNone };
enum class Framing { kEthernet, kInfiniband };

// Reed-Solomon code parameters over `symbol_bits`-bit symbols, correcting up to t symbol errors.
struct FecCode {
  int n = 0;            // codeword symbols
  int k = 0;            // message symbols
  int symbol_bits = 0;  // bits per symbol
  int t = 0;            // correctable symbols, (n - k) / 2
};
// RS(544,514) "KP4": t = 15; RS(528,514) "KR4": t = 7 [V2: 802.3 cl. 91]. kNone: all zeros.
FecCode fec_code(FecType f);

class WireFormat {
 public:
  static constexpr uint32_t kMinFrame = 64;           // bytes, DA..FCS [R: 802.3]
  static constexpr uint32_t kPreambleSfd = 8;         // bytes [R: 802.3]
  static constexpr uint32_t kIfg = 12;                // bytes, minimum average IFG [R: 802.3]
  static constexpr uint32_t kIbDelimiters = 2;        // SDP/SLP + EGP symbols [R: IBTA Vol 2]
  static constexpr uint32_t kPcsBlockBytes = 32;      // MAC bytes per 257-bit transcoded block
  static constexpr uint32_t kBlocksPerCodeword = 20;  // 5140-bit RS message = 20 x 257 bits

  WireFormat() = default;
  // lanes >= 1 and a non-zero lane rate (std::invalid_argument otherwise).
  WireFormat(int lanes, BitRate lane_rate, FecType fec, Framing framing);

  int lanes() const { return lanes_; }
  BitRate lane_rate() const { return lane_rate_; }
  FecType fec() const { return fec_; }
  Framing framing() const { return framing_; }
  // Raw signalling rate of all lanes.
  BitRate line_rate() const { return line_rate_; }
  // MAC data rate, rounded to the nearest bit/s (exact for the standard rates).
  BitRate mac_rate() const { return mac_rate_; }
  // mac_rate / line_rate, unrounded: (k/n) x (256/257) with FEC, 64/66 without.
  double coding_efficiency() const { return coding_eff_; }

  // Bytes a frame of `frame_bytes` occupies at the MAC rate, including framing overhead.
  uint32_t wire_bytes(uint32_t frame_bytes) const {
    if (framing_ == Framing::kInfiniband) return frame_bytes + kIbDelimiters;
    return (frame_bytes < kMinFrame ? kMinFrame : frame_bytes) + kPreambleSfd + kIfg;
  }
  Time wire_time(uint32_t frame_bytes) const {
    return mac_rate_.serialization(Bytes(wire_bytes(frame_bytes)));
  }
  // Of a frame's wire bytes, those bit errors can corrupt: all but the IFG (idles).
  uint32_t exposed_bytes(uint32_t frame_bytes) const {
    const uint32_t wire = wire_bytes(frame_bytes);
    return framing() == Framing::kEthernet ? wire - kIfg : wire;
  }
  // Closed-form wire efficiency of back-to-back frames carrying `payload_bytes` each:
  // goodput / line rate = payload / wire_bytes(frame) x coding_efficiency.
  double efficiency(uint32_t frame_bytes, uint32_t payload_bytes) const {
    return static_cast<double>(payload_bytes) / wire_bytes(frame_bytes) * coding_eff_;
  }
  double goodput_bps(uint32_t frame_bytes, uint32_t payload_bytes) const {
    return efficiency(frame_bytes, payload_bytes) * static_cast<double>(line_rate_.as_bps());
  }
  // MAC-stream bytes carried by one FEC codeword (640 with RS-FEC); 0 without FEC.
  uint32_t codeword_mac_bytes() const {
    return fec_ == FecType::kNone ? 0 : kPcsBlockBytes * kBlocksPerCodeword;
  }
  // The same framing as a FrameOverhead for the device models: Ethernet pads to 64 B and spends
  // 8 B of preamble + SFD before and 12 B of IFG after a frame; IB spends a start and an end
  // delimiter (1 B each).
  FrameOverhead overhead() const {
    if (framing_ == Framing::kInfiniband) return {0, 1, kIbDelimiters - 1};
    return {kMinFrame, kPreambleSfd, kIfg};
  }
  // Duration of one PAUSE quantum (512 bit times at the MAC rate) [V: 802.1Qbb / 802.3 Annex 31B].
  Time pause_quantum() const;

 private:
  int lanes_ = 0;
  BitRate lane_rate_;
  FecType fec_ = FecType::kNone;
  Framing framing_ = Framing::kEthernet;
  BitRate line_rate_;
  BitRate mac_rate_;
  double coding_eff_ = 0;
};

}  // namespace fabricsim::link
