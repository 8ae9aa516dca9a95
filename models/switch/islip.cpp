#include "models/switch/islip.h"

#include <cassert>
#include <memory>
#include <type_traits>
#include <utility>

namespace fabricsim::sw {
namespace {

// Index of the word holding bit i; constant when the set has a single word, which lets the
// compiler keep such sets in registers.
template <int W>
int word_of(int i) {
  return W == 1 ? 0 : i >> 6;
}

// f(0), ..., f(nw - 1); with W known, unrolled into calls with constant arguments (GCC's -O2
// does not unroll a two-trip loop with a body this size, and indexing the small per-word arrays
// with a variable would keep them out of registers).
template <class F, int... I>
void unrolled(F& f, std::integer_sequence<int, I...>) {
  (f(I), ...);
}
template <int W, class F>
void for_words(int nw, F&& f) {
  if constexpr (W > 0)
    unrolled(f, std::make_integer_sequence<int, W>{});
  else
    for (int w = 0; w < nw; ++w) f(w);
}

// Set bits of x, inline (__builtin_popcountll is a library call without -mpopcnt, which the
// x86-64 baseline lacks).
inline int popcount64(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// First member of the nw-word set s at or after `from`, without wrapping; -1 if none.
template <int W>
int next_at_or_after(const uint64_t* s, int nw, int from) {
  if (W) nw = W;
  int wi = from >> 6;
  uint64_t w = s[wi] & (~0ull << (from & 63));
  while (!w) {
    if (++wi == nw) return -1;
    w = s[wi];
  }
  return (wi << 6) + __builtin_ctzll(w);
}

// First member of the non-empty nw-word set s at or after `from`, wrapping around.
template <int W>
int first_from(const uint64_t* s, int nw, int from) {
  if (W == 1) {  // branch-free: which grant wins is data-dependent and mispredicts badly
    const uint64_t hi = s[0] & (~0ull << from);
    return __builtin_ctzll(hi ? hi : s[0]);
  }
  if (W == 2) {
    const int wi = from >> 6;
    const uint64_t hi = s[wi] & (~0ull << (from & 63));
    if (hi) return (wi << 6) + __builtin_ctzll(hi);
    if (s[wi ^ 1]) return ((wi ^ 1) << 6) + __builtin_ctzll(s[wi ^ 1]);
    return (wi << 6) + __builtin_ctzll(s[wi]);
  }
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
      granted_(nw_),
      accepted_(nw_) {}

void RoundRobinMatcher::reset() {
  for (auto& p : g_) p = 0;
  for (auto& p : a_) p = 0;
}

void RoundRobinMatcher::schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                                 std::vector<int>& match, PortSet& matched, const PortSet* inputs) {
  assert(static_cast<int>(requests.size()) == n_ && static_cast<int>(match.size()) == n_);
  assert(output_ready.size() == n_);
  dispatch_words(nw_, [&](auto w) {
    run<decltype(w)::value>(requests, output_ready, match, matched, inputs);
  });
}

// The grant phase is computed row by row (input by input) rather than output by output, so the
// request matrix is never transposed: scanning inputs i = first_row..N-1 (the lowest g[j] of the
// outputs still pending: no output searches above it), output j joins the search at
// row g[j] (bucketed in at_), and the first free requesting input it meets gets its grant; a
// second scan of rows 0..N-1 covers the wrap-around part [0, g[j]) for outputs still without a
// grant (an output still pending at a row i >= g[j] in that scan has no requester in [g[j], N),
// so it cannot grant there by mistake). That is exactly "the first requesting input at or after
// g[j]" for every output, in at most 2N word steps.
template <int W>
void RoundRobinMatcher::run(const std::vector<PortSet>& requests, const PortSet& output_ready,
                            std::vector<int>& match, PortSet& matched, const PortSet* inputs) {
  const int n = n_;
  const int nw = W ? W : nw_;
  uint64_t* const at = at_.data();
  uint64_t* const grants = grants_.data();
  int* const g = g_.data();
  int* const a = a_.data();
  // With W known, the small sets live in separate local arrays, indexed by constants once the
  // word loops are unrolled, so the compiler keeps them in registers (through the member vectors
  // it would have to assume they alias grants_ and at_, and reload them every row).
  uint64_t pending_l[W ? W : 1], active_l[W ? W : 1], free_in_l[W ? W : 1], free_out_l[W ? W : 1],
      granted_l[W ? W : 1], accepted_l[W ? W : 1];
  // The first bucket row: pass 1 has nothing to do above it (no output searches there yet).
  int first_row = 0;
  uint64_t* const pending = W ? pending_l : pending_.data();
  uint64_t* const active = W ? active_l : active_.data();
  uint64_t* const free_in = W ? free_in_l : free_in_.data();
  uint64_t* const free_out = W ? free_out_l : free_out_.data();
  uint64_t* const granted = W ? granted_l : granted_.data();
  uint64_t* const accepted = W ? accepted_l : accepted_.data();
  // One scan of the free rows for the grant phase. Pass 1 lets output j search from its bucket
  // row on (and leaves at_ all zero again: an output still in a bucket not reached is still
  // pending); pass 2 searches all free rows for the outputs still pending. Rows with a grant are
  // added to `granted`, and only their grants_ rows are read later. Returns false once every
  // pending output has granted.
  auto scan = [&](auto pass1_tag) {
    constexpr bool kPass1 = decltype(pass1_tag)::value;
    for (int rw = kPass1 ? first_row >> 6 : 0; rw < nw; ++rw) {
      uint64_t got = 0;
      uint64_t rows = free_in[rw];
      if (kPass1 && rw == first_row >> 6) rows &= ~0ull << (first_row & 63);
      for (uint64_t x = rows; x; x &= x - 1) {
        const int b = __builtin_ctzll(x);
        const int i = (rw << 6) + b;
        const uint64_t* const req = requests[i].data();
        uint64_t any = 0, left = 0;
        for_words<W>(nw, [&](int w) {
          uint64_t gr = req[w] & pending[w];
          if (kPass1) {
            active[w] |= at[i * nw + w];
            at[i * nw + w] = 0;
            gr &= active[w];
            grants[i * nw + w] = gr;
          } else if (i < first_row) {
            grants[i * nw + w] = gr;  // a row pass 1 skipped
          } else {
            grants[i * nw + w] |= gr;  // pass 1 wrote every free row from first_row on
          }
          any |= gr;
          left |= pending[w] ^= gr;  // gr is a subset of pending
        });
        got |= static_cast<uint64_t>(any != 0) << b;
        if (!left) {
          granted[rw] |= got;
          return false;
        }
      }
      granted[rw] |= got;
    }
    return true;
  };

  for (auto& m : match) m = -1;
  uint64_t* const matched_w = matched.data();
  for (int w = 0; w < nw; ++w) {
    const uint64_t valid = w == nw - 1 && (n & 63) ? (1ull << (n & 63)) - 1 : ~0ull;
    // Inputs without a request can neither be granted nor accept: leaving them out of the rows
    // changes no match and no pointer, and the scan below then costs per requesting input.
    free_in[w] = inputs ? inputs->word(w) & valid : valid;
    free_out[w] = output_ready.word(w) & valid;
    matched_w[w] = 0;
  }
  // The requesting rows pay when they are few (a lightly loaded switch); with half the inputs or
  // more requesting, all rows are cheaper: each output's search then starts at its pointer's row
  // without looking for the next requesting one.
  bool sparse = false;
  if (inputs) {
    int rows = 0;
    for (int w = 0; w < nw; ++w) rows += popcount64(free_in[w]);
    sparse = 2 * rows < n;
    // Without conflicts (every requesting input asks for one ready output, and no two for the
    // same one: a lightly loaded switch, or one packet per input), every output grants its one
    // requester in the first iteration and every input accepts its one grant, whatever the
    // pointers: all pairs match and the pointers move past them as an accept in the first
    // iteration moves them, under either rule. Checked in one pass over the requesting inputs.
    if (W == 1 && sparse && k_ >= 1) {
      uint64_t outs = 0;
      bool clean = true;
      for (uint64_t x = free_in[0]; x && clean; x &= x - 1) {
        const uint64_t r = requests[__builtin_ctzll(x)].word(0) & free_out[0];
        clean = !(r & (r - 1)) && !(r & outs);  // (an input without a request stays out)
        outs |= r;
      }
      if (clean) {
        for (uint64_t x = free_in[0]; x; x &= x - 1) {
          const int in = __builtin_ctzll(x);
          const uint64_t r = requests[in].word(0) & free_out[0];
          if (!r) continue;
          const int out = __builtin_ctzll(r);
          match[in] = out;
          matched_w[0] |= 1ull << in;
          a[in] = out + 1 == n ? 0 : out + 1;
          g[out] = in + 1 == n ? 0 : in + 1;
        }
        return;
      }
    }
    if (!sparse)
      for (int w = 0; w < nw; ++w)
        free_in[w] = w == nw - 1 && (n & 63) ? (1ull << (n & 63)) - 1 : ~0ull;
  }

  for (int it = 0; it < k_; ++it) {
    // --- grant ---
    uint64_t left = 0;
    first_row = n;
    for (int w = 0; w < nw; ++w) {
      left |= pending[w] = free_out[w];
      active[w] = 0;
      granted[w] = 0;
      accepted[w] = 0;
      // Bucket each output at the first free row at or after its pointer, where pass 1 starts
      // its search; with no such row it only takes part in pass 2. (All rows are free in the
      // first iteration unless only the requesting inputs are.)
      if (it == 0 && !sparse) {
        for (uint64_t x = free_out[w]; x; x &= x - 1) {
          const int j = __builtin_ctzll(x);
          const int r = g[(w << 6) + j];
          at[r * nw + w] |= 1ull << j;
          first_row = r < first_row ? r : first_row;
        }
      } else {
        for (uint64_t x = free_out[w]; x; x &= x - 1) {
          const int j = __builtin_ctzll(x);
          const int gj = g[(w << 6) + j];
          // (Under load the pointer's own row is usually free: one bit test, no search.)
          const int r = (free_in[word_of<W>(gj)] >> (gj & 63)) & 1
                            ? gj
                            : next_at_or_after<W>(free_in, nw, gj);
          if (r >= 0) {
            at[r * nw + w] |= 1ull << j;
            first_row = r < first_row ? r : first_row;
          }
        }
      }
    }
    if (!left) break;
    if (scan(std::true_type{})) scan(std::false_type{});

    // --- accept --- (every input holding a grant accepts one)
    uint64_t any = 0;
    const bool move = rule_ == PointerRule::kRrm || it == 0;
    for (int w = 0; w < nw; ++w) {
      any |= granted[w];
      for (uint64_t x = granted[w]; x; x &= x - 1) {
        const int in = (w << 6) + __builtin_ctzll(x);
        const uint64_t* const gr = grants + in * nw;
        const int out = first_from<W>(gr, nw, a[in]);
        match[in] = out;
        accepted[word_of<W>(out)] |= 1ull << (out & 63);
        if (!move) continue;
        a[in] = out + 1 == n ? 0 : out + 1;
        const int next = in + 1 == n ? 0 : in + 1;
        if (rule_ == PointerRule::kIslip) {
          g[out] = next;
        } else {  // RRM: every output that granted this input moves past it, accepted or not
          for (int v = 0; v < nw; ++v)
            for (uint64_t y = gr[v]; y; y &= y - 1) g[(v << 6) + __builtin_ctzll(y)] = next;
        }
      }
    }
    if (!any) break;
    for (int w = 0; w < nw; ++w) {
      matched_w[w] |= granted[w];  // every input holding a grant accepted one
      free_in[w] &= ~granted[w];
      free_out[w] &= ~accepted[w];
    }
  }
}

FABRICSIM_REGISTER_SCHEDULER(islip) {
  registry.add("islip",
               "iSLIP (McKeown 1999), round-robin grant and accept pointers moved only on "
               "first-iteration accepts, `iterations` request-grant-accept rounds",
               [](int ports, int iterations, Rng&) {
                 return std::make_unique<IslipScheduler>(ports, iterations);
               });
}

}  // namespace fabricsim::sw
