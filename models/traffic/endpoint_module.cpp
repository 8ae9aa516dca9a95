#include "models/traffic/endpoint_module.h"

namespace fabricsim::traffic {

TrafficSourceModule::TrafficSourceModule(sc_core::sc_module_name name,
                                         std::unique_ptr<TrafficSource> source, int endpoints,
                                         BitRate port_rate, Time window_start, Time window_end,
                                         FrameOverhead overhead, Time link_latency)
    : sc_core::sc_module(name),
      out("out", static_cast<size_t>(endpoints)),
      source_(std::move(source)),
      overhead_(overhead),
      link_latency_(link_latency),
      hosts_(static_cast<size_t>(endpoints)),
      fifos_(static_cast<size_t>(endpoints)),
      host_wake_(static_cast<size_t>(endpoints), Time::max()),
      win_start_(window_start),
      win_end_(window_end),
      win_bytes_(static_cast<size_t>(endpoints)) {
  const std::vector<BitRate> rates(static_cast<size_t>(endpoints), port_rate);
  set_host_rates(rates, rates, Time::max());
  SC_METHOD(emit);
  sensitive << wake_;
  // Runs once at time 0 to fetch the first packet.
}

void TrafficSourceModule::end_of_elaboration() {
  out_if_ = bound_interfaces(out);
}

bool TrafficSourceModule::advance() {
  if (next_ && ++next_ < pulled_.data() + pulled_n_) return true;
  pulled_n_ = source_->next_batch(pulled_.data(), kPull);
  next_ = pulled_.data();
  return pulled_n_ > 0;
}

void TrafficSourceModule::fetch() {
  have_next_ = !stopped_ && advance();
  if (have_next_) wake_at(next_->inject_time);
}

void TrafficSourceModule::wake_at(Time t) {
  if (t >= next_wake_) return;
  next_wake_ = t;
  wake_.notify(to_sc(t - sim_now(*this)));
}

TrafficSourceModule::FrameTimes TrafficSourceModule::frame_times(const Host& h, uint64_t bytes,
                                                                 Time now) const {
  // The frame's preamble starts now, or when the previous frame's gap ends (wire_free holds the
  // earliest next first bit). Generated frames are spaced by their wire time, so without
  // contention for the wire a frame never waits. The rate is the one in force at its start.
  FrameTimes f;
  f.start = std::max(now, h.wire_free - timing(h, now).lead);
  const MacTiming& m = timing(h, f.start);
  f.first = std::max(f.start + m.lead, h.wire_free);
  f.last = f.first + m.rate.serialization(Bytes(overhead_.frame_bytes(bytes)));
  f.next_free = f.last + m.gap;
  return f;
}

void TrafficSourceModule::send(Host& h, Packet& gen, Time now) {
  const FrameTimes ft = frame_times(h, gen.size.count(), now);
  h.wire_free = ft.next_free;
  const Time generated = gen.inject_time;
  if (ft.start > generated) {
    const Time wait = ft.start - generated;
    ++queued_;
    wait_total_ += wait;
    wait_max_ = std::max(wait_max_, wait);
  }
  put_on_wire(gen, ft.first, ft.last);
}

inline void TrafficSourceModule::put_on_wire(Packet& p, Time first_bit, Time last_bit) {
  p.inject_time = first_bit + link_latency_;  // first bit into the switch
  if (ect_) p.ecn = kEcnEct0;
  ++injected_;
  if (p.inject_time >= win_start_ && p.inject_time < win_end_) ++win_injected_;
  win_bytes_[p.src].add(p.size.count(), p.inject_time, p.inject_time + (last_bit - first_bit),
                        win_start_, win_end_);
  out_if_[p.src]->transfer(p, first_bit, last_bit);
}

void TrafficSourceModule::set_host_rates(const std::vector<BitRate>& rates,
                                         const std::vector<BitRate>& rates_after, Time change_at) {
  for (size_t i = 0; i < hosts_.size() && i < rates.size(); ++i) {
    hosts_[i].mac = MacTiming(rates[i], overhead_);
    hosts_[i].mac_after = MacTiming(i < rates_after.size() ? rates_after[i] : rates[i], overhead_);
  }
  rates_change_at_ = change_at;
  plain_ = !fc_ && rates_change_at_ == Time::max();
}

void TrafficSourceModule::set_flow_control(link::FlowControl* fc) {
  fc_ = fc && fc->enabled() ? fc : nullptr;
  plain_ = !fc_ && rates_change_at_ == Time::max();
}

void TrafficSourceModule::host_wait(int id, Time t) {
  // One pending wake-up per host is enough: service() arranges the next one.
  if (t >= host_wake_[id]) return;
  host_wake_[id] = t;
  waits_.push({t, id});
}

inline void TrafficSourceModule::offer(Packet& p, Time now) {
  Host& h = hosts_[p.src];
  if (plain_ && h.waiting == 0) {
    // The common case: no flow control, no lane failure, and the wire idle by the time the
    // preamble would start: the frame goes at once and has not waited.
    const Time first = now + h.mac.lead;
    if (h.wire_free <= first) {
      const Time last =
          first + h.mac.rate.serialization(Bytes(overhead_.frame_bytes(p.size.count())));
      h.wire_free = last + h.mac.gap;
      put_on_wire(p, first, last);
      return;
    }
  }
  auto& queues = fifos_[p.src];
  if (queues.empty()) queues.resize(kClasses);
  queues[p.tc & (kClasses - 1)].push_back(p);
  ++h.waiting;
  ++backlog_;
  service(p.src, now);
}

void TrafficSourceModule::service(int id, Time now) {
  Host& h = hosts_[id];
  if (h.wire_free > now + timing(h, now).lead) {  // mid-frame: look again at the frame boundary
    if (h.waiting || fc_) host_wait(id, h.wire_free - timing(h, now).lead);
    return;
  }
  if (fc_) {
    ControlFrame f;
    if (fc_->take_control(id, now, f)) {  // control frames first, one per frame boundary
      const FrameTimes ft = frame_times(h, f.bytes, now);
      h.wire_free = ft.next_free;
      out_if_[id]->control(f, ft.first, ft.last);
      host_wait(id, h.wire_free - timing(h, now).lead);
      return;
    }
    const Time timer = fc_->next_control(id);
    if (timer != Time::max()) host_wait(id, std::max(timer, now));
  }
  if (!h.waiting) return;
  // One FIFO per class, as a NIC has per-priority queues: the oldest head packet goes first,
  // among the classes flow control lets go (a paused priority, or a VL without credit, holds
  // only its own class; with credits, VL arbitration chooses the VL).
  auto& fifos = fifos_[id];
  auto older = [&](int a, int b) {
    const Packet& x = fifos[a].front();
    const Packet& y = fifos[b].front();
    return x.inject_time != y.inject_time ? x.inject_time < y.inject_time : x.id < y.id;
  };
  int pick = -1;
  if (fc_ && fc_->credit()) {
    uint64_t head[kClasses];
    for (int c = 0; c < kClasses; ++c)
      head[c] = fifos[c].empty() ? 0 : fifos[c].front().size.count();
    pick = fc_->select_class(id, now, head, kClasses);
  } else {
    const uint32_t paused = fc_ ? fc_->paused(id, now) : 0;
    for (int c = 0; c < kClasses; ++c)
      if (!fifos[c].empty() && !((paused >> c) & 1) && (pick < 0 || older(c, pick))) pick = c;
  }
  if (pick < 0) {  // PFC: until a pause changes; credit: an FC packet's arrival wakes the host
    const Time t = fc_->next_unblock(id, now);
    if (t != Time::max()) host_wait(id, std::max(t, now));
    return;
  }
  std::deque<Packet>& fifo = fifos[pick];
  Packet& p = fifo.front();
  if (fc_) fc_->on_send(id, p.tc, static_cast<uint32_t>(p.size.count()), now);
  send(h, p, now);
  fifo.pop_front();
  --h.waiting;
  --backlog_;
  if (h.waiting) host_wait(id, h.wire_free - timing(h, now).lead);
}

void TrafficSourceModule::drain_hosts(Time now) {
  while (!waits_.empty() && waits_.top().first <= now) {
    const int id = waits_.top().second;
    const Time t = waits_.top().first;
    waits_.pop();
    if (t != host_wake_[id]) continue;  // superseded by an earlier wake-up
    host_wake_[id] = Time::max();
    service(id, now);
  }
}

void TrafficSourceModule::host_rx_data(int host, const Packet& p, Time arrival) {
  RxEvent e{arrival, rx_seq_++, host, false, {}, p.tc, static_cast<uint32_t>(p.size.count())};
  rx_events_.push(e);
  wake_at(arrival);
}

void TrafficSourceModule::host_rx_control(int host, const ControlFrame& f, Time arrival) {
  RxEvent e{arrival, rx_seq_++, host, true, f, 0, 0};
  rx_events_.push(e);
  wake_at(arrival);
}

void TrafficSourceModule::apply_rx(Time now) {
  // In arrival order: a host's receive buffer takes and frees data at once (the host consumes
  // it), and control frames reach its MAC.
  while (!rx_events_.empty() && rx_events_.top().t <= now) {
    const RxEvent e = rx_events_.top();
    rx_events_.pop();
    if (!fc_) continue;
    if (e.is_control) {
      fc_->on_control_in_wire_order(e.host, e.f);
      fc_->on_control(e.host, e.f, now);
    } else {
      fc_->admit(e.host, e.tc, e.bytes, e.t);
      fc_->release(e.host, e.tc, e.bytes, e.t);
    }
    service(e.host, now);
  }
}

void TrafficSourceModule::emit() {
  const Time now = sim_now(*this);
  next_wake_ = Time::max();
  if (!started_) {
    started_ = true;
    if (fc_)
      for (int h = 0; h < static_cast<int>(hosts_.size()); ++h) service(h, now);  // timers
    fetch();  // time 0: the first packet
    if (!waits_.empty()) wake_at(waits_.top().first);
    return;
  }
  apply_rx(now);
  drain_hosts(now);
  while (have_next_ && next_->inject_time == now && !stopped_) {
    offer(*next_, now);
    have_next_ = advance();
  }
  drain_hosts(now);  // a host whose wire frees exactly now
  if (have_next_ && !stopped_) wake_at(next_->inject_time);
  if (!waits_.empty() && (!stopped_ || fc_)) wake_at(waits_.top().first);
  if (!rx_events_.empty()) wake_at(rx_events_.top().t);
}

TrafficSinkModule::TrafficSinkModule(sc_core::sc_module_name name, int endpoints, Time window_start,
                                     Time window_end, int histogram_bits, Time link_latency,
                                     bool stats_thread)
    : sc_core::sc_module(name),
      in("in", static_cast<size_t>(endpoints)),
      ports_(static_cast<size_t>(endpoints)),
      reorder_(endpoints),
      link_latency_(link_latency),
      win_start_(window_start),
      win_end_(window_end),
      latency_(histogram_bits),
      win_bytes_(static_cast<size_t>(endpoints)),
      // 8192 records (256 KiB) a batch: each hand-over may wake the helper with a system call.
      recorder_([this](const std::vector<Arrival>& b) { record(b); }, stats_thread, 8192) {
  port_latency_.reserve(static_cast<size_t>(endpoints));
  for (int i = 0; i < endpoints; ++i) {
    // Per-port histograms are coarser (percentiles within 2^-5 = 3%): 64-512 fine histograms
    // would not stay in cache, and recording is on every packet's path.
    port_latency_.emplace_back(std::min(histogram_bits, 5));
    ports_[i].owner = this;
    ports_[i].port = i;
    in[i].bind(ports_[i]);
  }
}

void TrafficSinkModule::record(const std::vector<Arrival>& batch) {
  for (const Arrival& a : batch) {
    ce_marked_ += a.ce;
    ++delivered_;
    win_bytes_[a.port].add(a.bytes, a.first_bit, a.last_bit, win_start_, win_end_);
    if (a.inject_time >= win_start_ && a.inject_time < win_end_) {
      ++win_delivered_;
      latency_.record(static_cast<uint64_t>((a.last_bit - a.inject_time).as_fs()));
    }
  }
  for (const Arrival& a : batch)
    if (a.inject_time >= win_start_ && a.inject_time < win_end_)
      port_latency_[a.port].record(static_cast<uint64_t>((a.last_bit - a.inject_time).as_fs()));
}

}  // namespace fabricsim::traffic
