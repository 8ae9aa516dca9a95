#include "models/switch/pim.h"

#include <cassert>

namespace fabricsim::sw {
namespace {

// The member of rank k (0 = smallest) of the nw-word set s; k < popcount(s).
int select(const uint64_t* s, int nw, int k) {
  for (int w = 0; w < nw; ++w) {
    uint64_t x = s[w];
    const int c = __builtin_popcountll(x);
    if (k >= c) {
      k -= c;
      continue;
    }
    for (; k; --k) x &= x - 1;  // drop the k lowest members
    return (w << 6) + __builtin_ctzll(x);
  }
  return -1;
}

}  // namespace

PimScheduler::PimScheduler(int ports, int iterations, Rng& rng)
    : n_(ports),
      nw_((ports + 63) / 64),
      k_(iterations),
      rng_(rng),
      cols_(static_cast<size_t>(ports) * nw_, 0),
      grants_(static_cast<size_t>(ports) * nw_, 0),
      granted_(nw_),
      free_in_(nw_),
      free_out_(nw_),
      cand_(nw_) {}

void PimScheduler::schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                            std::vector<int>& match) {
  assert(static_cast<int>(requests.size()) == n_ && static_cast<int>(match.size()) == n_);
  assert(output_ready.size() == n_);
  if (nw_ == 1)
    run<1>(requests, output_ready, match);
  else if (nw_ == 2)
    run<2>(requests, output_ready, match);
  else
    run<0>(requests, output_ready, match);
}

template <int W>
void PimScheduler::run(const std::vector<PortSet>& requests, const PortSet& output_ready,
                       std::vector<int>& match) {
  const int n = n_;
  const int nw = W ? W : nw_;
  uint64_t* const cols = cols_.data();
  uint64_t* const grants = grants_.data();
  uint64_t* const granted = granted_.data();
  uint64_t* const free_in = free_in_.data();
  uint64_t* const free_out = free_out_.data();
  uint64_t* const cand = cand_.data();
  transpose_bits(
      n, n, [&](int r, int w) { return requests[r].word(w); },
      [&](int c, int w, uint64_t x) { cols[c * nw + w] = x; });
  for (auto& m : match) m = -1;
  for (int w = 0; w < nw; ++w) {
    const uint64_t valid = w == nw - 1 && (n & 63) ? (1ull << (n & 63)) - 1 : ~0ull;
    free_in[w] = valid;
    free_out[w] = output_ready.word(w) & valid;
  }
  // Uniform choice among the c members of s, drawing only when there is a choice.
  auto pick = [&](const uint64_t* s, int c) {
    return select(s, nw, c == 1 ? 0 : static_cast<int>(rng_.below(c)));
  };

  for (int it = 0; it < k_; ++it) {
    // grant: outputs in increasing order, each drawing among its unmatched requesters
    uint64_t any = 0;
    for (int w = 0; w < nw; ++w) granted[w] = 0;
    for (int w = 0; w < nw; ++w) {
      for (uint64_t x = free_out[w]; x; x &= x - 1) {
        const int out = (w << 6) + __builtin_ctzll(x);
        int c = 0;
        for (int v = 0; v < nw; ++v) c += __builtin_popcountll(cand[v] = cols[out * nw + v] & free_in[v]);
        if (!c) continue;
        const int in = pick(cand, c);
        grants[in * nw + w] |= 1ull << (out & 63);
        granted[in >> 6] |= 1ull << (in & 63);
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
        for (int v = 0; v < nw; ++v) c += __builtin_popcountll(gr[v]);
        const int out = pick(gr, c);
        for (int v = 0; v < nw; ++v) gr[v] = 0;
        match[in] = out;
        free_in[w] &= ~(1ull << (in & 63));
        free_out[out >> 6] &= ~(1ull << (out & 63));
      }
    }
  }
}

}  // namespace fabricsim::sw
