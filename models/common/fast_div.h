// Exact division by a run-time constant with a multiply instead of a 64-bit divide.
//
// The core divides times by its clock period several times per packet; a hardware divide costs
// tens of cycles of latency, a 64x64->128 multiply a few. With m = floor(2^64 / d) the estimate
// floor(x * m / 2^64) is the true quotient or one less, so one correction makes it exact.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace fabricsim {

class DivideBy {
 public:
  explicit DivideBy(uint64_t d) : d_(d) {
    if (d < 2) throw std::invalid_argument("DivideBy: divisor must be at least 2");
    m_ = static_cast<uint64_t>((static_cast<unsigned __int128>(1) << 64) / d);
  }
  uint64_t floor(uint64_t x) const {
    uint64_t q = static_cast<uint64_t>((static_cast<unsigned __int128>(x) * m_) >> 64);
    if (x - q * d_ >= d_) ++q;
    return q;
  }
  uint64_t ceil(uint64_t x) const {
    const uint64_t q = floor(x);
    return q + (q * d_ != x);
  }
  uint64_t divisor() const { return d_; }

 private:
  uint64_t d_;
  uint64_t m_;
};

}  // namespace fabricsim
