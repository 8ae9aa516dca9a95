#include "models/switch/pim.h"

#include <cassert>
#include <memory>

namespace fabricsim::sw {
namespace {

// Without -mpopcnt (the x86-64 baseline) __builtin_popcountll is a libgcc call; this is cheaper.
int popcount64(uint64_t x) {
#ifdef __POPCNT__
  return __builtin_popcountll(x);
#else
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<int>((x * 0x0101010101010101ull) >> 56);
#endif
}

// Position of the set bit of rank k (0 = lowest) in x; k < popcount(x). Branch-free broadword
// select: running byte counts locate the byte holding the bit, then the same trick on that
// byte's bits spread one per byte. (Clearing the k lowest bits in a loop mispredicts on every
// call, since k is random.)
int select64(uint64_t x, int k) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  // Index of the first byte of `cum` (running counts, each <= 64) that exceeds k: the high bit of
  // ((k | 0x80) - cum_b) is set iff cum_b <= k, with no borrow between bytes.
  auto first_above = [&](uint64_t cum) {
    const uint64_t le = ((static_cast<uint64_t>(k) * kOnes) | kHigh) - cum;
    return __builtin_ctzll((le & kHigh) ^ kHigh) >> 3;
  };
  uint64_t s = x - ((x >> 1) & 0x5555555555555555ull);
  s = (s & 0x3333333333333333ull) + ((s >> 2) & 0x3333333333333333ull);
  s = (s + (s >> 4)) & 0x0f0f0f0f0f0f0f0full;
  const uint64_t cum = s * kOnes;  // byte b: members in bytes 0..b
  const int byte = first_above(cum);
  k -= static_cast<int>(((cum << 8) >> (8 * byte)) & 0xff);  // members in lower bytes
  const uint64_t b = (x >> (8 * byte)) & 0xff;
  // Byte i of `bits` is bit i of b (0 or 1); their running sums again locate rank k.
  const uint64_t bits =
      ((((b * kOnes) & 0x8040201008040201ull) + 0x7f7f7f7f7f7f7f7full) & kHigh) >> 7;
  return 8 * byte + first_above(bits * kOnes);
}

// The member of rank k (0 = smallest) of the nw-word set s; k < its size.
template <int W>
int select(const uint64_t* s, int k) {
  if (W == 1) return select64(s[0], k);
  for (int w = 0;; ++w) {
    const int c = popcount64(s[w]);
    if (k < c) return (w << 6) + select64(s[w], k);
    k -= c;
  }
}

// Index of the word holding bit i; constant for single-word sets, so the compiler can keep those
// in registers instead of chaining read-modify-writes through memory.
template <int W>
int word_of(int i) {
  return W == 1 ? 0 : i >> 6;
}

}  // namespace

PimScheduler::PimScheduler(int ports, int iterations, Rng& rng)
    : VoqScheduler(ports),
      n_(ports),
      nw_((ports + 63) / 64),
      k_(iterations),
      rng_(rng),
      cols_(static_cast<size_t>(ports) * nw_, 0),
      grants_(static_cast<size_t>(ports) * nw_, 0),
      granted_(nw_),
      free_in_(nw_),
      free_out_(nw_),
      accepted_(nw_),
      cand_(nw_) {}

void PimScheduler::schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                            std::vector<int>& match) {
  assert(static_cast<int>(requests.size()) == n_ && static_cast<int>(match.size()) == n_);
  assert(output_ready.size() == n_);
  dispatch_words(nw_, [&](auto w) { run<decltype(w)::value>(requests, output_ready, match); });
}

template <int W>
void PimScheduler::run(const std::vector<PortSet>& requests, const PortSet& output_ready,
                       std::vector<int>& match) {
  const int n = n_;
  const int nw = W ? W : nw_;
  uint64_t* const cols = cols_.data();
  uint64_t* const grants = grants_.data();
  // Small sets in locals when W is known (see word_of); member scratch otherwise.
  uint64_t granted_l[W ? W : 1], free_in_l[W ? W : 1], free_out_l[W ? W : 1], accepted_l[W ? W : 1],
      cand_l[W ? W : 1];
  uint64_t* const granted = W ? granted_l : granted_.data();
  uint64_t* const free_in = W ? free_in_l : free_in_.data();
  uint64_t* const free_out = W ? free_out_l : free_out_.data();
  uint64_t* const accepted = W ? accepted_l : accepted_.data();
  uint64_t* const cand = W ? cand_l : cand_.data();
  transpose_bits(
      n, n, [&](int r, int w) { return requests[r].word(w); },
      [&](int c, int w, uint64_t x) { cols[c * nw + w] = x; });
  for (auto& m : match) m = -1;
  matched_.clear_all();
  for (int w = 0; w < nw; ++w) {
    const uint64_t valid = w == nw - 1 && (n & 63) ? (1ull << (n & 63)) - 1 : ~0ull;
    free_in[w] = valid;
    free_out[w] = output_ready.word(w) & valid;
  }
  // Uniform choice among the c members of s, drawing only when there is a choice.
  auto pick = [&](const uint64_t* s, int c) {
    return select<W>(s, c == 1 ? 0 : static_cast<int>(rng_.below(c)));
  };

  for (int it = 0; it < k_; ++it) {
    // grant: outputs in increasing order, each drawing among its unmatched requesters
    uint64_t any = 0;
    for (int w = 0; w < nw; ++w) {
      granted[w] = 0;
      accepted[w] = 0;
    }
    for (int w = 0; w < nw; ++w) {
      for (uint64_t x = free_out[w]; x; x &= x - 1) {
        const int out = (w << 6) + __builtin_ctzll(x);
        int c = 0;
        for (int v = 0; v < nw; ++v) c += popcount64(cand[v] = cols[out * nw + v] & free_in[v]);
        if (!c) continue;
        const int in = pick(cand, c);
        grants[in * nw + w] |= 1ull << (out & 63);
        granted[word_of<W>(in)] |= 1ull << (in & 63);
        any = 1;
      }
    }
    if (!any) break;
    // accept: inputs in increasing order, each drawing among its grants
    for (int w = 0; w < nw; ++w) {
      for (uint64_t x = granted[w]; x; x &= x - 1) {
        const int in = (w << 6) + __builtin_ctzll(x);
        uint64_t* const gr = grants + in * nw;
        int c = 0;
        for (int v = 0; v < nw; ++v) c += popcount64(gr[v]);
        const int out = pick(gr, c);
        for (int v = 0; v < nw; ++v) gr[v] = 0;
        match[in] = out;
        accepted[word_of<W>(out)] |= 1ull << (out & 63);
      }
    }
    for (int w = 0; w < nw; ++w) {
      matched_.set_word(w, matched_.word(w) | granted[w]);
      free_in[w] &= ~granted[w];  // every input holding a grant accepted one
      free_out[w] &= ~accepted[w];
    }
  }
}

FABRICSIM_REGISTER_SCHEDULER(pim) {
  registry.add("pim",
               "parallel iterative matching (Anderson et al. 1993), random grants and accepts, "
               "`iterations` rounds",
               [](int ports, int iterations, Rng& rng) {
                 return std::make_unique<PimScheduler>(ports, iterations, rng);
               });
}

}  // namespace fabricsim::sw
