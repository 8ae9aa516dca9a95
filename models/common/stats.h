// The one statistics facility: counters, time-weighted averages and latency histograms, registered
// under hierarchical names ("switch.port3.drops") and written to JSON as nested objects.
//
// Blocks own their statistics objects (plain members, no lookups on the hot path) and register them
// once with a Registry by name; the Registry only reads them when results are written.
#pragma once

#include <cstdint>
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
  explicit Histogram(int sub_bucket_bits = 10);
  void record(uint64_t value, uint64_t count = 1);
  uint64_t count() const;
  double mean() const;
  uint64_t min() const;  // 0 when empty
  uint64_t max() const;  // 0 when empty
  // Smallest recorded value v such that at least q (in [0,1]) of the samples are <= v, reported as
  // the upper end of v's bucket clipped to max(). 0 when empty.
  uint64_t percentile(double q) const;
  void merge(const Histogram& other);
  void clear();

 private:
  // implementation-defined members
};

// Time-weighted average and peak of a piecewise-constant quantity (e.g. buffer bytes), measured
// over a window that opens at `start()`.
class TimeAverage {
 public:
  void start(Time now, double value);  // open the window at `now` with the current value
  void update(Time now, double value); // the quantity changes to `value` at `now` (non-decreasing)
  double mean(Time now) const;         // time-weighted mean over [start, now]
  double peak() const;                 // peak since start()
  double current() const;

 private:
  // implementation-defined members
};

class Registry {
 public:
  // Register statistics owned elsewhere; they must outlive the Registry's use. Names are dotted
  // paths; registering a name twice throws std::logic_error.
  void counter(const std::string& name, const uint64_t* value, const std::string& unit = "");
  void value(const std::string& name, const double* value, const std::string& unit = "");
  // Histograms are reported as {count, mean, p50, p99, p999, max, min} scaled by `scale` (e.g. to
  // turn femtoseconds into nanoseconds use 1e-6).
  void histogram(const std::string& name, const Histogram* h, double scale = 1.0);
  // Nested JSON: "a.b.c" -> {"a": {"b": {"c": ...}}}. Deterministic key order.
  nlohmann::json to_json() const;

 private:
  // implementation-defined members
};

}  // namespace fabricsim::stats
