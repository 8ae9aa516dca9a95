#include "models/traffic/synthetic.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace fabricsim::traffic {

namespace {

// Below this success probability the mean idle period exceeds ~1e17 serialisation times, far
// beyond Time::max(); Rng::geometric would also overflow its uint64 result.
constexpr double kMinGeometricP = 1e-17;

constexpr uint32_t kSpareMask = (1u << GeometricSampler::kSpareBits) - 1;

// The smallest packet the configuration can produce: it bounds how close two starts of one
// endpoint can be, which sizes the calendar's buckets.
Bytes smallest_size(const TrafficConfig& cfg) {
  if (cfg.sizes.empty()) return cfg.size;
  double m = cfg.sizes.front();
  for (double s : cfg.sizes) m = std::min(m, s);
  return Bytes(static_cast<uint64_t>(m));
}

// With a single packet size S every start is a multiple of ser(S) (idle periods are whole packet
// times from t = 0), which lets the calendar skip ordering within a bucket; else 0.
Time start_grid(const TrafficConfig& cfg, BitRate rate, const FrameOverhead& o) {
  for (double s : cfg.sizes)
    if (s != cfg.sizes.front()) return Time();
  return rate.serialization(Bytes(o.wire_bytes(smallest_size(cfg).count())));
}

}  // namespace

WeightedChoice::WeightedChoice(const std::vector<double>& weights) {
  cumulative_.reserve(weights.size());
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    sum += weights[i];
    cumulative_.push_back(sum);
    if (weights[i] > 0) last_positive_ = i;
  }
}

size_t WeightedChoice::draw(Rng& rng) const {
  const double u = rng.uniform() * cumulative_.back();
  // First entry whose cumulative weight exceeds u: zero-weight entries are never chosen.
  const size_t i =
      std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
  return i < cumulative_.size() ? i : last_positive_;  // u rounded up to the total
}

std::vector<int32_t> random_derangement(int endpoints, uint64_t seed) {
  // Uniform random derangement by rejection: a uniform permutation is a derangement with
  // probability ~1/e, so ~2.7 shuffles on average.
  Rng rng = Rng::derive(seed, "traffic.permutation");
  std::vector<int32_t> perm(static_cast<size_t>(endpoints));
  bool fixed_point = endpoints > 1;
  std::iota(perm.begin(), perm.end(), 0);
  while (fixed_point) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = endpoints - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
    fixed_point = false;
    for (int i = 0; i < endpoints; ++i) fixed_point = fixed_point || perm[i] == i;
  }
  return perm;
}

SyntheticSource::SyntheticSource(const TrafficConfig& cfg, int endpoints, BitRate port_rate,
                                 uint64_t seed, FrameOverhead overhead,
                                 const std::vector<uint32_t>& slowdown)
    : endpoints_(endpoints),
      onoff_(cfg.arrival == "onoff"),
      draw_tc_(cfg.tc_weights.size() > 1),
      self_(cfg.self),
      dst_range_(static_cast<uint32_t>(std::max(cfg.self ? endpoints : endpoints - 1, 1))),
      hot_threshold_(Rng::bernoulli_threshold(cfg.hotspot_fraction)),
      hot_port_(static_cast<int32_t>(cfg.hotspot_port)),
      incast_target_(static_cast<int32_t>(cfg.incast_target)),
      calendar_(endpoints,
                port_rate.serialization(Bytes(overhead.wire_bytes(smallest_size(cfg).count()))),
                start_grid(cfg, port_rate, overhead)) {
  if (cfg.pattern == "permutation") {
    pattern_ = Pattern::kPermutation;
  } else if (cfg.pattern == "hotspot") {
    pattern_ = Pattern::kHotspot;
  } else if (cfg.pattern == "incast") {
    pattern_ = Pattern::kIncast;
  } else if (cfg.pattern == "all_to_all") {
    pattern_ = Pattern::kAllToAll;
  } else {
    pattern_ = Pattern::kUniform;
  }
  const double load = cfg.load;
  double gap_p = load;
  if (onoff_ && load > 0) gap_p = load / (load + cfg.burst_packets * (1.0 - load));
  gap_never_ = !(gap_p >= kMinGeometricP);
  if (!gap_never_) gap_ = GeometricSampler(gap_p);
  burst_ = GeometricSampler(1.0 / cfg.burst_packets);

  if (cfg.sizes.empty()) {
    size_bytes_.push_back(cfg.size.count());
  } else {
    for (double s : cfg.sizes) size_bytes_.push_back(static_cast<uint64_t>(s));
    if (size_bytes_.size() > 1) size_choice_ = WeightedChoice(cfg.size_weights);
  }
  for (uint64_t s : size_bytes_)
    size_fs_.push_back(port_rate.serialization(Bytes(overhead.wire_bytes(s))).as_fs());
  if (draw_tc_) tc_choice_ = WeightedChoice(cfg.tc_weights);
  size0_fs_ = size_fs_[0];
  size0_last_start_fs_ = Time::max().as_fs() - size0_fs_;
  // Lemire on the gap draw's spare bits rejects with probability (2^11 mod range) / 2^11: use
  // them only where that is rare (0 for 64 destinations, 1.6% for 63); else a bound no value
  // reaches.
  spare_reject_ = (kSpareMask + 1) % dst_range_;
  if (dst_range_ > kSpareMask + 1 || spare_reject_ * 16 > kSpareMask + 1)
    spare_reject_ = kSpareMask + 1;
  // (Mixed link rates take the general path: its slot unit is per endpoint.)
  const bool mixed_rates =
      std::any_of(slowdown.begin(), slowdown.end(), [](uint32_t s) { return s != 1; });
  simple_ = !onoff_ && size_bytes_.size() == 1 && !draw_tc_ && !mixed_rates &&
            (pattern_ == Pattern::kUniform || pattern_ == Pattern::kPermutation ||
             pattern_ == Pattern::kIncast);

  if (pattern_ == Pattern::kPermutation) perm_ = random_derangement(endpoints_, seed);

  // Incast senders: the lowest-numbered endpoints other than the target.
  const int64_t incast_count = cfg.incast_sources == 0 ? endpoints_ - 1 : cfg.incast_sources;

  eps_.resize(endpoints_);
  // simple_ never changes a packet's tc or size: set them once here, not per packet.
  Packet fixed;
  fixed.size = Bytes(size_bytes_[0]);
  ready_.assign(static_cast<size_t>(endpoints_), fixed);
  for (int32_t e = 0; e < endpoints_; ++e) {
    Endpoint& ep = eps_[e];
    ep.rng = Rng::derive(seed, "traffic.src" + std::to_string(e));
    if (static_cast<size_t>(e) < slowdown.size()) ep.slowdown = slowdown[e];
    ep.cursor = (e + 1) % endpoints_;
    ep.skip = self_ ? endpoints_ : e;
    bool sends = load > 0;
    if (pattern_ == Pattern::kIncast) {
      const int64_t rank = e < incast_target_ ? e : e - 1;
      sends = sends && e != incast_target_ && rank < incast_count;
    }
    if (pattern_ == Pattern::kAllToAll) sends = sends && endpoints_ > 1;
    if (sends && first_packet(ep, e)) calendar_.push(e, ep.start);
  }
}

// `spare`: GeometricSampler::kSpareBits bits left over by the gap draw. Lemire's method on them
// (exactly uniform when accepted) saves a draw; on rejection, or when they are not used, a draw of
// its own.
__attribute__((always_inline)) inline int32_t SyntheticSource::uniform_dst(Endpoint& ep,
                                                                           uint32_t spare) {
  const uint32_t m = spare * dst_range_;  // may wrap only when the bits are not used
  const auto d = (m & kSpareMask) >= spare_reject_
                     ? static_cast<int32_t>(m >> GeometricSampler::kSpareBits)
                     : static_cast<int32_t>(ep.rng.below(dst_range_));
  return d + static_cast<int32_t>(d >= ep.skip);
}

int32_t SyntheticSource::draw_dst(Endpoint& ep, int32_t src, uint32_t spare) {
  switch (pattern_) {
    case Pattern::kUniform:
      return uniform_dst(ep, spare);
    case Pattern::kPermutation:
      return perm_[src];
    case Pattern::kHotspot:
      if (ep.rng.bernoulli_below(hot_threshold_) && (self_ || src != hot_port_)) return hot_port_;
      return uniform_dst(ep, spare);
    case Pattern::kIncast:
      return incast_target_;
    case Pattern::kAllToAll: {
      const int32_t d = ep.cursor;
      ep.cursor = d + 1 == endpoints_ ? 0 : d + 1;
      if (ep.cursor == src) ep.cursor = src + 1 == endpoints_ ? 0 : src + 1;
      return d;
    }
  }
  return 0;
}

inline void SyntheticSource::draw_attributes(Endpoint& ep, int32_t src, bool new_dst,
                                             uint32_t spare) {
  if (size_bytes_.size() > 1) ep.size_idx = static_cast<uint32_t>(size_choice_.draw(ep.rng));
  ep.tc = draw_tc_ ? static_cast<int32_t>(tc_choice_.draw(ep.rng)) : 0;
  if (new_dst || pattern_ == Pattern::kAllToAll) ep.dst = draw_dst(ep, src, spare);
}

// The pending packet starts idle_units * unit_fs after from_fs. False when that start, or the
// packet's end, would pass Time::max(): huge idle draws stop the endpoint instead of wrapping the
// time base. The overflow tests cost a flag check each, unlike 128-bit arithmetic.
__attribute__((always_inline)) inline bool SyntheticSource::schedule_after(
    Endpoint& ep, int64_t from_fs, uint64_t idle_units, int64_t unit_fs, int64_t last_start_fs) {
  uint64_t idle = 0, start = 0;
  if (__builtin_mul_overflow(idle_units, static_cast<uint64_t>(unit_fs), &idle) ||
      __builtin_add_overflow(static_cast<uint64_t>(from_fs), idle, &start) ||
      start > static_cast<uint64_t>(last_start_fs))
    return false;
  ep.start = Time::fs(static_cast<int64_t>(start));
  return true;
}

// 1 + geometric(1 / burst_packets): below 2^32 for burst_packets <= 1e6 (the log inversion
// tops out near 3.7e7); the clamp only guards the type.
uint32_t SyntheticSource::burst_length(Rng& rng) const {
  return static_cast<uint32_t>(1 + std::min<uint64_t>(burst_(rng), UINT32_MAX - 1));
}

bool SyntheticSource::first_packet(Endpoint& ep, int32_t src) {
  if (gap_never_) return false;
  // Draws as in advance(). The initial idle period is in units of the first packet's size, so
  // fixed-size streams start on a slot boundary n * ser(S).
  uint32_t spare = 0;
  const uint64_t k = gap_(ep.rng, spare);
  if (onoff_) ep.burst_left = burst_length(ep.rng);
  draw_attributes(ep, src, true, spare);
  const int64_t unit = size_fs_[ep.size_idx] * ep.slowdown;
  return schedule_after(ep, 0, k, unit, Time::max().as_fs() - unit);
}

// The general path; refill() handles simple_ itself. Only endpoints that sent reach here, so
// gap_never_ is false.
bool SyntheticSource::advance(Endpoint& ep, int32_t src) {
  const int64_t prev_fs = size_fs_[ep.size_idx] * ep.slowdown;
  const int64_t end = ep.start.as_fs() + prev_fs;
  if (onoff_ && --ep.burst_left > 0) {  // next packet of the burst, back to back, same dst
    draw_attributes(ep, src, false, 0);
    return schedule_after(ep, end, 0, 0, Time::max().as_fs() - size_fs_[ep.size_idx] * ep.slowdown);
  }
  // Draw order (gap, [burst length], size, tc, dst) makes onoff with burst_packets = 1 produce the
  // same stream as bernoulli (pop_simple makes the same draws).
  uint32_t spare = 0;
  const uint64_t k = gap_(ep.rng, spare);
  if (onoff_) ep.burst_left = burst_length(ep.rng);
  draw_attributes(ep, src, true, spare);
  return schedule_after(ep, end, k, prev_fs,
                        Time::max().as_fs() - size_fs_[ep.size_idx] * ep.slowdown);
}

bool SyntheticSource::next(Packet& p) {
  if (__builtin_expect(ready_pos_ == ready_end_, 0) && !refill()) return false;
  p = *ready_pos_++;
  return true;
}

size_t SyntheticSource::next_batch(Packet* out, size_t max) {
  if (ready_pos_ == ready_end_ && !refill()) return 0;
  const size_t n = std::min(max, static_cast<size_t>(ready_end_ - ready_pos_));
  std::copy_n(ready_pos_, n, out);
  ready_pos_ += n;
  return n;
}

// refill() for simple_: advance() with everything that is constant folded, constants in locals
// so that they stay in registers across the stores of the loop. kUniform: else the destination
// is fixed.
template <bool kUniform>
bool SyntheticSource::pop_simple(Packet*& out_ref, uint64_t& id_ref) {
  const int64_t ser = size0_fs_;
  const int64_t last_start = size0_last_start_fs_;
  Packet* out = out_ref;
  uint64_t id = id_ref;
  const bool any = calendar_.pop_bucket([&](int32_t src) __attribute__((always_inline)) {
    Endpoint& ep = eps_[src];
    const Time start = ep.start;
    out->id = id++;
    out->src = src;
    out->dst = ep.dst;
    out->inject_time = start;
    ++out;
    uint32_t spare = 0;
    const uint64_t k = gap_(ep.rng, spare);
    if (kUniform) ep.dst = uniform_dst(ep, spare);
    if (schedule_after(ep, start.as_fs() + ser, k, ser, last_start))
      calendar_.push<true>(src, ep.start);  // one size: the calendar has a start grid
  });
  out_ref = out;
  id_ref = id;
  return any;
}

// Emits the calendar's next bucket into ready_ and schedules each of its endpoints' next packet
// right away: one tight loop over the bucket instead of a call per packet. The draws are the
// same as when advancing at emission (each endpoint has its own stream, and its next start is
// in a later bucket), so the stream does not depend on this batching.
bool SyntheticSource::refill() {
  Packet* out = ready_.data();
  uint64_t id = next_id_;
  bool any;
  if (simple_) {
    any = pattern_ == Pattern::kUniform ? pop_simple<true>(out, id) : pop_simple<false>(out, id);
  } else {
    any = calendar_.pop_bucket([&](int32_t src) __attribute__((always_inline)) {
      Endpoint& ep = eps_[src];
      out->id = id++;
      out->src = src;
      out->dst = ep.dst;
      out->tc = ep.tc;
      out->size = Bytes(size_bytes_[ep.size_idx]);
      out->inject_time = ep.start;
      ++out;
      if (advance(ep, src)) calendar_.push(src, ep.start);
    });
  }
  next_id_ = id;
  ready_pos_ = ready_.data();
  ready_end_ = out;
  return any;
}

}  // namespace fabricsim::traffic
