// Deterministic, platform-independent random numbers.
//
// std:: distributions differ between standard libraries, so FabricSim draws everything from its own
// xoshiro256** generator and its own distributions: the same seed gives the same bytes out anywhere.
// Each block derives its stream from the run seed and its hierarchical name (`Rng::derive`), so adding
// a block does not perturb the random streams of the others.
#pragma once

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
  // The same distribution by counting failed trials: cheaper than a log() when p is large
  // (1/p draws on average), so used for p >= 1/4.
  uint64_t geometric_trials(double p) {
    uint64_t k = 0;
    while (!(uniform() < p)) ++k;
    return k;
  }

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

}  // namespace fabricsim
