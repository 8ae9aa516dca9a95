#include "models/host/host.h"

#include <algorithm>

#include <fmt/format.h>

namespace fabricsim::host {

namespace {
constexpr int kPort = 0;  // a host's flow control has its one NIC port
}

Host::Host(const HostConfig& cfg, std::unique_ptr<link::FlowControl> fc)
    : mac_(cfg.mac),
      link_latency_(cfg.link_latency),
      win_start_(cfg.window_start),
      win_end_(cfg.window_end),
      ect_(cfg.ect),
      queue_limit_(cfg.queue_limit),
      id_(cfg.id),
      fc_(std::move(fc)) {
  fc_active_ = fc_ && fc_->enabled();
  plain_ = !fc_active_ && !mac_.rate_changes();
}

void Host::send(Packet& p, Time now, const IntStack* tel) {
  // The frame's preamble starts now, or when the previous frame's gap ends; generated frames are
  // spaced by their wire time, so without contention for the wire a frame never waits.
  const Time start = std::max(now, mac_.next_start(now));
  const Time first = mac_.first_bit(start);
  const Time last = mac_.last_bit(first, p.size.count());
  mac_.end_frame(last);
  if (start > p.inject_time) {
    const Time wait = start - p.inject_time;
    ++tx_.queued;
    tx_.wait_total += wait;
    tx_.wait_max = std::max(tx_.wait_max, wait);
  }
  put_on_wire(p, first, last, tel);
}

void Host::start_int() {
  if (fifos_.empty()) fifos_.resize(kClasses);
  int_fifos_.resize(kClasses);
  for (int c = 0; c < kClasses; ++c)
    while (int_fifos_[c].size() < fifos_[c].size()) int_fifos_[c].emplace_back().hops = kNoStack;
}

Time Host::offer_int(Packet& p, const IntStack& tel, Time now) {
  if (int_fifos_.empty()) start_int();
  Time first, last;
  if (plain_ && waiting_ == 0 && mac_.start_if_idle(now, p.size.count(), first, last)) {
    put_on_wire(p, first, last, &tel);
    return Time::max();
  }
  enqueue(p);
  int_fifos_[p.tc & (kClasses - 1)].push_back(tel);
  ++waiting_;
  return service(now);
}

Time Host::next_look(Time now) const {
  return waiting_ || fc_active_ ? mac_.next_start(now) : Time::max();
}

Time Host::service(Time now) {
  if (mac_.mid_frame(now)) return next_look(now);  // look again at the frame boundary
  Time look = Time::max();
  if (fc_active_) {
    ControlFrame f;
    if (fc_->take_control(kPort, now, f)) {  // control frames first, one per frame boundary
      const Time first = mac_.first_bit(now);
      const Time last = mac_.last_bit(first, f.bytes);
      mac_.end_frame(last);
      ++tx_.control_frames;
      out_->control(f, first, last);
      return mac_.next_start(now);
    }
    const Time timer = fc_->next_control(kPort);
    if (timer != Time::max()) look = std::max(timer, now);
  }
  if (!waiting_) return look;
  // Among the classes flow control lets go (a paused priority, or a VL without credit, holds only
  // its own class; with credits, VL arbitration chooses the VL), the oldest head packet first.
  // (Only the classes with packets are read: 16 deques' headers are 20 cache lines a frame.)
  uint64_t head[kClasses] = {};
  for (uint32_t m = queued_; m; m &= m - 1) {
    const int c = __builtin_ctz(m);
    head[c] = fifos_[c].front().size.count();
  }
  auto older = [&](int a, int b) {
    const Packet& x = fifos_[a].front();
    const Packet& y = fifos_[b].front();
    return x.inject_time != y.inject_time ? x.inject_time < y.inject_time : x.id < y.id;
  };
  const int pick = link::mac_select_class(
      fc_active_ ? fc_.get() : nullptr, kPort, now, kClasses, [&] { return head; },
      [&](uint32_t paused) {
        int best = -1;
        for (int c = 0; c < kClasses; ++c)
          if (head[c] && !((paused >> c) & 1) && (best < 0 || older(c, best))) best = c;
        return best;
      });
  if (pick < 0) {  // PFC: until a pause changes; credit: an FC packet's arrival wakes the host
    const Time t = fc_->next_unblock(kPort, now);
    return t == Time::max() ? look : std::min(look, std::max(t, now));
  }
  std::deque<Packet>& fifo = fifos_[pick];
  Packet& p = fifo.front();
  if (fc_active_) fc_->on_send(kPort, p.tc, static_cast<uint32_t>(p.size.count()), now);
  if (!int_fifos_.empty()) {
    std::deque<IntStack>& tels = int_fifos_[pick];
    send(p, now, tels.front().hops == kNoStack ? nullptr : &tels.front());
    tels.pop_front();
  } else {
    send(p, now);
  }
  fifo.pop_front();
  if (fifo.empty()) queued_ &= static_cast<uint16_t>(~(1u << pick));
  --waiting_;
  if ((deferred_ >> pick) & 1) feeder_->refill(*this, pick);  // its next packet, from the source
  return std::min(look, waiting_ ? mac_.next_start(now) : Time::max());
}

bool Host::push(const Packet& p) {
  if (fifos_.empty()) fifos_.resize(kClasses);
  std::deque<Packet>& fifo = fifos_[p.tc & (kClasses - 1)];
  if (fifo.size() >= queue_limit_) return false;
  enqueue(p);
  if (!int_fifos_.empty()) int_fifos_[p.tc & (kClasses - 1)].emplace_back().hops = kNoStack;
  ++waiting_;
  return true;
}

void Host::register_stats(stats::Registry& r, const std::string& prefix) {
  if (fc_active_) fc_->register_stats(r, kPort, prefix);
  // Only a host whose queue was ever full has it (the same results as before the limit existed
  // otherwise).
  if (tx_.refused) r.counter(prefix + ".refused_packets", &tx_.refused, "packets");
}

void Host::rx_data(int tc, uint32_t bytes, Time t) {
  if (!fc_active_) return;
  fc_->admit(kPort, tc, bytes, t);
  fc_->release(kPort, tc, bytes, t);
}

void Host::rx_control(const ControlFrame& f, Time now) {
  if (!fc_active_) return;
  fc_->on_control_in_wire_order(kPort, f);
  fc_->on_control(kPort, f, now);
}

std::string unsent_workload(uint64_t workload, uint64_t injected) {
  if (injected >= workload) return "";
  return fmt::format(
      "traffic: {} of the trace's {} packets were never sent (the run ended at sim.duration + "
      "sim.drain_limit with them in the file or in a host's queue): raise sim.duration or "
      "sim.drain_limit to replay the whole trace",
      workload - injected, workload);
}

}  // namespace fabricsim::host
