// Deterministic, platform-independent random numbers.
//
// std:: distributions differ between standard libraries, so FabricSim draws everything from its own
// xoshiro256** generator and its own distributions: the same seed gives the same bytes out
// anywhere. Each block derives its stream from the run seed and its hierarchical name
// (`Rng::derive`), so adding a block does not perturb the random streams of the others.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace fabricsim {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { seed_with(seed); }

  // A stream for block `name` under run seed `seed` (FNV-1a of the name mixed into the seed).
  static Rng derive(uint64_t seed, std::string_view name) {
    uint64_t h = 1469598103934665603ull;
    for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return Rng(seed ^ (h * 0x9e3779b97f4a7c15ull));
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [0, n), n > 0 (Lemire's nearly-divisionless method, unbiased).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
    uint64_t l = static_cast<uint64_t>(m);
    if (l < n) {
      const uint64_t t = (0 - n) % n;
      while (l < t) {
        m = static_cast<unsigned __int128>(next_u64()) * n;
        l = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  bool bernoulli(double p) { return uniform() < p; }

  // Number of failures before the first success of a Bernoulli(p) trial, p in (0, 1].
  uint64_t geometric(double p) { return geometric_scaled(geometric_scale(p)); }
  // The same draw with the per-p constant hoisted out of hot loops:
  // geometric(p) == geometric_scaled(geometric_scale(p)).
  static double geometric_scale(double p) { return p >= 1.0 ? 0.0 : 1.0 / std::log1p(-p); }
  uint64_t geometric_scaled(double scale) {
    if (scale == 0.0) return 0;
    const double u = 1.0 - uniform();  // (0, 1]
    return static_cast<uint64_t>(std::floor(std::log(u) * scale));
  }
  // bernoulli(p) as an integer compare of the 53 bits uniform() uses: u * 2^-53 < p exactly when
  // u < ceil(p * 2^53), so bernoulli_below(bernoulli_threshold(p)) == bernoulli(p), draw for draw,
  // without the int-to-double conversion.
  static uint64_t bernoulli_threshold(double p) {
    if (!(p > 0)) return 0;
    return p >= 1 ? 1ull << 53 : static_cast<uint64_t>(std::ceil(p * 0x1.0p53));
  }
  bool bernoulli_below(uint64_t threshold) { return (next_u64() >> 11) < threshold; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  void seed_with(uint64_t seed) {
    for (auto& s : s_) {  // splitmix64
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t s_[4];
};

// Geometric(p) draws (failures before the first success, p in (0, 1]) with the per-p work done
// once, for hot loops that draw with one fixed p. p = 1 is 0 without a draw. For p >= 1/4, one
// next_u64() is compared with the distribution function at 0..L-1, branch-free: a counted-trials
// loop exits unpredictably, and a branch miss costs more than the compares. L = 4 for p >= 1/2,
// else 8, so the tail (probability (1-p)^L <= 10%) is rare; it restarts with L added
// (memoryless). Smaller p: the log inversion. Like uniform(), k depends only on the top 53 bits
// of the draw (the distribution function is rounded up to multiples of 2^-53, so P(k = 0) is
// exactly that of bernoulli(p)); the low kSpareBits are handed to the caller, who may use them
// as an independent draw.
class GeometricSampler {
 public:
  static constexpr int kSpareBits = 11;

  GeometricSampler() = default;
  explicit GeometricSampler(double p) {
    if (p >= 1) return;
    if (p < 0.25) {
      mode_ = kLog;
      scale_ = Rng::geometric_scale(p);
      return;
    }
    mode_ = p >= 0.5 ? kTable4 : kTable8;
    double tail = 1;  // P(K > i) = (1-p)^(i+1)
    uint64_t t = Rng::bernoulli_threshold(p);
    for (int i = 0; i < 8; ++i) {
      tail *= 1 - p;
      if (i > 0) t = std::max(t, static_cast<uint64_t>(std::ceil((1 - tail) * 0x1.0p53)));
      // x >= t << 11 exactly when (x >> 11) >= t; the top of the range (t = 2^53, "never") is
      // approximated by x == 2^64 - 1.
      cdf_[i] = t >= (1ull << 53) ? ~0ull : t << kSpareBits;
    }
  }

  uint64_t operator()(Rng& rng) const {
    uint32_t spare = 0;
    return mode_ == kZero ? 0 : (*this)(rng, spare);
  }
  // The same, also returning kSpareBits bits of the first draw that k does not depend on (for
  // p = 1 that draw is made just for them).
  __attribute__((always_inline)) uint64_t operator()(Rng& rng, uint32_t& spare) const {
    const uint64_t x = rng.next_u64();
    spare = static_cast<uint32_t>(x) & ((1u << kSpareBits) - 1);
    if (__builtin_expect(mode_ == kTable4, 1)) return table<4>(rng, x);
    if (mode_ == kTable8) return table<8>(rng, x);
    return mode_ == kLog ? log_inversion(x) : 0;
  }

 private:
  enum Mode : uint8_t { kZero, kTable4, kTable8, kLog };

  __attribute__((noinline)) uint64_t log_inversion(uint64_t x) const {
    // As geometric_scaled(); log(u) * scale_ >= 0, so the conversion's truncation is the floor.
    const double u = 1.0 - static_cast<double>(x >> 11) * 0x1.0p-53;  // (0, 1]
    return static_cast<uint64_t>(std::log(u) * scale_);
  }

  template <int L>
  __attribute__((always_inline)) uint64_t table(Rng& rng, uint64_t x) const {
    for (uint64_t base = 0;; base += L) {
      uint64_t k = 0;
#pragma GCC unroll 8
      for (int i = 0; i < L; ++i) k += x >= cdf_[i];
      if (__builtin_expect(k < L, 1)) return base + k;
      x = rng.next_u64();
    }
  }

  Mode mode_ = kZero;
  double scale_ = 0;
  uint64_t cdf_[8] = {};  // P(K <= i), as thresholds on a whole draw
};

}  // namespace fabricsim
