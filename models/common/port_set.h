// A fixed-capacity set of port indices, as a bit vector. Sized once at construction; every
// operation on the hot path is allocation-free. Used for scheduler request/grant vectors.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim {

class PortSet {
 public:
  PortSet() = default;
  explicit PortSet(int size) : size_(size), words_((size + 63) / 64, 0) {}

  int size() const { return size_; }
  void set(int i) { words_[i >> 6] |= 1ull << (i & 63); }
  void clear(int i) { words_[i >> 6] &= ~(1ull << (i & 63)); }
  bool test(int i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void clear_all() {
    for (auto& w : words_) w = 0;
  }
  bool empty() const {
    for (auto w : words_)
      if (w) return false;
    return true;
  }
  int count() const {
    int n = 0;
    for (auto w : words_) n += __builtin_popcountll(w);
    return n;
  }
  // First member at or after `from`, wrapping around; -1 if the set is empty. `from` in [0, size).
  int next_from(int from) const {
    const int nw = static_cast<int>(words_.size());
    int wi = from >> 6;
    uint64_t w = words_[wi] & (~0ull << (from & 63));
    for (int k = 0; k <= nw; ++k) {
      if (w) return (wi << 6) + __builtin_ctzll(w);
      wi = wi + 1 == nw ? 0 : wi + 1;
      w = words_[wi];
    }
    return -1;
  }
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  int size_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace fabricsim
