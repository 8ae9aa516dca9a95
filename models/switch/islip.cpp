#include "models/switch/islip.h"

#include <cassert>

namespace fabricsim::sw {
namespace {

bool test_bit(const uint64_t* s, int i) { return (s[i >> 6] >> (i & 63)) & 1; }

// First member of the nw-word set s at or after `from`, wrapping around; -1 if s is empty.
template <int W>
int first_from(const uint64_t* s, int nw, int from) {
  if (W) nw = W;
  int wi = from >> 6;
  const uint64_t w = s[wi] & (~0ull << (from & 63));
  if (w) return (wi << 6) + __builtin_ctzll(w);
  for (int k = 0; k < nw; ++k) {  // the rest, then wi itself again from bit 0
    wi = wi + 1 == nw ? 0 : wi + 1;
    if (s[wi]) return (wi << 6) + __builtin_ctzll(s[wi]);
  }
  return -1;
}

}  // namespace

RoundRobinMatcher::RoundRobinMatcher(int ports, int iterations, PointerRule rule)
    : n_(ports),
      nw_((ports + 63) / 64),
      k_(rule == PointerRule::kRrm ? 1 : iterations),
      rule_(rule),
      g_(ports, 0),
      a_(ports, 0),
      at_(static_cast<size_t>(ports) * nw_, 0),
      grants_(static_cast<size_t>(ports) * nw_, 0),
      free_in_(nw_),
      free_out_(nw_),
      pending_(nw_),
      active_(nw_),
      granted_(nw_) {
  reset();
}

void RoundRobinMatcher::reset() {
  for (auto& p : g_) p = 0;
  for (auto& p : a_) p = 0;
  for (auto& w : at_) w = 0;
  for (int j = 0; j < n_; ++j) at_[j >> 6] |= 1ull << (j & 63);  // all in row 0
}

void RoundRobinMatcher::schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
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

// The grant phase is computed row by row (input by input) rather than output by output, so the
// request matrix is never transposed: scanning inputs i = 0..N-1, output j joins the search at
// row g[j] (`at_`), and the first free requesting input it meets gets its grant; a second scan of
// rows 0..N-1 covers the wrap-around part [0, g[j]) for outputs still without a grant (an output
// still pending at row i >= g[j] in that scan has no requester in [g[j], N), so it cannot grant
// there by mistake). That is exactly "the first requesting input at or after g[j]" for every
// output, in at most 2N word steps.
template <int W>
void RoundRobinMatcher::run(const std::vector<PortSet>& requests, const PortSet& output_ready,
                            std::vector<int>& match) {
  const int n = n_;
  const int nw = W ? W : nw_;
  uint64_t* const at = at_.data();
  uint64_t* const grants = grants_.data();
  int* const g = g_.data();
  int* const a = a_.data();
  // With W known the small sets live in locals the compiler can keep in registers; through the
  // member vectors it would have to assume they alias grants_/at_ and reload them every row.
  uint64_t local[5][W ? W : 1];
  uint64_t* const free_in = W ? local[0] : free_in_.data();
  uint64_t* const free_out = W ? local[1] : free_out_.data();
  uint64_t* const pending = W ? local[2] : pending_.data();
  uint64_t* const active = W ? local[3] : active_.data();
  uint64_t* const granted = W ? local[4] : granted_.data();
  // Moves output j's grant pointer, keeping at_ in step.
  auto move_grant_pointer = [&](int j, int to) {
    const uint64_t bit = 1ull << (j & 63);
    at[g[j] * nw + (j >> 6)] &= ~bit;
    at[to * nw + (j >> 6)] |= bit;
    g[j] = to;
  };
  for (auto& m : match) m = -1;
  for (int w = 0; w < nw; ++w) {
    const uint64_t valid = w == nw - 1 && (n & 63) ? (1ull << (n & 63)) - 1 : ~0ull;
    free_in[w] = valid;
    free_out[w] = output_ready.word(w) & valid;
  }

  for (int it = 0; it < k_; ++it) {
    // --- grant --- (only rows in `granted` get their grants_ row written and read)
    uint64_t left = 0;
    for (int w = 0; w < nw; ++w) {
      left |= pending[w] = free_out[w];
      active[w] = 0;
      granted[w] = 0;
    }
    if (!left) break;
    bool wrap = true;
    for (int i = 0; i < n; ++i) {  // pass 1: rows [g[j], N) for each output j
      for (int w = 0; w < nw; ++w) active[w] |= at[i * nw + w];
      if (!test_bit(free_in, i)) continue;
      const uint64_t* const req = requests[i].words().data();
      uint64_t got = 0;
      left = 0;
      for (int w = 0; w < nw; ++w) {
        const uint64_t gr = req[w] & active[w] & pending[w];
        grants[i * nw + w] = gr;
        got |= gr;
        left |= pending[w] &= ~gr;
      }
      granted[i >> 6] |= static_cast<uint64_t>(got != 0) << (i & 63);
      if (!left) {
        wrap = false;
        break;
      }
    }
    for (int i = 0; wrap && i < n; ++i) {  // pass 2: rows [0, g[j]) for outputs still pending
      if (!test_bit(free_in, i)) continue;
      const uint64_t* const req = requests[i].words().data();
      uint64_t got = 0;
      left = 0;
      for (int w = 0; w < nw; ++w) {
        const uint64_t gr = req[w] & pending[w];
        grants[i * nw + w] |= gr;  // written in pass 1, which covered every free row
        got |= gr;
        left |= pending[w] &= ~gr;
      }
      granted[i >> 6] |= static_cast<uint64_t>(got != 0) << (i & 63);
      wrap = left != 0;
    }

    // --- accept ---
    const bool move = rule_ == PointerRule::kRrm || it == 0;
    bool matched = false;
    for (int w = 0; w < nw; ++w) {
      for (uint64_t x = granted[w]; x; x &= x - 1) {
        const int in = (w << 6) + __builtin_ctzll(x);
        const uint64_t* const gr = grants + in * nw;
        const int out = first_from<W>(gr, nw, a[in]);
        matched = true;
        match[in] = out;
        free_in[w] &= ~(1ull << (in & 63));
        free_out[out >> 6] &= ~(1ull << (out & 63));
        if (!move) continue;
        a[in] = out + 1 == n ? 0 : out + 1;
        const int next = in + 1 == n ? 0 : in + 1;
        if (rule_ == PointerRule::kIslip) {
          move_grant_pointer(out, next);
        } else {  // RRM: every output that granted this input moves past it, accepted or not
          for (int v = 0; v < nw; ++v)
            for (uint64_t y = gr[v]; y; y &= y - 1)
              move_grant_pointer((v << 6) + __builtin_ctzll(y), next);
        }
      }
    }
    if (!matched) break;
  }
}

}  // namespace fabricsim::sw
