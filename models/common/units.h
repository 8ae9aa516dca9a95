// Strong types for simulated time, data sizes, bit rates and clock frequencies.
//
// Time is kept as integer femtoseconds so that serialisation at every port rate in use (100G..1.6T)
// and core clock periods (e.g. 1.35 GHz = 740,741 fs) are represented to well below a part per
// million, and runs stay bit-for-bit deterministic (no floating point in the time base).
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time fs(int64_t v) { return Time(v); }
  static constexpr Time ps(int64_t v) { return Time(v * 1000); }
  static constexpr Time ns(int64_t v) { return Time(v * 1000000); }
  static constexpr Time us(int64_t v) { return Time(v * 1000000000); }
  static constexpr Time max() { return Time(INT64_MAX); }

  constexpr int64_t as_fs() const { return fs_; }
  constexpr double as_ns() const { return static_cast<double>(fs_) * 1e-6; }
  constexpr double as_s() const { return static_cast<double>(fs_) * 1e-15; }

  constexpr Time operator+(Time o) const { return Time(fs_ + o.fs_); }
  constexpr Time operator-(Time o) const { return Time(fs_ - o.fs_); }
  constexpr Time operator*(int64_t k) const { return Time(fs_ * k); }
  constexpr int64_t operator/(Time o) const { return fs_ / o.fs_; }
  Time& operator+=(Time o) {
    fs_ += o.fs_;
    return *this;
  }
  Time& operator-=(Time o) {
    fs_ -= o.fs_;
    return *this;
  }
  constexpr bool operator==(Time o) const { return fs_ == o.fs_; }
  constexpr bool operator!=(Time o) const { return fs_ != o.fs_; }
  constexpr bool operator<(Time o) const { return fs_ < o.fs_; }
  constexpr bool operator<=(Time o) const { return fs_ <= o.fs_; }
  constexpr bool operator>(Time o) const { return fs_ > o.fs_; }
  constexpr bool operator>=(Time o) const { return fs_ >= o.fs_; }

  std::string str() const;  // human readable, e.g. "2.54ns"

 private:
  constexpr explicit Time(int64_t v) : fs_(v) {}
  int64_t fs_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(uint64_t v) : b_(v) {}
  constexpr uint64_t count() const { return b_; }
  constexpr uint64_t bits() const { return b_ * 8; }
  constexpr Bytes operator+(Bytes o) const { return Bytes(b_ + o.b_); }
  constexpr bool operator==(Bytes o) const { return b_ == o.b_; }
  constexpr bool operator!=(Bytes o) const { return b_ != o.b_; }
  constexpr bool operator<(Bytes o) const { return b_ < o.b_; }
  constexpr bool operator<=(Bytes o) const { return b_ <= o.b_; }
  constexpr bool operator>(Bytes o) const { return b_ > o.b_; }
  std::string str() const;

 private:
  uint64_t b_ = 0;
};

// num / d, exact. GCC divides a 128-bit number by a call to __udivti3 even when the quotient fits
// in 64 bits; x86-64's divq then does it in one instruction. Paced QPs (congestion control sets
// rates that are not a whole number of fs per byte) and PCIe TLPs divide so on every packet.
inline uint64_t div_u128_u64(unsigned __int128 num, uint64_t d) {
#if defined(__x86_64__)
  const auto hi = static_cast<uint64_t>(num >> 64);
  if (hi < d) {  // the quotient fits in 64 bits: divq cannot fault
    uint64_t q, r;
    __asm__("divq %4" : "=a"(q), "=d"(r) : "a"(static_cast<uint64_t>(num)), "d"(hi), "rm"(d));
    (void)r;
    return q;
  }
#endif
  return static_cast<uint64_t>(num / d);
}

class BitRate {
 public:
  constexpr BitRate() = default;
  static constexpr BitRate bps(uint64_t v) { return BitRate(v); }
  static constexpr BitRate gbps(uint64_t v) { return BitRate(v * 1000000000ull); }
  constexpr uint64_t as_bps() const { return bps_; }
  // Whole femtoseconds per byte, or 0 when the rate takes no whole number (kept at construction:
  // no division per call).
  constexpr uint64_t fs_per_byte() const { return fs_per_byte_; }
  constexpr double as_gbps() const { return static_cast<double>(bps_) * 1e-9; }
  constexpr bool operator==(BitRate o) const { return bps_ == o.bps_; }
  constexpr bool operator<(BitRate o) const { return bps_ < o.bps_; }
  // Time to put `bytes` on the wire at this rate, rounded up to the next femtosecond.
  Time serialization(Bytes bytes) const {
    // Common rates (100G, 400G, 800G, 1.6T...) take a whole number of fs per byte: one multiply.
    if (fs_per_byte_) return Time::fs(static_cast<int64_t>(bytes.count() * fs_per_byte_));
    const unsigned __int128 num =
        static_cast<unsigned __int128>(bytes.bits()) * 1000000000000000ull + (bps_ - 1);
    return Time::fs(static_cast<int64_t>(div_u128_u64(num, bps_)));
  }
  std::string str() const;

 private:
  static constexpr uint64_t kFsPerByteBit = 8000000000000000ull;  // 8 bits x 10^15 fs/s
  constexpr explicit BitRate(uint64_t v)
      : bps_(v), fs_per_byte_(v && kFsPerByteBit % v == 0 ? kFsPerByteBit / v : 0) {}
  uint64_t bps_ = 0;
  uint64_t fs_per_byte_ = 0;  // exact fs per byte, or 0 if not a whole number
};

class Frequency {
 public:
  constexpr Frequency() = default;
  static constexpr Frequency hz(uint64_t v) { return Frequency(v); }
  static constexpr Frequency mhz(uint64_t v) { return Frequency(v * 1000000ull); }
  constexpr uint64_t as_hz() const { return hz_; }
  // Clock period rounded to the nearest femtosecond.
  constexpr Time period() const {
    return Time::fs(static_cast<int64_t>((1000000000000000ull + hz_ / 2) / hz_));
  }
  constexpr bool operator==(Frequency o) const { return hz_ == o.hz_; }
  std::string str() const;

 private:
  constexpr explicit Frequency(uint64_t v) : hz_(v) {}
  uint64_t hz_ = 0;
};

// Strict unit parsing ("800Gbps", "106.25Gbps", "165MB", "254B", "1.35GHz", "500ns", "2us").
// Return false and set `err` on any malformed value; decimal prefixes only (MB = 10^6 B,
// MiB = 2^20 B). Results must be exact integers in the base unit.
bool parse_time(const std::string& s, Time& out, std::string& err);
bool parse_bytes(const std::string& s, Bytes& out, std::string& err);
bool parse_bitrate(const std::string& s, BitRate& out, std::string& err);
bool parse_frequency(const std::string& s, Frequency& out, std::string& err);

}  // namespace fabricsim
