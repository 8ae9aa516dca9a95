#include "models/switch/wavefront.h"

#include <cassert>
#include <memory>

namespace fabricsim::sw {
namespace {

// dst = src rotated right by s within an n-bit ring of nw words: dst bit m = src bit (m + s) mod n.
// s in [0, n); src has no bits at or above n; dst and src distinct.
template <int W>
void rotate_right(const uint64_t* src, int s, int n, int nw, uint64_t* dst) {
  if (W == 1) {
    const uint64_t mask = n == 64 ? ~0ull : (1ull << n) - 1;
    dst[0] = s == 0 ? src[0] : ((src[0] >> s) | (src[0] << (n - s))) & mask;
    return;
  }
  if (W == 2) {  // 65..128 ports: one 128-bit rotation
    using u128 = unsigned __int128;
    const u128 v = static_cast<u128>(src[1]) << 64 | src[0];
    const u128 mask = n == 128 ? ~static_cast<u128>(0) : (static_cast<u128>(1) << n) - 1;
    const u128 r = s == 0 ? v : ((v >> s) | (v << (n - s))) & mask;
    dst[0] = static_cast<uint64_t>(r);
    dst[1] = static_cast<uint64_t>(r >> 64);
    return;
  }
  if (W) nw = W;
  // (src >> s) | (src << (n - s)), masked to n bits.
  const int q = s >> 6, r = s & 63;
  for (int w = 0; w < nw; ++w) {
    uint64_t v = w + q < nw ? src[w + q] >> r : 0;
    if (r && w + q + 1 < nw) v |= src[w + q + 1] << (64 - r);
    dst[w] = v;
  }
  if (s == 0) return;
  const int t = n - s, ql = t >> 6, rl = t & 63;
  for (int w = ql; w < nw; ++w) {
    uint64_t v = src[w - ql] << rl;
    if (rl && w - ql - 1 >= 0) v |= src[w - ql - 1] >> (64 - rl);
    dst[w] |= v;
  }
  if (n & 63) dst[nw - 1] &= (1ull << (n & 63)) - 1;
}

// In place, by one: bit m takes bit (m + 1) mod n.
template <int W>
void rotate_right_1(uint64_t* v, int n, int nw) {
  if (W) nw = W;
  const uint64_t b0 = v[0] & 1;
  for (int w = 0; w < nw; ++w) v[w] = (v[w] >> 1) | (w + 1 < nw ? v[w + 1] << 63 : 0);
  v[(n - 1) >> 6] |= b0 << ((n - 1) & 63);
}

}  // namespace

WavefrontScheduler::WavefrontScheduler(int ports)
    : VoqScheduler(ports),
      n_(ports),
      nw_((ports + 63) / 64),
      skew_(static_cast<size_t>(ports) * nw_, 0),
      diag_(static_cast<size_t>(ports) * nw_, 0),
      free_rows_(nw_),
      free_cols_(nw_),
      cand_(nw_) {}

void WavefrontScheduler::schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                                  std::vector<int>& match) {
  assert(static_cast<int>(requests.size()) == n_ && static_cast<int>(match.size()) == n_);
  assert(output_ready.size() == n_);
  dispatch_words(nw_, [&](auto w) { run<decltype(w)::value>(requests, output_ready, match); });
  p_ = p_ + 1 == n_ ? 0 : p_ + 1;
}

// Skew then transpose, so that each wrapped diagonal is one bit vector over rows and a whole
// diagonal is decided with a few word operations, as the hardware's cells decide in parallel.
template <int W>
void WavefrontScheduler::run(const std::vector<PortSet>& requests, const PortSet& output_ready,
                             std::vector<int>& match) {
  const int n = n_;
  const int nw = W ? W : nw_;
  uint64_t* const skew = skew_.data();
  uint64_t* const diag = diag_.data();
  // Small sets in locals when W is known, so the compiler can keep them in registers (through the
  // member vectors it must assume they alias diag_); member scratch otherwise.
  uint64_t fr_l[W ? W : 1], fc_l[W ? W : 1], cand_l[W ? W : 1];
  uint64_t* const fr = W ? fr_l : free_rows_.data();
  uint64_t* const fc = W ? fc_l : free_cols_.data();
  uint64_t* const cand = W ? cand_l : cand_.data();
  for (int i = 0; i < n; ++i) rotate_right<W>(requests[i].data(), i, n, nw, skew + i * nw);
  transpose_bits(
      n, n, [&](int r, int w) { return skew[r * nw + w]; },
      [&](int c, int w, uint64_t x) { diag[c * nw + w] = x; });
  for (auto& m : match) m = -1;
  matched_.clear_all();
  for (int w = 0; w < nw; ++w) {
    const uint64_t valid = w == nw - 1 && (n & 63) ? (1ull << (n & 63)) - 1 : ~0ull;
    fr[w] = valid;
    cand[w] = output_ready.word(w) & valid;
  }
  rotate_right<W>(cand, p_, n, nw, fc);  // into diagonal p's frame

  int d = p_;
  for (int step = 0; step < n; ++step) {
    const uint64_t* const dg = diag + d * nw;
    uint64_t any = 0;
    for (int w = 0; w < nw; ++w) any |= cand[w] = dg[w] & fr[w] & fc[w];
    if (any) {
      uint64_t rows_left = 0, cols_left = 0;
      for (int w = 0; w < nw; ++w) {
        for (uint64_t x = cand[w]; x; x &= x - 1) {
          const int i = (w << 6) + __builtin_ctzll(x);
          const int j = i + d;
          match[i] = j >= n ? j - n : j;
        }
        matched_.set_word(w, matched_.word(w) | cand[w]);
        rows_left |= fr[w] &= ~cand[w];
        cols_left |= fc[w] &= ~cand[w];
      }
      if (!rows_left || !cols_left) break;
    }
    rotate_right_1<W>(fc, n, nw);  // into diagonal d + 1's frame
    d = d + 1 == n ? 0 : d + 1;
  }
}

FABRICSIM_REGISTER_SCHEDULER(wavefront) {
  registry.add("wavefront",
               "wavefront arbiter (Tamir and Chi), a maximal match in one pass over the "
               "diagonals, the first diagonal rotating every slot (iterations ignored)",
               [](int ports, int, Rng&) { return std::make_unique<WavefrontScheduler>(ports); });
}

}  // namespace fabricsim::sw
