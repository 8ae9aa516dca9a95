// The one statistics facility: counters, time-weighted averages and latency histograms, registered
// under hierarchical names ("switch.port3.drops") and written to JSON as nested objects.
//
// Blocks own their statistics objects (plain members, no lookups on the hot path) and register them
// once with a Registry by name; the Registry only reads them when results are written.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/units.h"

namespace fabricsim::stats {

// Latency (or any non-negative integer quantity) histogram with bounded relative error:
// log-linear buckets (HDR-histogram style) with 2^sub_bucket_bits linear buckets per power of two,
// so any percentile is within 2^-sub_bucket_bits relative error of the exact order statistic
// (e.g. 10 bits: < 0.1%). Values below 2^sub_bucket_bits are exact. Mean, min and max are exact.
class Histogram {
 public:
  explicit Histogram(int sub_bucket_bits = 10);  // 0..20, else std::invalid_argument
  Histogram(const Histogram& other);
  Histogram& operator=(const Histogram& other);
  Histogram(Histogram&&) noexcept = default;
  Histogram& operator=(Histogram&&) noexcept = default;
  ~Histogram() = default;

  // O(1); allocates only on the first sample in a new power-of-two magnitude.
  void record(uint64_t value, uint64_t count = 1);
  uint64_t count() const;
  double mean() const;
  uint64_t min() const;  // 0 when empty
  uint64_t max() const;  // 0 when empty
  // Smallest recorded value v such that at least q (in [0,1]) of the samples are <= v, reported as
  // the upper end of v's bucket clipped to max(). 0 when empty. percentile(0) is min().
  // q outside [0,1] (or NaN) throws std::invalid_argument.
  uint64_t percentile(double q) const;
  // Requires the same sub_bucket_bits (std::invalid_argument otherwise).
  void merge(const Histogram& other);
  // Zeroes the counts but keeps the bucket arrays, so recording after a warm-up reset stays
  // allocation-free.
  void clear();

  int sub_bucket_bits() const { return sub_bits_; }
  // Bytes held by the lazily allocated bucket arrays (excludes the fixed-size object itself).
  size_t bucket_memory_bytes() const;

 private:
  // Magnitude 0 holds [0, 2^s) at width 1; magnitude m >= 1 holds [2^(s+m-1), 2^(s+m)) in 2^s
  // buckets of width 2^(m-1). 65 - s magnitudes cover all of uint64.
  static constexpr int kMaxMagnitudes = 65;
  uint64_t upper_bound(int magnitude, uint64_t sub) const;
  uint64_t* allocate(int magnitude);

  // Everything record() touches besides the bucket comes first: one cache line.
  unsigned __int128 sum_ = 0;  // exact: 2^64 values * 2^64 samples would be needed to overflow
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  uint64_t sub_count_;  // 2^sub_bits_
  int sub_bits_;
  int magnitudes_;  // 65 - sub_bits_
  std::array<std::unique_ptr<uint64_t[]>, kMaxMagnitudes> buckets_;
};

// The bytes of a frame, on a wire from `first_bit` to `last_bit`, that count towards throughput in
// the window [start, end): all of them for a frame inside it, else its share of wire time inside
// it. Counting whole frames by one instant (the last bit) could credit a port with up to a frame
// more than line rate in a short window; counted this way no port ever exceeds it.
inline double window_bytes(uint64_t bytes, Time first_bit, Time last_bit, Time start, Time end) {
  if (first_bit >= start && last_bit <= end) return static_cast<double>(bytes);
  const Time lo = first_bit < start ? start : first_bit;
  const Time hi = last_bit > end ? end : last_bit;
  if (hi <= lo) return 0.0;
  return static_cast<double>(bytes) * static_cast<double>((hi - lo).as_fs()) /
         static_cast<double>((last_bit - first_bit).as_fs());
}

// window_bytes() summed per port: whole frames as an integer (the usual case, on every packet's
// path: two compares and an add), frames at an edge of the window by their share.
class WindowBytes {
 public:
  void add(uint64_t bytes, Time first_bit, Time last_bit, Time start, Time end) {
    if (first_bit >= start && last_bit <= end)
      whole_ += bytes;
    else if (last_bit > start && first_bit < end)
      part_ += window_bytes(bytes, first_bit, last_bit, start, end);
  }
  void add_whole(uint64_t bytes) { whole_ += bytes; }  // a frame known to be inside the window
  double total() const { return static_cast<double>(whole_) + part_; }

 private:
  uint64_t whole_ = 0;
  double part_ = 0;
};

// Time-weighted mean and peak of a piecewise-constant integer quantity (cells, bytes, credits),
// measured over a window that opens at start(). The integral is exact (128-bit), so long runs of
// large values and signed signals whose areas cancel lose nothing.
class Occupancy {
 public:
  void start(Time now, int64_t value) {
    start_ = last_ = now;
    value_ = peak_ = value;
    area_ = 0;
  }
  void update(Time now, int64_t value) {
    // Only the running integral is kept, so the past cannot be revised.
    if (now < last_) throw std::logic_error("Occupancy::update: time went backwards");
    area_ += static_cast<__int128>(value_) * (now - last_).as_fs();
    last_ = now;
    value_ = value;
    if (value > peak_) peak_ = value;
  }
  double mean(Time now) const {  // over [start, now], now >= the last update
    if (now < last_) throw std::logic_error("Occupancy::mean: time before the last update");
    if (now == start_) return static_cast<double>(value_);
    const __int128 area = area_ + static_cast<__int128>(value_) * (now - last_).as_fs();
    return static_cast<double>(static_cast<long double>(area) /
                               static_cast<long double>((now - start_).as_fs()));
  }
  int64_t peak() const { return peak_; }
  int64_t current() const { return value_; }

 private:
  Time start_, last_;
  int64_t value_ = 0, peak_ = 0;
  __int128 area_ = 0;
};

// The statistics of a run by hierarchical name (`leaf3.port12.pause_frames_sent`), filled once at
// the end by the blocks that own them (each block's register_stats(Registry&, prefix)) and read by
// the report: a block adds a counter in one place. Entries point at the block's own members or
// read them through a callback, so registering costs nothing while the simulation runs.
class Registry {
 public:
  // `read_at`: the time the statistics are read (the end of the run), where blocks close their
  // time integrals. `per_port`: whether blocks register the statistics whose number grows with
  // the port count (per switch port, per host, per link; stats.per_port_counters) besides their
  // per-device ones.
  explicit Registry(Time read_at = Time(), bool per_port = true)
      : read_at_(read_at), per_port_(per_port) {}
  Time read_at() const { return read_at_; }
  bool per_port() const { return per_port_; }

  // Register statistics owned elsewhere; they must outlive the Registry's use. Names are dotted
  // paths; registering a name twice throws std::logic_error.
  void counter(const std::string& name, const uint64_t* value, const std::string& unit = "");
  void value(const std::string& name, const double* value, const std::string& unit = "");
  // A statistic computed when read (to_json): a count summed over several of the block's
  // counters, a time integral closed at read_at(). The callback (and what it captures) must stay
  // valid while the Registry is used; an empty one throws std::invalid_argument.
  void counter_fn(const std::string& name, std::function<uint64_t()> read,
                  const std::string& unit = "");
  void value_fn(const std::string& name, std::function<double()> read,
                const std::string& unit = "");
  // Histograms are reported as {count, mean, p50, p99, p999, max, min} scaled by `scale` (e.g. to
  // turn femtoseconds into nanoseconds use 1e-6); `unit` describes the scaled values.
  void histogram(const std::string& name, const Histogram* h, double scale = 1.0,
                 const std::string& unit = "");
  // A name that is also a dotted prefix of another ("a.b" and "a.b.c") throws std::logic_error;
  // malformed names (empty, empty component) and null pointers throw std::invalid_argument.
  // Nested JSON: "a.b.c" -> {"a": {"b": {"c": ...}}}. Deterministic key order.
  nlohmann::json to_json() const;
  // Flat {"dotted.name": "unit"} for the names registered with a non-empty unit, so values in
  // to_json() stay plain numbers.
  nlohmann::json units() const;

 private:
  struct Entry {
    const uint64_t* counter = nullptr;
    const double* value = nullptr;
    const Histogram* histogram = nullptr;
    std::function<uint64_t()> counter_fn;
    std::function<double()> value_fn;
    double scale = 1.0;
    std::string unit;
  };
  void add(const std::string& name, Entry entry);

  Time read_at_;
  bool per_port_ = true;
  std::map<std::string, Entry> entries_;
};

// Hot-path members, inline: they run for every packet and every buffer change.

inline void Histogram::record(uint64_t value, uint64_t count) {
  if (count == 0) return;
  int m;
  uint64_t sub;
  if (value < sub_count_) {
    m = 0;
    sub = value;
  } else {
    const int msb = 63 - __builtin_clzll(value);
    const int shift = msb - sub_bits_;
    m = shift + 1;
    sub = (value >> shift) - sub_count_;  // drop the leading 1: top s bits below it pick the bucket
  }
  uint64_t* b = buckets_[m].get();
  if (__builtin_expect(b == nullptr, 0)) b = allocate(m);
  b[sub] += count;
  count_ += count;
  sum_ += static_cast<unsigned __int128>(value) * count;
  if (value < min_) min_ = value;
  if (value > max_) max_ = value;
}

}  // namespace fabricsim::stats
