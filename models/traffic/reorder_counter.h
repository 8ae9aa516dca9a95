// Out-of-order delivery per flow, counted at the receiving hosts.
//
// Models what a transport's receiver sees: a flow is a (source, destination) host pair, and its
// packets carry their sequence in injection order (the packet id: sources number packets in the
// order they generate them, and a host sends one class's packets in that order). A packet that
// arrives with a lower sequence than one already received from its flow is reordered: it was
// overtaken, e.g. by a later packet sprayed over a shorter path. Each late packet counts once;
// packets behind it that arrive in order count nothing (one overtaking of k packets counts k).
//
// Per flow only the highest sequence received is kept: in a dense hosts x hosts array up to
// kDenseHosts hosts (8 MiB; a few instructions a packet), beyond that in an open-addressing table
// that grows (doubling) when half full, so that memory follows the flows seen. Either way a packet
// of a known flow allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim::traffic {

class ReorderCounter {
 public:
  static constexpr int kDenseHosts = 1024;

  // Flows between `hosts` hosts (0: unknown, the table only).
  explicit ReorderCounter(int hosts = 0)
      : hosts_(hosts > 0 && hosts <= kDenseHosts ? static_cast<size_t>(hosts) : 0),
        dense_(hosts_ * hosts_, 0),
        slots_(hosts_ ? 0 : kInitial) {}

  // A packet of flow (src, dst), both in [0, hosts), with sequence `seq` arrives; returns whether
  // it is reordered.
  bool arrive(int32_t src, int32_t dst, uint64_t seq) {
    if (hosts_) {
      uint64_t& max_seq = dense_[static_cast<size_t>(src) * hosts_ + static_cast<size_t>(dst)];
      const bool late = seq < max_seq;
      reordered_ += late;
      max_seq = late ? max_seq : seq;
      return late;
    }
    return arrive_in_table(src, dst, seq);
  }

  uint64_t reordered() const { return reordered_; }
  // Flows seen (the table only; the dense array does not count them).
  uint64_t flows() const { return flows_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // no host pair has both ids at 2^32 - 1
  static constexpr size_t kInitial = 1024;          // 2^10, as shift_ says
  struct Slot {
    uint64_t key = kEmpty;
    uint64_t max_seq = 0;
  };

  // Out of line: the dense path stays a few instructions without the table's registers.
  [[gnu::noinline]] bool arrive_in_table(int32_t src, int32_t dst, uint64_t seq) {
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

  size_t hosts_;                 // dense: the hosts (rows and columns); 0: the table
  std::vector<uint64_t> dense_;  // [src * hosts_ + dst]: the highest sequence received
  std::vector<Slot> slots_;      // a power of two, at most half full
  int shift_ = 64 - 10;          // 64 - log2(slots_.size())
  uint64_t flows_ = 0;
  uint64_t reordered_ = 0;
};

}  // namespace fabricsim::traffic
