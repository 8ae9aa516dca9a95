#include "models/common/stats.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace fabricsim::stats {

// ---------------------------------------------------------------------------------------------
// Histogram

Histogram::Histogram(int sub_bucket_bits)
    : sub_count_(0), sub_bits_(sub_bucket_bits), magnitudes_(0) {
  // 20 bits is already 8 MiB per magnitude; beyond that the "histogram" is a dense array.
  if (sub_bucket_bits < 0 || sub_bucket_bits > 20) {
    throw std::invalid_argument("Histogram: sub_bucket_bits must be in [0, 20], got " +
                                std::to_string(sub_bucket_bits));
  }
  sub_count_ = uint64_t{1} << sub_bits_;
  magnitudes_ = kMaxMagnitudes - sub_bits_;
}

Histogram::Histogram(const Histogram& other)
    : sum_(other.sum_),
      count_(other.count_),
      min_(other.min_),
      max_(other.max_),
      sub_count_(other.sub_count_),
      sub_bits_(other.sub_bits_),
      magnitudes_(other.magnitudes_) {
  for (int m = 0; m < magnitudes_; ++m) {
    if (!other.buckets_[m]) continue;
    std::memcpy(allocate(m), other.buckets_[m].get(), sub_count_ * sizeof(uint64_t));
  }
}

Histogram& Histogram::operator=(const Histogram& other) {
  if (this != &other) {
    Histogram copy(other);
    *this = std::move(copy);
  }
  return *this;
}

uint64_t* Histogram::allocate(int magnitude) {
  buckets_[magnitude] = std::make_unique<uint64_t[]>(sub_count_);  // value-initialised: zeros
  return buckets_[magnitude].get();
}

uint64_t Histogram::count() const {
  return count_;
}

double Histogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

uint64_t Histogram::min() const {
  return count_ == 0 ? 0 : min_;
}
uint64_t Histogram::max() const {
  return max_;
}

uint64_t Histogram::upper_bound(int magnitude, uint64_t sub) const {
  if (magnitude == 0) return sub;
  const int shift = magnitude - 1;
  // Written as lower + (width - 1) so the top bucket ends at UINT64_MAX without overflowing.
  const uint64_t lower = (sub_count_ + sub) << shift;
  return lower + ((uint64_t{1} << shift) - 1);
}

uint64_t Histogram::percentile(double q) const {
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument("Histogram::percentile: q must be in [0, 1]");
  }
  if (count_ == 0) return 0;
  if (q == 0.0) return min_;
  // rank = ceil(q * count), except that a product within rounding of an integer is that integer:
  // 0.07 * 100 is 7.000000000000001 in binary and must still select the 7th sample.
  const long double r = static_cast<long double>(q) * static_cast<long double>(count_);
  const long double nearest = std::nearbyint(r);
  long double rank_ld = std::fabs(r - nearest) <= r * 4 * DBL_EPSILON ? nearest : std::ceil(r);
  const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(rank_ld), uint64_t{1}, count_);

  uint64_t cumulative = 0;
  for (int m = 0; m < magnitudes_; ++m) {
    const uint64_t* b = buckets_[m].get();
    if (b == nullptr) continue;
    for (uint64_t sub = 0; sub < sub_count_; ++sub) {
      cumulative += b[sub];
      if (cumulative >= rank) return std::clamp(upper_bound(m, sub), min_, max_);
    }
  }
  return max_;  // unreachable while counts are consistent
}

void Histogram::merge(const Histogram& other) {
  if (other.sub_bits_ != sub_bits_) {
    throw std::invalid_argument("Histogram::merge: sub_bucket_bits differ (" +
                                std::to_string(sub_bits_) + " vs " +
                                std::to_string(other.sub_bits_) + ")");
  }
  for (int m = 0; m < magnitudes_; ++m) {
    const uint64_t* src = other.buckets_[m].get();
    if (src == nullptr) continue;
    uint64_t* dst = buckets_[m] ? buckets_[m].get() : allocate(m);
    for (uint64_t sub = 0; sub < sub_count_; ++sub) dst[sub] += src[sub];
  }
  if (other.count_ != 0) {
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
}

void Histogram::clear() {
  for (int m = 0; m < magnitudes_; ++m) {
    if (buckets_[m]) std::fill_n(buckets_[m].get(), sub_count_, uint64_t{0});
  }
  count_ = 0;
  sum_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
}

size_t Histogram::bucket_memory_bytes() const {
  size_t n = 0;
  for (int m = 0; m < magnitudes_; ++m) {
    if (buckets_[m]) n += sub_count_ * sizeof(uint64_t);
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Registry

namespace {

std::vector<std::string> split_name(const std::string& name) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    const size_t dot = name.find('.', begin);
    parts.push_back(name.substr(begin, dot - begin));
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return parts;
}

}  // namespace

void Registry::add(const std::string& name, Entry entry) {
  for (const std::string& part : split_name(name)) {
    if (part.empty()) {
      throw std::invalid_argument("stats::Registry: malformed name '" + name + "'");
    }
  }
  if (entries_.count(name) != 0) {
    throw std::logic_error("stats::Registry: '" + name + "' registered twice");
  }
  // A leaf cannot also be an object in the nested JSON, in either registration order.
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    const std::string prefix = name.substr(0, dot);
    if (entries_.count(prefix) != 0) {
      throw std::logic_error("stats::Registry: '" + name + "' is nested under the statistic '" +
                             prefix + "'");
    }
  }
  const std::string as_prefix = name + ".";
  const auto it = entries_.lower_bound(as_prefix);  // names under `name.` sort contiguously here
  if (it != entries_.end() && it->first.compare(0, as_prefix.size(), as_prefix) == 0) {
    throw std::logic_error("stats::Registry: '" + name + "' is a prefix of the statistic '" +
                           it->first + "'");
  }
  entries_.emplace(name, std::move(entry));
}

void Registry::counter(const std::string& name, const uint64_t* value, const std::string& unit) {
  if (value == nullptr) throw std::invalid_argument("stats::Registry: null counter '" + name + "'");
  Entry e;
  e.counter = value;
  e.unit = unit;
  add(name, std::move(e));
}

void Registry::value(const std::string& name, const double* value, const std::string& unit) {
  if (value == nullptr) throw std::invalid_argument("stats::Registry: null value '" + name + "'");
  Entry e;
  e.value = value;
  e.unit = unit;
  add(name, std::move(e));
}

void Registry::counter_fn(const std::string& name, std::function<uint64_t()> read,
                          const std::string& unit) {
  if (!read) throw std::invalid_argument("stats::Registry: empty callback '" + name + "'");
  Entry e;
  e.counter_fn = std::move(read);
  e.unit = unit;
  add(name, std::move(e));
}

void Registry::value_fn(const std::string& name, std::function<double()> read,
                        const std::string& unit) {
  if (!read) throw std::invalid_argument("stats::Registry: empty callback '" + name + "'");
  Entry e;
  e.value_fn = std::move(read);
  e.unit = unit;
  add(name, std::move(e));
}

void Registry::histogram(const std::string& name, const Histogram* h, double scale,
                         const std::string& unit) {
  if (h == nullptr) throw std::invalid_argument("stats::Registry: null histogram '" + name + "'");
  Entry e;
  e.histogram = h;
  e.scale = scale;
  e.unit = unit;
  add(name, std::move(e));
}

nlohmann::json Registry::to_json() const {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& [name, e] : entries_) {
    const std::vector<std::string> parts = split_name(name);
    nlohmann::json* node = &root;
    for (size_t i = 0; i + 1 < parts.size(); ++i) node = &(*node)[parts[i]];
    nlohmann::json& leaf = (*node)[parts.back()];
    if (e.counter != nullptr) {
      leaf = *e.counter;
    } else if (e.value != nullptr) {
      leaf = *e.value;
    } else if (e.counter_fn) {
      leaf = e.counter_fn();
    } else if (e.value_fn) {
      leaf = e.value_fn();
    } else {
      const Histogram& h = *e.histogram;
      // (C++17 lambdas cannot capture a structured binding: clang refuses, GCC lets it pass.)
      const double scale = e.scale;
      const auto scaled = [scale](uint64_t v) { return static_cast<double>(v) * scale; };
      leaf = nlohmann::json{{"count", h.count()},
                            {"mean", h.mean() * scale},
                            {"min", scaled(h.min())},
                            {"p50", scaled(h.percentile(0.5))},
                            {"p99", scaled(h.percentile(0.99))},
                            {"p999", scaled(h.percentile(0.999))},
                            {"max", scaled(h.max())}};
    }
  }
  return root;
}

nlohmann::json Registry::units() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, e] : entries_) {
    if (!e.unit.empty()) out[name] = e.unit;
  }
  return out;
}

}  // namespace fabricsim::stats
