// A fixed-capacity set of port indices, as a bit vector. Sized once at construction; every
// operation on the hot path is allocation-free. Used for scheduler request/grant vectors.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace fabricsim {

class PortSet {
 public:
  PortSet() = default;
  explicit PortSet(int size) : size_(size), nw_((size + 63) / 64) {
    if (nw_ > kInline) heap_.assign(static_cast<size_t>(nw_), 0);
    repoint();
  }
  // Copies and moves point words_ at their own storage.
  PortSet(const PortSet& o) : size_(o.size_), nw_(o.nw_), heap_(o.heap_) {
    copy_inline(o);
    repoint();
  }
  PortSet(PortSet&& o) noexcept : size_(o.size_), nw_(o.nw_), heap_(std::move(o.heap_)) {
    copy_inline(o);
    repoint();
    o.reset_empty();
  }
  PortSet& operator=(const PortSet& o) {
    if (this != &o) {
      size_ = o.size_;
      nw_ = o.nw_;
      heap_ = o.heap_;
      copy_inline(o);
      repoint();
    }
    return *this;
  }
  PortSet& operator=(PortSet&& o) noexcept {
    if (this != &o) {
      size_ = o.size_;
      nw_ = o.nw_;
      heap_ = std::move(o.heap_);
      copy_inline(o);
      repoint();
      o.reset_empty();
    }
    return *this;
  }
  ~PortSet() = default;

  int size() const { return size_; }
  void set(int i) { data()[i >> 6] |= 1ull << (i & 63); }
  void clear(int i) { data()[i >> 6] &= ~(1ull << (i & 63)); }
  bool test(int i) const { return (data()[i >> 6] >> (i & 63)) & 1; }
  void clear_all() {
    uint64_t* w = data();
    for (int k = 0; k < nw_; ++k) w[k] = 0;
  }
  bool empty() const {
    const uint64_t* w = data();
    for (int k = 0; k < nw_; ++k)
      if (w[k]) return false;
    return true;
  }
  int count() const {
    const uint64_t* w = data();
    int n = 0;
    for (int k = 0; k < nw_; ++k) n += __builtin_popcountll(w[k]);
    return n;
  }
  // First member at or after `from`, wrapping around; -1 if the set is empty. `from` in [0, size).
  int next_from(int from) const {
    const uint64_t* words = data();
    int wi = from >> 6;
    uint64_t w = words[wi] & (~0ull << (from & 63));
    for (int k = 0; k <= nw_; ++k) {
      if (w) return (wi << 6) + __builtin_ctzll(w);
      wi = wi + 1 == nw_ ? 0 : wi + 1;
      w = words[wi];
    }
    return -1;
  }
  // The words, nw = num_words() of them. Sets of up to 128 ports keep them inline, so a vector of
  // PortSets (the scheduler's request matrix) is one contiguous block without pointer chasing.
  // (A pointer kept up to date, not a test of nw_ per access: the bit operations are on every
  // packet's path.)
  const uint64_t* data() const { return words_; }
  uint64_t* data() { return words_; }

  // --- word-level access for the schedulers' hot loops (no allocation) ---
  int num_words() const { return nw_; }
  uint64_t word(int wi) const { return data()[wi]; }
  // The caller keeps bits at or above size() clear: count(), next_from() and friends rely on it.
  void set_word(int wi, uint64_t w) { data()[wi] = w; }
  // All of [0, size()).
  void set_all() {
    uint64_t* w = data();
    for (int k = 0; k < nw_; ++k) w[k] = ~0ull;
    if (size_ & 63) w[nw_ - 1] = (1ull << (size_ & 63)) - 1;
  }
  // Calls f(i) for every member i in increasing order, a word at a time (ctz), instead of testing
  // every index. Each word is copied before its bits are visited.
  template <class F>
  void for_each(F&& f) const {
    const uint64_t* words = data();
    for (int k = 0; k < nw_; ++k)
      for (uint64_t w = words[k]; w; w &= w - 1) f((k << 6) + __builtin_ctzll(w));
  }
  // for_each, then clear_all, in one pass over the words.
  template <class F>
  void take_each(F&& f) {
    uint64_t* words = data();
    for (int k = 0; k < nw_; ++k) {
      uint64_t w = words[k];
      if (!w) continue;
      words[k] = 0;
      for (; w; w &= w - 1) f((k << 6) + __builtin_ctzll(w));
    }
  }

 private:
  static constexpr int kInline = 2;
  void repoint() { words_ = nw_ > kInline ? heap_.data() : inline_; }
  void copy_inline(const PortSet& o) {
    for (int k = 0; k < kInline; ++k) inline_[k] = o.inline_[k];
  }
  void reset_empty() {
    size_ = nw_ = 0;
    heap_.clear();
    for (auto& w : inline_) w = 0;
    repoint();
  }
  int size_ = 0;
  int nw_ = 0;
  uint64_t inline_[kInline] = {0, 0};
  std::vector<uint64_t> heap_;
  uint64_t* words_ = inline_;  // inline_ or heap_.data()
};

// In-place transpose of a 64x64 bit block: bit c of b[r] ends up as bit r of b[c]. Round J swaps
// bits [J, 2J) of row k with bits [0, J) of row k + J within every 2J x 2J sub-block; the rounds
// are unrolled with constant J so the compiler can vectorise them (about 3x faster than a loop
// over J here).
namespace detail {
template <int J>
inline void transpose64_round(uint64_t* b, uint64_t m) {
  for (int base = 0; base < 64; base += 2 * J)
    for (int k = base; k < base + J; ++k) {
      const uint64_t t = ((b[k] >> J) ^ b[k + J]) & m;
      b[k] ^= t << J;
      b[k + J] ^= t;
    }
}
}  // namespace detail

inline void transpose64(uint64_t* b) {
  detail::transpose64_round<32>(b, 0x00000000ffffffffull);
  detail::transpose64_round<16>(b, 0x0000ffff0000ffffull);
  detail::transpose64_round<8>(b, 0x00ff00ff00ff00ffull);
  detail::transpose64_round<4>(b, 0x0f0f0f0f0f0f0f0full);
  detail::transpose64_round<2>(b, 0x3333333333333333ull);
  detail::transpose64_round<1>(b, 0x5555555555555555ull);
}

// Transpose of an nr x nc bit matrix in 64x64 blocks, for any storage: row_word(r, w) returns word
// w of row r (r < nr, w < ceil(nc / 64)); store(c, w, x) sets word w of column c (c < nc,
// w < ceil(nr / 64)) to x. All-zero blocks skip the bit shuffling.
template <class RowWord, class Store>
inline void transpose_bits(int nr, int nc, RowWord&& row_word, Store&& store) {
  uint64_t b[64];
  for (int rb = 0; rb < (nr + 63) / 64; ++rb) {
    const int r0 = rb * 64;
    const int rn = nr - r0 < 64 ? nr - r0 : 64;
    for (int cw = 0; cw < (nc + 63) / 64; ++cw) {
      const int c0 = cw * 64;
      const int cn = nc - c0 < 64 ? nc - c0 : 64;
      uint64_t any = 0;
      for (int r = 0; r < rn; ++r) any |= b[r] = row_word(r0 + r, cw);
      if (any) {
        for (int r = rn; r < 64; ++r) b[r] = 0;
        transpose64(b);
      } else {
        for (int c = 0; c < cn; ++c) b[c] = 0;
      }
      for (int c = 0; c < cn; ++c) store(c0 + c, rb, b[c]);
    }
  }
}

// cols[j].test(i) == rows[i].test(j) afterwards. cols.size() must equal every rows[i].size() and
// rows.size() every cols[j].size(); cols is overwritten without allocating.
inline void transpose(const std::vector<PortSet>& rows, std::vector<PortSet>& cols) {
  transpose_bits(
      static_cast<int>(rows.size()), static_cast<int>(cols.size()),
      [&](int r, int w) { return rows[r].word(w); },
      [&](int c, int w, uint64_t x) { cols[c].set_word(w, x); });
}

}  // namespace fabricsim
