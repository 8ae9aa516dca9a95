#include "models/link/fec_error_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fabricsim::link {

double FecErrorModel::log_binomial_tail(int n, int t, double p) {
  if (t >= n || p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return 0;
  const double lp = std::log(p), lq = std::log1p(-p);
  const double lfn = std::lgamma(n + 1.0);
  // Terms for i = t+1..n; log-sum-exp around the largest.
  double mx = -std::numeric_limits<double>::infinity();
  for (int i = t + 1; i <= n; ++i) {
    const double l = lfn - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * lp + (n - i) * lq;
    mx = std::max(mx, l);
  }
  double s = 0;
  for (int i = t + 1; i <= n; ++i) {
    const double l = lfn - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * lp + (n - i) * lq;
    s += std::exp(l - mx);
  }
  return std::min(0.0, mx + std::log(s));
}

FecErrorModel::FecErrorModel(FecType fec, double pre_fec_ber, uint32_t codeword_mac_bytes)
    : fec_(fec), ber_(pre_fec_ber), cw_bytes_(codeword_mac_bytes ? codeword_mac_bytes : 640) {
  if (!(pre_fec_ber >= 0 && pre_fec_ber <= 0.5))
    throw std::invalid_argument("FecErrorModel: pre-FEC BER must be in [0, 0.5]");
  if (fec == FecType::kNone) {
    log_pcw_ = -std::numeric_limits<double>::infinity();
    return;
  }
  const FecCode c = fec_code(fec);
  p_sym_ = -std::expm1(c.symbol_bits * std::log1p(-ber_));
  log_pcw_ = log_binomial_tail(c.n, c.t, p_sym_);
  pcw_ = std::exp(log_pcw_);
  for (int k = 0; k <= kTable; ++k) threshold_[k] = Rng::bernoulli_threshold(frame_loss(k));
}

double FecErrorModel::frame_loss(uint32_t codewords) const {
  if (pcw_ <= 0) return 0;
  if (pcw_ >= 1) return codewords ? 1 : 0;
  return -std::expm1(codewords * std::log1p(-pcw_));
}

double FecErrorModel::frame_loss_no_fec(uint32_t bytes) const {
  return -std::expm1(8.0 * bytes * std::log1p(-ber_));
}

bool FecErrorModel::sample_loss(uint64_t offset, uint32_t bytes, Rng& rng) const {
  if (ber_ == 0) return false;
  if (fec_ == FecType::kNone) return rng.bernoulli(frame_loss_no_fec(bytes));
  const uint32_t c = codewords_spanned(offset, bytes);
  if (c <= kTable) return rng.bernoulli_below(threshold_[c]);
  return rng.bernoulli(frame_loss(c));
}

}  // namespace fabricsim::link
