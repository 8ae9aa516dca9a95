// Out-of-order delivery per flow, counted at the receiving hosts.
//
// Models what a transport's receiver sees: a flow is a (source, destination) host pair, and its
// packets carry their sequence in injection order (the packet id: sources number packets in the
// order they generate them, and a host sends one class's packets in that order). A packet that
// arrives with a lower sequence than one already received from its flow is reordered: it was
// overtaken, e.g. by a later packet sprayed over a shorter path. Each late packet counts once;
// packets behind it that arrive in order count nothing (one overtaking of k packets counts k).
//
// Per flow only the highest sequence received is kept, in an open-addressing table that grows
// (doubling) when half full: memory follows the flows seen, and a packet of a known flow costs a
// hash and a probe, no allocation.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim::traffic {

class ReorderCounter {
 public:
  ReorderCounter() : slots_(kInitial) {}

  // A packet of flow (src, dst) with sequence `seq` arrives; returns whether it is reordered.
  bool arrive(int32_t src, int32_t dst, uint64_t seq) {
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst);
    Slot& s = find(key);
    if (s.key == kEmpty) {
      s = {key, seq};
      if (++flows_ * 2 > slots_.size()) grow();
      return false;
    }
    if (seq < s.max_seq) {
      ++reordered_;
      return true;
    }
    s.max_seq = seq;
    return false;
  }

  uint64_t reordered() const { return reordered_; }
  uint64_t flows() const { return flows_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // no host pair has both ids at 2^32 - 1
  static constexpr size_t kInitial = 1024;          // 2^10, as shift_ says
  struct Slot {
    uint64_t key = kEmpty;
    uint64_t max_seq = 0;
  };

  Slot& find(uint64_t key) {
    const size_t mask = slots_.size() - 1;
    // Fibonacci hashing: the top bits of the product depend on every bit of the key.
    size_t i = static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
    while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask;
    return slots_[i];
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    --shift_;
    for (const Slot& s : old)
      if (s.key != kEmpty) find(s.key) = s;
  }

  std::vector<Slot> slots_;  // a power of two, at most half full
  int shift_ = 64 - 10;      // 64 - log2(slots_.size())
  uint64_t flows_ = 0;
  uint64_t reordered_ = 0;
};

}  // namespace fabricsim::traffic
