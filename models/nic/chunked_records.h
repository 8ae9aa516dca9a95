// A NIC's records of the messages it sent, by index in posting order, in chunks that are freed
// once every record in them was released (NicArray::stream_fct: a message whose fct.csv row was
// written). A run of 33.5 M messages kept 3.2 GB of records to its end in one vector per NIC;
// released as their rows go, a ring's NICs hold a chunk or two each.
//
// Not hardware: the driver's view of its work requests. Plain C++: an index stays valid while
// its record is held; a released record is not read again (held() says which are).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace fabricsim::nic {

template <class T>
class ChunkedRecords {
 public:
  // 64 records a chunk: a NIC's partly filled chunk is ~6 KB (8,192 NICs: ~50 MB), and the
  // chunks' table 8 B for 64 records.
  static constexpr size_t kShift = 6, kChunk = size_t{1} << kShift;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return chunks_[i >> kShift][i & (kChunk - 1)]; }
  const T& operator[](size_t i) const { return chunks_[i >> kShift][i & (kChunk - 1)]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& v) {
    if ((size_ & (kChunk - 1)) == 0) {
      chunks_.emplace_back(new T[kChunk]);
      released_.push_back(0);
    }
    (*this)[size_++] = v;
  }
  // Whether record i is held: posted and not released.
  bool held(size_t i) const { return i < size_ && chunks_[i >> kShift] && !released(i); }
  // Record i is not needed any more (held(i) before): its chunk goes once all of it went.
  void release(size_t i) {
    const size_t c = i >> kShift;
    (*this)[i].released = true;
    if (++released_[c] == kChunk) chunks_[c].reset();
  }
  // f(index, record) for every record held, in index order.
  template <class F>
  void for_each_held(F f) const {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      if (!chunks_[c]) continue;
      const size_t end = std::min(size_, (c + 1) << kShift);
      for (size_t i = c << kShift; i < end; ++i)
        if (!released(i)) f(i, (*this)[i]);
    }
  }

 private:
  bool released(size_t i) const { return (*this)[i].released; }

  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<uint8_t> released_;  // per chunk: its records released (at most kChunk)
  size_t size_ = 0;
};

}  // namespace fabricsim::nic
