#include "models/workload/scale_up.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace fabricsim::workload {

ScaleUpNetwork::ScaleUpNetwork(int hosts, int gpus, BitRate rate, Time latency, bool reduce,
                               BitRate reduce_rate)
    : gpus_(gpus),
      cap_(static_cast<double>(rate.as_bps()) / 8e15),
      latency_(latency),
      reduce_(reduce),
      engine_cap_(static_cast<double>(reduce_rate.as_bps()) / 8e15) {
  if (gpus < 2 || hosts < gpus || hosts % gpus != 0 || rate.as_bps() == 0)
    throw std::invalid_argument(fmt::format("scale-up domains of {} GPUs over {} hosts at {} bps",
                                            gpus, hosts, rate.as_bps()));
  doms_.resize(static_cast<size_t>(hosts / gpus));
  for (Domain& d : doms_) {
    d.tx_busy_fs.assign(static_cast<size_t>(gpus), 0);
    d.rx_busy_fs.assign(static_cast<size_t>(gpus), 0);
  }
  cap_left_.resize(static_cast<size_t>(2 * gpus + 1));  // + the reduction engine
  unfrozen_.resize(cap_left_.size());
  on_port_.resize(cap_left_.size());
}

void ScaleUpNetwork::post(uint32_t token, int src, int dst, uint64_t bytes, Time now, int channel,
                          uint32_t tag) {
  if (!same_domain(src, dst) || src == dst || bytes == 0)
    throw std::invalid_argument(
        fmt::format("scale-up message {} from GPU {} to GPU {} ({} B): not two GPUs of one "
                    "domain of {}",
                    token, src, dst, bytes, gpus_));
  run_to(now);
  note_busy(now);
  ++in_flight_;
  ++messages_;
  bytes_ += bytes;
  Domain& d = doms_[static_cast<size_t>(domain_of(src))];
  advance(d, now);
  ++d.messages;
  d.bytes += bytes;
  const uint32_t kind = tag & kNvlsKindMask;
  if (reduce_ && (kind == kNvlsReduce || kind == kNvlsMulticast)) {
    join_op(d, token, src, dst, bytes, channel, tag);
    return;
  }
  d.flows.push_back({token, kNoOp, static_cast<int16_t>(src % gpus_),
                     static_cast<int16_t>(dst % gpus_), static_cast<double>(bytes), 0.0});
  settle(d);
}

void ScaleUpNetwork::join_op(Domain& d, uint32_t token, int src, int dst, uint64_t bytes,
                             int channel, uint32_t tag) {
  const bool red = (tag & kNvlsKindMask) == kNvlsReduce;
  const uint32_t need = tag & kNvlsCountMask;
  const int dom = domain_of(src), root = red ? dst % gpus_ : src % gpus_;
  const int peer = red ? src % gpus_ : dst % gpus_;
  if (need == 0 || need >= static_cast<uint32_t>(gpus_))
    throw std::invalid_argument(
        fmt::format("scale-up message {}: a switch operation of {} messages in a domain of {}",
                    token, need, gpus_));
  // The k-th message of this pair and channel belongs to the root's k-th operation.
  const uint32_t seq = op_seq_[{dom, tag, src % gpus_, dst % gpus_, channel}]++;
  auto [it, fresh] = gathering_.try_emplace({dom, tag, root, channel, seq}, 0u);
  if (fresh) {
    if (free_ops_.empty()) {
      free_ops_.push_back(static_cast<uint32_t>(ops_.size()));
      ops_.emplace_back();
    }
    it->second = free_ops_.back();
    free_ops_.pop_back();
    Op& o = ops_[it->second];
    o.reduce = red;
    o.root = static_cast<int16_t>(root);
    o.need = need;
    o.bytes = bytes;
    o.tokens.clear();
    o.peers.clear();
  }
  const uint32_t id = it->second;
  Op& o = ops_[id];
  if (o.bytes != bytes)
    throw std::invalid_argument(fmt::format(
        "scale-up message {}: {} B where its switch operation's other messages carry {} B", token,
        bytes, o.bytes));
  o.tokens.push_back(token);
  o.peers.push_back(static_cast<int16_t>(peer));
  if (o.tokens.size() < o.need) return;  // the switch waits for every member
  gathering_.erase(it);
  d.flows.push_back({kNoOp, id, o.root, o.root, static_cast<double>(bytes), 0.0});
  settle(d);
}

template <class F>
void ScaleUpNetwork::for_ports(const Flow& f, F&& fn) const {
  if (f.op == kNoOp) {
    fn(f.src);
    fn(gpus_ + f.dst);
    return;
  }
  const Op& o = ops_[f.op];
  if (o.reduce) {  // every member's egress, the root's ingress, the engine
    fn(o.root);
    for (const int16_t q : o.peers) fn(q);
    fn(gpus_ + o.root);
    if (engine_cap_ > 0) fn(2 * gpus_);
  } else {  // the root's egress, every member's ingress
    fn(o.root);
    fn(gpus_ + o.root);
    for (const int16_t q : o.peers) fn(gpus_ + q);
  }
}

Time ScaleUpNetwork::next_event() const {
  Time t = deliveries_.empty() ? Time::max() : deliveries_.top().t;
  for (const Domain& d : doms_) t = std::min(t, d.finish);
  return t;
}

bool ScaleUpNetwork::pop_delivered(Time now, uint32_t& token, Time& t) {
  run_to(now);
  if (deliveries_.empty() || deliveries_.top().t > now) return false;
  token = deliveries_.top().token;
  t = deliveries_.top().t;
  deliveries_.pop();
  if (--in_flight_ == 0) {
    active_ += t - busy_since_;
    busy_since_ = Time::max();
  }
  return true;
}

void ScaleUpNetwork::note_busy(Time now) {
  if (in_flight_ == 0) busy_since_ = now;
}

void ScaleUpNetwork::advance(Domain& d, Time to) {
  if (to <= d.at) return;
  const auto dt = static_cast<double>((to - d.at).as_fs());
  // A port is busy while any flow uses it.
  seen_.assign(static_cast<size_t>(2 * gpus_ + 1), 0);
  for (Flow& f : d.flows) {
    f.left -= f.rate * dt;
    for_ports(f, [this](int p) { seen_[p] = 1; });
  }
  for (int p = 0; p < gpus_; ++p) {
    if (seen_[p]) d.tx_busy_fs[p] += (to - d.at).as_fs();
    if (seen_[gpus_ + p]) d.rx_busy_fs[p] += (to - d.at).as_fs();
  }
  d.at = to;
}

void ScaleUpNetwork::settle(Domain& d) {
  // A flow is done when less than a femtosecond of its bytes is left (rounding of the rates).
  for (size_t i = 0; i < d.flows.size();) {
    const Flow& f = d.flows[i];
    if (f.rate > 0 && f.left <= f.rate) {
      if (f.op == kNoOp) {
        deliveries_.push({d.at + latency_, seq_++, f.token});
      } else {  // every message of the operation at once; the operation's slot is free again
        for (const uint32_t t : ops_[f.op].tokens) deliveries_.push({d.at + latency_, seq_++, t});
        free_ops_.push_back(f.op);
      }
      d.flows[i] = d.flows.back();
      d.flows.pop_back();
    } else {
      ++i;
    }
  }
  share(d);
  d.finish = Time::max();
  for (const Flow& f : d.flows)
    d.finish =
        std::min(d.finish, d.at + Time::fs(static_cast<int64_t>(std::ceil(f.left / f.rate))));
}

void ScaleUpNetwork::share(Domain& d) {
  // Ports 0..G-1 are the GPUs' egress, G..2G-1 their ingress, 2G the reduction engine.
  const int ports = 2 * gpus_ + 1;
  for (int p = 0; p < ports; ++p) {
    cap_left_[p] = p < 2 * gpus_ ? cap_ : engine_cap_;
    unfrozen_[p] = 0;
    on_port_[p].clear();
  }
  for (size_t i = 0; i < d.flows.size(); ++i)
    for_ports(d.flows[i], [&](int p) {
      on_port_[p].push_back(static_cast<int>(i));
      ++unfrozen_[p];
    });
  frozen_.assign(d.flows.size(), 0);
  // Progressive filling: the port with the least capacity per unfrozen flow fixes its flows'
  // rate at that share; their other port loses what they take. Each round freezes one port.
  for (;;) {
    int best = -1;
    double best_share = 0;
    for (int p = 0; p < ports; ++p) {
      if (unfrozen_[p] == 0) continue;
      const double s = cap_left_[p] / unfrozen_[p];
      if (best < 0 || s < best_share) best = p, best_share = s;
    }
    if (best < 0) break;
    for (const int i : on_port_[best]) {
      if (frozen_[i]) continue;
      frozen_[i] = 1;
      Flow& f = d.flows[i];
      f.rate = best_share;
      for_ports(f, [&](int p) {
        cap_left_[p] = std::max(0.0, cap_left_[p] - best_share);
        --unfrozen_[p];
      });
    }
  }
}

void ScaleUpNetwork::run_to(Time now) {
  for (;;) {
    Domain* first = nullptr;
    for (Domain& d : doms_)
      if (d.finish <= now && (!first || d.finish < first->finish)) first = &d;
    if (!first) return;
    advance(*first, first->finish);
    settle(*first);
  }
}

void ScaleUpNetwork::register_stats(stats::Registry& r, const std::string& prefix) const {
  for (size_t i = 0; i < doms_.size(); ++i) {
    const Domain& d = doms_[i];
    const std::string name = fmt::format("{}{}", prefix, i);
    r.counter(name + ".messages", &d.messages, "messages");
    r.counter(name + ".bytes", &d.bytes, "B");
    if (!r.per_port()) continue;
    for (int p = 0; p < gpus_; ++p) {
      r.value_fn(
          fmt::format("{}.port{}.tx_busy_ns", name, p),
          [&d, p] { return static_cast<double>(d.tx_busy_fs[p]) * 1e-6; }, "ns");
      r.value_fn(
          fmt::format("{}.port{}.rx_busy_ns", name, p),
          [&d, p] { return static_cast<double>(d.rx_busy_fs[p]) * 1e-6; }, "ns");
    }
  }
}

}  // namespace fabricsim::workload
