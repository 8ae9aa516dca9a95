#include "models/host/hosts_module.h"

#include <algorithm>
#include <string>

#include "models/common/error.h"

namespace fabricsim::host {

HostsModule::HostsModule(sc_core::sc_module_name name, std::vector<Host> hosts,
                         std::unique_ptr<traffic::TrafficSource> source,
                         const HostsModuleConfig& cfg, std::unique_ptr<Endpoint> endpoint)
    : sc_core::sc_module(name),
      out("out", hosts.size()),
      in("in", hosts.size()),
      devices_(std::move(hosts)),
      source_(std::move(source)),
      workload_(source_ ? source_->workload_packets() : 0),
      link_latency_(cfg.link_latency),
      win_start_(cfg.window_start),
      win_end_(cfg.window_end),
      win_mid_(Time::fs(cfg.window_start.as_fs() +
                        (cfg.window_end.as_fs() - cfg.window_start.as_fs()) / 2)),
      endpoint_(std::move(endpoint)),
      reorder_(static_cast<int>(devices_.size())),
      latency_(cfg.histogram_bits),
      // 8192 records (256 KiB) a batch: each hand-over may wake the helper with a system call.
      recorder_([this](const std::vector<Arrival>& b) { record(b); }, cfg.stats_thread, 8192) {
  if (devices_.size() > Arrival::kHostMask + 1)
    throw InputError("a run of " + std::to_string(devices_.size()) + " hosts: at most " +
                     std::to_string(Arrival::kHostMask + 1) + " are supported");
  for (size_t h = 0; h < devices_.size(); ++h) {
    auto s = std::make_unique<Slot>();
    s->owner = this;
    s->dev = &devices_[h];
    s->id = s->dev->id();
    s->credit_rx = s->dev->has_flow_control() && s->dev->flow_control()->credit();
    any_flow_control_ |= s->dev->has_flow_control();
    in[h].bind(*s);
    hosts_.push_back(std::move(s));
  }
  if (endpoint_) endpoint_->attach(this);
  SC_METHOD(emit);
  sensitive << wake_;
  // Runs once at time 0 to fetch the first packet.
}

void HostsModule::end_of_elaboration() {
  const auto ifs = bound_interfaces(out);
  for (size_t h = 0; h < hosts_.size(); ++h) hosts_[h]->dev->set_output(ifs[h]);
}

bool HostsModule::advance() {
  if (!source_) return false;
  if (next_ && ++next_ < pulled_.data() + pulled_n_) return true;
  pulled_n_ = source_->next_batch(pulled_.data(), kPull);
  next_ = pulled_.data();
  return pulled_n_ > 0;
}

void HostsModule::fetch() {
  have_next_ = !stopped_ && advance();
  if (have_next_) wake_at(next_->inject_time);
}

void HostsModule::wake_at(Time t) {
  if (t >= next_wake_) return;
  next_wake_ = t;
  wake_.notify(to_sc(t - sim_now(*this)));
}

void HostsModule::host_wait(Slot& s, Time t) {
  // One pending wake-up per host is enough: service() asks for the next one. (Inside a window,
  // one before its end is run_host's to run.)
  if (t >= s.wake) return;
  s.wake = t;
  if (t >= window_end_) waits_.push({t, s.dev->id()});
}

void HostsModule::drain_hosts(Time now) {
  while (!waits_.empty() && waits_.top().first <= now) {
    const auto [t, id] = waits_.top();
    waits_.pop();
    Slot& s = *hosts_[id];
    if (t != s.wake) continue;  // superseded by an earlier wake-up
    s.wake = Time::max();
    host_wait(s, s.dev->service(now));
    served(s, now);
  }
}

void HostsModule::rx_event(Slot& s, Time t, bool is_control, const ControlFrame& f, int tc,
                           uint32_t bytes) {
  rx_events_.push({t, rx_seq_++, s.dev->id(), is_control, f, tc, bytes});
  wake_at(t);
}

void HostsModule::apply_rx(Time now) {
  // In arrival order: a host's receive buffer takes and frees data at once (the host consumes
  // it), and control frames reach its MAC.
  while (!rx_events_.empty() && rx_events_.top().t <= now) {
    const RxEvent e = rx_events_.top();
    rx_events_.pop();
    apply_rx(*hosts_[e.host], e, now);
  }
}

void HostsModule::apply_rx(Slot& s, const RxEvent& e, Time now) {
  if (e.is_control)
    s.dev->rx_control(e.f, now);
  else
    s.dev->rx_data(e.tc, e.bytes, e.t);
  host_wait(s, s.dev->service(now));
  served(s, now);
}

void HostsModule::emit() {
  const Time now = sim_now(*this);
  if (catch_up_) catch_up_(now);
  next_wake_ = Time::max();
  if (!started_) {
    started_ = true;
    if (any_flow_control_)  // flow-control timers run from the start
      for (auto& s : hosts_)
        if (s->dev->has_flow_control()) host_wait(*s, s->dev->service(now));
    fetch();  // time 0: the first packet
    run_endpoint(now);
    if (!waits_.empty()) wake_at(waits_.top().first);
    return;
  }
  if (run_window(now)) return;
  apply_rx(now);
  drain_hosts(now);
  run_endpoint(now);
  while (have_next_ && next_->inject_time == now && !stopped_) {
    Host& dev = devices_[next_->src];
    if (__builtin_expect(dev.held(next_->tc), 0)) {
      hold(dev, *next_);
    } else {
      const Time t = dev.offer(*next_, now);
      if (t != Time::max()) host_wait(*hosts_[next_->src], t);
    }
    have_next_ = advance();
  }
  drain_hosts(now);  // a host whose wire frees exactly now
  wake_for_queues();
}

void HostsModule::wake_for_queues() {
  if (have_next_ && !stopped_) wake_at(next_->inject_time);
  if (!waits_.empty() && (!stopped_ || any_flow_control_)) wake_at(waits_.top().first);
  if (!rx_events_.empty()) wake_at(rx_events_.top().t);
  if (!ep_rx_.empty()) wake_at(ep_rx_.top().t);
}

void HostsModule::send(int h, Packet& p, Time now) {
  const Time t = devices_[h].offer(p, now);
  if (t != Time::max()) host_wait(*hosts_[h], t);
}

void HostsModule::send_int(int h, Packet& p, const IntStack& tel, Time now) {
  const Time t = devices_[h].offer_int(p, tel, now);
  if (t != Time::max()) host_wait(*hosts_[h], t);
}

uint32_t HostsModule::keep_tel(const IntStack& t) {
  if (ep_tel_free_.empty()) {
    ep_tel_.push_back(t);
    return static_cast<uint32_t>(ep_tel_.size() - 1);
  }
  const uint32_t k = ep_tel_free_.back();
  ep_tel_free_.pop_back();
  ep_tel_[k] = t;
  return k;
}

void HostsModule::run_endpoint(Time now) {
  if (!endpoint_) return;
  while (!ep_rx_.empty() && ep_rx_.top().t <= now) {
    const EndpointArrival a = ep_rx_.top();
    ep_rx_.pop();
    deliver(a);
  }
  const Time t = endpoint_->run(now);
  if (t != Time::max()) wake_at(std::max(t, now));
}

void HostsModule::deliver(const EndpointArrival& a) {
  if (a.tel == kNoTel) {
    endpoint_->receive(a.host, a.p, a.t);
  } else {
    const IntStack t = ep_tel_[a.tel];
    ep_tel_free_.push_back(a.tel);
    endpoint_->receive_int(a.host, a.p, t, a.t);
  }
}

bool HostsModule::run_window(Time now) {
  // Only with an endpoint that allows it, nothing of a source's to inject, and the run not
  // stopped (a stopped run's hosts wake only with flow control: emit()'s own order).
  if (!window_bound_ || !endpoint_ || have_next_ || stopped_ || !endpoint_->window_safe())
    return false;
  const Time end = window_bound_(now);
  if (end <= now) return false;
  if (win_rx_.empty()) {
    win_rx_.resize(hosts_.size());
    win_ep_.resize(hosts_.size());
    win_mark_.assign(hosts_.size(), 0);
  }
  win_hosts_.clear();
  const auto mark = [this](int h) {
    if (win_mark_[static_cast<size_t>(h)]) return;
    win_mark_[static_cast<size_t>(h)] = 1;
    win_hosts_.push_back(h);
  };
  while (!rx_events_.empty() && rx_events_.top().t < end) {
    win_rx_[static_cast<size_t>(rx_events_.top().host)].push_back(rx_events_.top());
    mark(rx_events_.top().host);
    rx_events_.pop();
  }
  while (!ep_rx_.empty() && ep_rx_.top().t < end) {
    win_ep_[static_cast<size_t>(ep_rx_.top().host)].push_back(ep_rx_.top());
    mark(ep_rx_.top().host);
    ep_rx_.pop();
  }
  while (!waits_.empty() && waits_.top().first < end) {
    const auto [t, id] = waits_.top();
    waits_.pop();
    if (t == hosts_[static_cast<size_t>(id)]->wake) mark(id);  // (else superseded)
  }
  win_devices_.clear();
  endpoint_->begin_window(end, win_devices_);
  for (const int h : win_devices_) mark(h);
  std::sort(win_hosts_.begin(), win_hosts_.end());
  window_end_ = end;
  for (size_t k = 0; k < win_hosts_.size(); ++k) {
    const int h = win_hosts_[k];
    // The next host's device, asked for while this one runs (its state is a window old: cold).
    if (k + 1 < win_hosts_.size()) endpoint_->prefetch_host(win_hosts_[k + 1]);
    win_mark_[static_cast<size_t>(h)] = 0;
    run_host(*hosts_[static_cast<size_t>(h)], now, end);
  }
  window_end_ = Time();
  ++host_windows_;
  const Time next = endpoint_->end_window(end);
  if (next != Time::max()) wake_at(std::max(next, now));
  wake_for_queues();
  return true;
}

void HostsModule::run_host(Slot& s, Time start, Time end) {
  // emit()'s steps at each instant the host has work, for this host alone: nothing another
  // host does in the window reaches it.
  const auto h = static_cast<size_t>(s.id);
  std::vector<RxEvent>& rx = win_rx_[h];
  std::vector<EndpointArrival>& ep = win_ep_[h];
  size_t ri = 0, ei = 0;
  // Its arrivals' QP records, asked for at once: each is cold (its peer's packets come a
  // thousand NICs' work apart), and the misses then overlap.
  for (const EndpointArrival& a : ep) endpoint_->prefetch_arrival(a.host, a.p);
  for (;;) {
    Time now = std::min(s.wake, endpoint_->host_next(s.id));
    if (ri < rx.size()) now = std::min(now, rx[ri].t);
    if (ei < ep.size()) now = std::min(now, ep[ei].t);
    if (now >= end) break;
    now = std::max(now, start);
    for (; ri < rx.size() && rx[ri].t <= now; ++ri) apply_rx(s, rx[ri], now);
    drain_host(s, now);
    for (; ei < ep.size() && ep[ei].t <= now; ++ei) deliver(ep[ei]);
    endpoint_->run_host(s.id, now);
    drain_host(s, now);
  }
  rx.clear();
  ep.clear();
}

void HostsModule::hold(Host& dev, const Packet& p) {
  if (workload_ == 0) {  // an open-loop source: the packet is lost to back-pressure
    dev.refuse();
    return;
  }
  // A trace's packet waits, behind any of its class's that wait already, until the queue drains.
  const int tc = p.tc & (Host::kClasses - 1);
  spill_.push(static_cast<size_t>(dev.id()) * Host::kClasses + tc, p);
  if (!dev.deferred(tc)) dev.defer(tc, this);
}

void HostsModule::refill(Host& h, int tc) {
  // The class's packets the merged stream passed while it was deferred, oldest first; once none
  // is left, the merged stream carries the class's packets again.
  const size_t s = static_cast<size_t>(h.id()) * Host::kClasses + tc;
  Packet p;
  while (!h.full(tc)) {
    if (!spill_.pop(s, p)) {
      h.undefer(tc);
      return;
    }
    h.push(p);
  }
}

void HostsModule::record(const std::vector<Arrival>& batch) {
  for (const Arrival& a : batch) {
    reorder_.arrive(a.src(), a.host(), static_cast<uint64_t>(a.inject_time.as_fs()));
    Host::RxStats& rx = devices_[a.host()].rx();
    rx.ce_marked += a.ce();
    ++rx.delivered;
    rx.win_bytes.add(a.bytes(), a.first_bit, a.last_bit, win_start_, win_end_);
    if (a.inject_time >= win_start_ && a.inject_time < win_end_) {
      ++rx.win_delivered;
      const auto lat = static_cast<uint64_t>((a.last_bit - a.inject_time).as_fs());
      latency_.record(lat);
      const int half = a.inject_time >= win_mid_;
      half_sum_[half] += lat;
      ++half_n_[half];
    }
  }
  for (const Arrival& a : batch)
    if (a.inject_time >= win_start_ && a.inject_time < win_end_)
      devices_[a.host()].rx().latency.record(
          static_cast<uint64_t>((a.last_bit - a.inject_time).as_fs()));
}

}  // namespace fabricsim::host
