// A first-in, first-out queue in one growable ring buffer, for per-connection state.
//
// Not hardware: the container of a NIC's per-QP queues (packets to cut, payload reads, the send
// window). A NIC may hold a million QPs (1,024 NICs all-to-all), most of them idle at any time:
// std::deque allocates a 512 B block as soon as it is built and keeps one when it drains, about
// 600 B per queue and 3 KB per QP; a Fifo allocates nothing until its first push and gives its
// buffer back when it drains from more than kKeep elements (a queue that goes between empty and
// a few elements keeps its small buffer: no allocation per packet). Random access by position
// from the front, as the transports' windows need. `Keep`: the capacity kept when it drains
// (SIZE_MAX: all of it, for a queue that fills and drains all the time, as a switch's egress
// class queue does: it then allocates nothing once grown).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace fabricsim {

template <class T, size_t Keep = 4>
class Fifo {
 public:
  static constexpr size_t kKeep = Keep;  // capacity kept when the queue drains
  static constexpr size_t kFirst = 4;    // capacity of the first buffer

  Fifo() = default;
  Fifo(Fifo&& o) noexcept { swap(o); }
  Fifo& operator=(Fifo&& o) noexcept {
    swap(o);
    return *this;
  }
  Fifo(const Fifo& o) { *this = o; }
  Fifo& operator=(const Fifo& o) {
    if (this == &o) return *this;
    clear();
    for (size_t i = 0; i < o.size(); ++i) push_back(o[i]);
    return *this;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return buf_[(head_ + i) & (cap_ - 1)]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & (cap_ - 1)]; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = v;
    ++size_;
  }
  void push_back(T&& v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = std::move(v);
    ++size_;
  }
  template <class... A>
  void emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
  }
  void pop_front() {
    buf_[head_] = T();
    head_ = (head_ + 1) & (cap_ - 1);
    if (--size_ == 0) drained();
  }
  void clear() {
    for (size_t i = 0; i < size_; ++i) (*this)[i] = T();
    size_ = 0;
    drained();
  }
  // Front to back (for range-for; invalidated by a push or pop).
  template <class Q, class R>
  class Iter {
   public:
    Iter(Q* q, size_t i) : q_(q), i_(i) {}
    R& operator*() const { return (*q_)[i_]; }
    R* operator->() const { return &(*q_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    Q* q_;
    size_t i_;
  };
  Iter<Fifo, T> begin() { return {this, 0}; }
  Iter<Fifo, T> end() { return {this, size_}; }
  Iter<const Fifo, const T> begin() const { return {this, 0}; }
  Iter<const Fifo, const T> end() const { return {this, size_}; }

  // The buffer's capacity (0 before the first push and after a large queue drained).
  size_t capacity() const { return cap_; }

 private:
  void grow() {
    const size_t cap = cap_ ? cap_ * 2 : kFirst;
    std::unique_ptr<T[]> b(new T[cap]);
    for (size_t i = 0; i < size_; ++i) b[i] = std::move((*this)[i]);
    buf_ = std::move(b);
    cap_ = cap;
    head_ = 0;
  }
  void drained() {
    head_ = 0;
    if (cap_ > kKeep) {
      buf_.reset();
      cap_ = 0;
    }
  }
  void swap(Fifo& o) noexcept {
    std::swap(buf_, o.buf_);
    std::swap(cap_, o.cap_);
    std::swap(head_, o.head_);
    std::swap(size_, o.size_);
  }

  std::unique_ptr<T[]> buf_;
  size_t cap_ = 0, head_ = 0, size_ = 0;
};

}  // namespace fabricsim
