#include "models/traffic/synthetic.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace fabricsim::traffic {

namespace {

// Below this success probability the mean idle period exceeds ~1e17 serialisation times, far
// beyond Time::max(); Rng::geometric would also overflow its uint64 result.
constexpr double kMinGeometricP = 1e-17;

// Failures before the first success, or false when the wait is effectively infinite.
bool draw_geometric(Rng& rng, double p, double scale, uint64_t& k) {
  if (!(p >= kMinGeometricP)) return false;
  k = p >= 0.25 ? rng.geometric_trials(p) : rng.geometric_scaled(scale);
  return true;
}

// The smallest packet the configuration can produce: it bounds how close two starts of one
// endpoint can be, which sizes the calendar's buckets.
Bytes smallest_size(const TrafficConfig& cfg) {
  if (cfg.sizes.empty()) return cfg.size;
  double m = cfg.sizes.front();
  for (double s : cfg.sizes) m = std::min(m, s);
  return Bytes(static_cast<uint64_t>(m));
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

SyntheticSource::SyntheticSource(const TrafficConfig& cfg, int endpoints, BitRate port_rate,
                                 uint64_t seed)
    : endpoints_(endpoints),
      rate_(port_rate),
      onoff_(cfg.arrival == "onoff"),
      load_(cfg.load),
      burst_mean_(cfg.burst_packets),
      self_(cfg.self),
      fixed_size_(cfg.size),
      hot_port_(static_cast<int32_t>(cfg.hotspot_port)),
      hot_fraction_(cfg.hotspot_fraction),
      incast_target_(static_cast<int32_t>(cfg.incast_target)),
      calendar_(endpoints, port_rate.serialization(smallest_size(cfg))) {
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
  if (onoff_ && load_ > 0) off_q_ = load_ / (load_ + burst_mean_ * (1.0 - load_));
  gap_scale_ = Rng::geometric_scale(onoff_ ? off_q_ : load_);
  for (double s : cfg.sizes) sizes_.push_back(Bytes(static_cast<uint64_t>(s)));
  if (!sizes_.empty()) size_choice_ = WeightedChoice(cfg.size_weights);
  if (!cfg.tc_weights.empty()) tc_choice_ = WeightedChoice(cfg.tc_weights);

  if (pattern_ == Pattern::kPermutation) {
    // Uniform random derangement by rejection: a uniform permutation is a derangement with
    // probability ~1/e, so ~2.7 shuffles on average.
    Rng rng = Rng::derive(seed, "traffic.permutation");
    perm_.resize(endpoints_);
    bool fixed_point = endpoints_ > 1;
    std::iota(perm_.begin(), perm_.end(), 0);
    while (fixed_point) {
      std::iota(perm_.begin(), perm_.end(), 0);
      for (int i = endpoints_ - 1; i > 0; --i) std::swap(perm_[i], perm_[rng.below(i + 1)]);
      fixed_point = false;
      for (int i = 0; i < endpoints_; ++i) fixed_point = fixed_point || perm_[i] == i;
    }
  }

  // Incast senders: the lowest-numbered endpoints other than the target.
  const int64_t incast_count = cfg.incast_sources == 0 ? endpoints_ - 1 : cfg.incast_sources;

  eps_.resize(endpoints_);
  for (int32_t e = 0; e < endpoints_; ++e) {
    Endpoint& ep = eps_[e];
    ep.rng = Rng::derive(seed, "traffic.src" + std::to_string(e));
    ep.cursor = (e + 1) % endpoints_;
    bool sends = load_ > 0;
    if (pattern_ == Pattern::kIncast) {
      const int64_t rank = e < incast_target_ ? e : e - 1;
      sends = sends && e != incast_target_ && rank < incast_count;
    }
    if (pattern_ == Pattern::kAllToAll) sends = sends && endpoints_ > 1;
    if (sends) first_packet(ep, e);
    if (ep.active) calendar_.push(e, ep.start);
  }
}

Bytes SyntheticSource::draw_size(Rng& rng) const {
  if (sizes_.empty()) return fixed_size_;
  return sizes_.size() == 1 ? sizes_[0] : sizes_[size_choice_.draw(rng)];
}

int32_t SyntheticSource::draw_dst(Endpoint& ep, int32_t src) {
  const auto uniform = [&]() -> int32_t {
    if (self_) return static_cast<int32_t>(ep.rng.below(endpoints_));
    const auto d = static_cast<int32_t>(ep.rng.below(endpoints_ - 1));  // skip src
    return d >= src ? d + 1 : d;
  };
  switch (pattern_) {
    case Pattern::kUniform:
      return uniform();
    case Pattern::kPermutation:
      return perm_[src];
    case Pattern::kHotspot:
      if (ep.rng.bernoulli(hot_fraction_) && (self_ || src != hot_port_)) return hot_port_;
      return uniform();
    case Pattern::kIncast:
      return incast_target_;
    case Pattern::kAllToAll: {
      const int32_t d = ep.cursor;
      ep.cursor = (d + 1) % endpoints_;
      if (ep.cursor == src) ep.cursor = (src + 1) % endpoints_;
      return d;
    }
  }
  return 0;
}

void SyntheticSource::draw_attributes(Endpoint& ep, int32_t src, bool new_dst) {
  ep.size = draw_size(ep.rng);
  ep.tc = tc_choice_.size() > 1 ? static_cast<int32_t>(tc_choice_.draw(ep.rng)) : 0;
  if (new_dst || pattern_ == Pattern::kAllToAll) ep.dst = draw_dst(ep, src);
}

void SyntheticSource::schedule_after(Endpoint& ep, Time from, uint64_t idle_units,
                                     Bytes unit_size) {
  // 128-bit so that huge idle draws stop the endpoint instead of wrapping the time base; the
  // pending packet must also end within Time::max().
  const __int128 start = static_cast<__int128>(from.as_fs()) +
                         static_cast<__int128>(idle_units) * rate_.serialization(unit_size).as_fs();
  const __int128 end = start + rate_.serialization(ep.size).as_fs();
  ep.active = end <= Time::max().as_fs();
  if (ep.active) ep.start = Time::fs(static_cast<int64_t>(start));
}

void SyntheticSource::first_packet(Endpoint& ep, int32_t src) {
  uint64_t k = 0;
  if (onoff_) ep.burst_left = 1 + ep.rng.geometric(1.0 / burst_mean_);
  draw_attributes(ep, src, true);
  // The initial idle period is drawn like the one after a packet of the first packet's size, so
  // fixed-size streams start on a slot boundary n * ser(S).
  if (!draw_geometric(ep.rng, onoff_ ? off_q_ : load_, gap_scale_, k)) return;
  schedule_after(ep, Time(), k, ep.size);
}

void SyntheticSource::advance(Endpoint& ep, int32_t src) {
  const Bytes prev_size = ep.size;
  const Time end = ep.start + rate_.serialization(prev_size);
  if (onoff_ && --ep.burst_left > 0) {  // next packet of the burst, back to back, same dst
    draw_attributes(ep, src, false);
    schedule_after(ep, end, 0, prev_size);
    return;
  }
  // Draw order (gap, [burst length], size, tc, dst) makes onoff with burst_packets = 1 produce the
  // same stream as bernoulli.
  uint64_t k = 0;
  if (!draw_geometric(ep.rng, onoff_ ? off_q_ : load_, gap_scale_, k)) {
    ep.active = false;
    return;
  }
  if (onoff_) ep.burst_left = 1 + ep.rng.geometric(1.0 / burst_mean_);
  draw_attributes(ep, src, true);
  schedule_after(ep, end, k, prev_size);
}

bool SyntheticSource::next(Packet& p) {
  const int32_t src = calendar_.pop();
  if (src < 0) return false;
  Endpoint& ep = eps_[src];
  p.id = next_id_++;
  p.src = src;
  p.dst = ep.dst;
  p.tc = ep.tc;
  p.size = ep.size;
  p.inject_time = ep.start;
  advance(ep, src);
  if (ep.active) calendar_.push(src, ep.start);
  return true;
}

}  // namespace fabricsim::traffic
