// Frame loss from bit errors behind an RS-FEC decoder.
//
// Hardware: the RS(n,k) decoder of an 802.3 PHY corrects up to t symbol errors per codeword; an
// uncorrectable codeword is flagged and the PCS corrupts the blocks it carries, so every MAC frame
// overlapping it fails and is dropped [V2: 802.3 cl. 91/119 behaviour]. Model, with independent bit
// errors at the pre-FEC BER b (no burst/DFE error propagation, which would make this optimistic):
//   symbol error  p_s  = 1 - (1 - b)^m                       (m = 10-bit symbols)
//   codeword loss P_cw = sum_{i=t+1..n} C(n,i) p_s^i (1-p_s)^(n-i)   (log domain: no underflow)
//   frame loss    P_f(c) = 1 - (1 - P_cw)^c                 (frame overlaps c codewords)
// A codeword carries 640 bytes of the MAC stream (20 x 257-bit blocks of 32 bytes), so a frame of
// L stream bytes starting at stream offset o overlaps floor((o mod 640 + L - 1) / 640) + 1
// codewords. Without FEC a frame is lost on any bit error: 1 - (1 - b)^(8 L).
#pragma once

#include <cstdint>

#include "models/common/rng.h"
#include "models/link/wire_format.h"

namespace fabricsim::link {

class FecErrorModel {
 public:
  static constexpr int kTable = 64;  // frames up to 64 codewords (40 KB) use a precomputed table

  FecErrorModel() = default;
  // ber in [0, 0.5] (std::invalid_argument otherwise). codeword_mac_bytes: MAC-stream bytes per
  // codeword (WireFormat::codeword_mac_bytes(), 640 for RS-FEC).
  FecErrorModel(FecType fec, double pre_fec_ber, uint32_t codeword_mac_bytes = 640);

  double ber() const { return ber_; }
  bool error_free() const { return ber_ == 0; }
  double symbol_error_prob() const { return p_sym_; }
  // log of P(codeword uncorrectable) (-inf when 0) and the probability itself.
  double log_codeword_loss() const { return log_pcw_; }
  double codeword_loss() const { return pcw_; }
  // Codewords a frame of `bytes` stream bytes starting at stream byte `offset` overlaps.
  uint32_t codewords_spanned(uint64_t offset, uint32_t bytes) const {
    if (bytes == 0) return 0;
    return static_cast<uint32_t>((offset % cw_bytes_ + bytes - 1) / cw_bytes_) + 1;
  }
  // P(frame lost) for a frame overlapping `codewords` codewords (with FEC) or, without FEC, of
  // `bytes` bytes.
  double frame_loss(uint32_t codewords) const;
  double frame_loss_no_fec(uint32_t bytes) const;
  double frame_loss_at(uint64_t offset, uint32_t bytes) const {
    return fec_ == FecType::kNone ? frame_loss_no_fec(bytes)
                                  : frame_loss(codewords_spanned(offset, bytes));
  }
  // Decides whether the frame at stream offset `offset` of `bytes` bytes is lost; draws one number
  // from `rng` unless the BER is 0 (then no draw, so error-free links do not use the stream).
  bool sample_loss(uint64_t offset, uint32_t bytes, Rng& rng) const;

  // The binomial tail P(X > t), X ~ Bin(n, p), computed in the log domain.
  static double log_binomial_tail(int n, int t, double p);

 private:
  FecType fec_ = FecType::kNone;
  double ber_ = 0;
  uint64_t cw_bytes_ = 640;
  double p_sym_ = 0;
  double log_pcw_ = 0;
  double pcw_ = 0;
  uint64_t threshold_[kTable + 1] = {};  // Rng::bernoulli_threshold(frame_loss(c)), c = 0..64
};

}  // namespace fabricsim::link
