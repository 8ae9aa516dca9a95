// SystemC wrapper of the traffic hosts: one process serves many Host devices.
//
// Each host has its own ports (out[h] to its link, in[h] from it), its own MAC, flow control and
// statistics (host.h); what they share is one process, because one process that pulls the merged,
// time-ordered packet stream of a TrafficSource and hands each packet to its host at the time it
// was generated measured fastest (a process per host would wake once per packet each). The
// receive side records arrivals in batches (optionally on a helper thread) into each host's
// receive statistics and into the all-hosts latency histogram; it counts packets delivered out of
// order within their (source, destination) flow (models/traffic/reorder_counter.h).
//
// Bounded queues (host.queue_limit): a packet whose host class queue is full is refused (synthetic
// traffic: counted, never injected) or, from a trace (a finite workload), kept: it waits in a
// SpillStore (spill_store.h: a temporary file, per class in order) behind the class's other
// waiting packets, and the merged stream's later packets of that class join them there, until the
// queue drains them (refill). The trace is read once, in order; a class reads back only its own
// packets. The host then sends exactly what an unbounded queue would have sent, in the same order.
#pragma once

#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "models/common/batch_worker.h"
#include "models/common/packet_port.h"
#include "models/common/stats.h"
#include "models/host/endpoint.h"
#include "models/host/host.h"
#include "models/host/spill_store.h"
#include "models/traffic/reorder_counter.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::host {

struct HostsModuleConfig {
  Time window_start, window_end;
  Time link_latency;  // one way: taken off arrival times (latency ends at the switch's egress)
  int histogram_bits = 10;    // the all-hosts latency histogram
  bool stats_thread = false;  // record receive statistics on a helper thread (same results)
};

class HostsModule : public sc_core::sc_module, private ClassFeeder, private HostPorts {
 public:
  SC_HAS_PROCESS(HostsModule);
  sc_core::sc_vector<sc_core::sc_port<PacketPortIf>> out;   // per host: to its link
  sc_core::sc_vector<sc_core::sc_export<PacketPortIf>> in;  // per host: from its link

  // `source`: open-loop traffic (null: none); `endpoint`: a closed-loop layer above the hosts'
  // MACs (the RDMA NICs; null: none).
  HostsModule(sc_core::sc_module_name name, std::vector<Host> hosts,
              std::unique_ptr<traffic::TrafficSource> source, const HostsModuleConfig& cfg,
              std::unique_ptr<Endpoint> endpoint = nullptr);
  Endpoint* endpoint() { return endpoint_.get(); }
  const Endpoint* endpoint() const { return endpoint_.get(); }
  // Threads: called first in each activation with its time, so that the switches' window
  // ending by then is joined and what it sent the hosts has arrived (DeviceScheduler::sync).
  void set_catch_up(std::function<void(Time)> f) { catch_up_ = std::move(f); }
  // Host windows: f(now) is the time before which every host may run from `now` one host after
  // another, because nothing yet to be handed to a host arrives before it (the switches' windows
  // not yet joined, and those to come, hand frames over a link latency after they start) and
  // nothing a host sends arrives at a switch before the switch runs that far; nor does it pass
  // an instant the runner reads (its horizon). Fabric::host_window_end; none set: no windows.
  // Used while the endpoint allows it (Endpoint::window_safe), with a NIC's event after
  // another's in each host's time order, as one process would run them (the same results), but
  // with each host's state in the caches across its events.
  void set_window_bound(std::function<Time(Time)> f) { window_bound_ = std::move(f); }
  // Windows run so far (perf.json's host_windows).
  uint64_t host_windows() const { return host_windows_; }

  int size() const { return static_cast<int>(hosts_.size()); }
  const Host& host(int h) const { return sync().hosts_[h]->self(); }
  Host& host(int h) { return *sync().hosts_[h]->dev; }
  // Stop injecting (the run is over); received frames are still recorded.
  void stop() {
    stopped_ = true;
    if (endpoint_) endpoint_->stop(sim_now(*this));
  }
  // Ends the helper threads (the traffic source's prefetcher, the statistics recorder) once the
  // simulation will not run again: the statistics stay readable.
  void end_threads() {
    stopped_ = true;
    source_.reset();
    recorder_.stop();
  }

  // All hosts together.
  const stats::Histogram& latency_fs() const { return sync().latency_; }
  // The measured packets split at the middle of the window by inject time (0: first half, 1:
  // second): count and latency sum, so that a report can tell a queue still growing (second half
  // slower than the first) from one in steady state.
  uint64_t half_count(int half) const { return sync().half_n_[half]; }
  double half_mean_fs(int half) const {
    const HostsModule& m = sync();
    return m.half_n_[half] ? static_cast<double>(static_cast<long double>(m.half_sum_[half]) /
                                                 static_cast<long double>(m.half_n_[half]))
                           : 0.0;
  }
  uint64_t reordered() const { return sync().reorder_.reordered(); }
  uint64_t injected() const {
    return sum([](const Host& h) { return h.tx().injected; });
  }
  uint64_t win_injected() const {
    return sum([](const Host& h) { return h.tx().win_injected; });
  }
  uint64_t delivered() const {
    return sum([](const Host& h) { return h.rx().delivered; });
  }
  uint64_t win_delivered() const {
    return sum([](const Host& h) { return h.rx().win_delivered; });
  }
  uint64_t ce_marked() const {
    return sum([](const Host& h) { return h.rx().ce_marked; });
  }
  uint64_t backlog() const {
    return sum([](const Host& h) { return h.backlog(); });
  }
  uint64_t refused() const {
    return sum([](const Host& h) { return h.tx().refused; });
  }
  // A finite workload (a trace; 0 for synthetic traffic): its packets, and those not yet sent
  // (still in the file or waiting in a host's queue).
  uint64_t workload() const { return workload_; }
  uint64_t workload_left() const {
    if (workload_ == 0) return 0;
    const uint64_t sent = injected();
    return workload_ > sent ? workload_ - sent : 0;
  }

 private:
  // A host and its receive port (the export binds to it).
  struct Slot : PacketPortIf {
    HostsModule* owner = nullptr;
    Host* dev = nullptr;  // in devices_
    int id = 0;
    bool credit_rx = false;   // IB credits: received data returns credits
    Time wake = Time::max();  // the earliest wake-up already queued for this host
    const Host& self() const { return *dev; }
    void transfer(const Packet& p, Time first_bit, Time last_bit) override {
      owner->receive(*this, p, first_bit, last_bit);
    }
    void transfer_int(const Packet& p, const IntStack& tel, Time first_bit,
                      Time last_bit) override {
      owner->receive(*this, p, first_bit, last_bit, &tel);
    }
    void control(const ControlFrame& f, Time, Time last_bit) override {
      if (dev->has_flow_control()) owner->rx_event(*this, last_bit, true, f, 0, 0);
    }
  };
  // What the statistics need of a delivered packet.
  struct Arrival {
    Arrival() = default;
    // (Built in place in the batch by BatchWorker::emplace: a temporary copied in with wide
    // loads over its narrower stores stalled store-to-load forwarding on every packet.)
    Arrival(Time inject, Time first, Time last, uint16_t b, int32_t h, int32_t s, bool c)
        : inject_time(inject),
          first_bit(first),
          last_bit(last),
          packed(static_cast<uint64_t>(h) | static_cast<uint64_t>(s) << kHostBits |
                 static_cast<uint64_t>(c) << (2 * kHostBits) |
                 static_cast<uint64_t>(b) << (2 * kHostBits + 1)) {}
    Time inject_time;  // first bit into the network
    Time first_bit;    // first bit out of the switch
    Time last_bit;     // last bit out of the switch
    // The receiving host and the source (23 bits each), ECN CE (1) and the frame's bytes (16:
    // frames are at most 65,535 B), in one word so that a record stays 32 bytes.
    uint64_t packed = 0;
    static constexpr int kHostBits = 23;
    static constexpr uint64_t kHostMask = (uint64_t{1} << kHostBits) - 1;
    int32_t host() const { return static_cast<int32_t>(packed & kHostMask); }
    int32_t src() const { return static_cast<int32_t>((packed >> kHostBits) & kHostMask); }
    bool ce() const { return (packed >> (2 * kHostBits)) & 1; }
    uint16_t bytes() const { return static_cast<uint16_t>(packed >> (2 * kHostBits + 1)); }
  };
  static_assert(sizeof(Arrival) == 32, "two arrival records a cache line");
  // Flow-control arrivals, applied in time order when their time comes.
  struct RxEvent {
    Time t;
    uint64_t seq;
    int host;
    bool is_control;
    ControlFrame f;
    int tc;
    uint32_t bytes;
    bool operator>(const RxEvent& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  void emit();
  void end_of_elaboration() override;
  // A packet of the merged stream whose host class queue is full or has packets waiting in spill_.
  void hold(Host& dev, const Packet& p);
  void refill(Host& h, int tc) override;
  // Moves next_ on (pulling the next batch when this one is used up); false when exhausted.
  bool advance();
  void fetch();
  void wake_at(Time t);
  // HostPorts, for the endpoint.
  Time tx_free(int h, Time now) const override { return devices_[h].tx_free(now); }
  void send(int h, Packet& p, Time now) override;
  void send_int(int h, Packet& p, const IntStack& tel, Time now) override;
  // After host s was served: tells the endpoint when its MAC has nothing waiting.
  void served(Slot& s, Time now) {
    if (endpoint_ && s.dev->backlog() == 0) endpoint_->tx_ready(s.id, now);
  }
  // Hands the endpoint what arrived up to `now`, then runs it.
  void run_endpoint(Time now);
  // Host `h` wants service at `t` (Time::max(): no).
  void host_wait(Slot& s, Time t);
  void drain_hosts(Time now);
  void apply_rx(Time now);
  void apply_rx(Slot& s, const RxEvent& e, Time now);
  // Asks to be woken for the earliest of the source's next packet and the hosts' queues.
  void wake_for_queues();
  // Host windows: runs every host with work before the window's end through it, one after
  // another (false: no window may start at `now`).
  bool run_window(Time now);
  void run_host(Slot& s, Time start, Time end);
  // As drain_hosts, for host s alone.
  void drain_host(Slot& s, Time now) {
    while (s.wake <= now) {
      s.wake = Time::max();
      host_wait(s, s.dev->service(now));
      served(s, now);
    }
  }
  void rx_event(Slot& s, Time t, bool is_control, const ControlFrame& f, int tc, uint32_t bytes);
  [[gnu::always_inline]] void receive(Slot& s, const Packet& p, Time first_bit, Time last_bit,
                                      const IntStack* tel = nullptr);
  // Applies a batch of arrivals to the statistics: in batches, so that the histograms' buckets
  // stay in cache for a whole batch (and, with the helper thread, off the simulation thread).
  void record(const std::vector<Arrival>& batch);
  const HostsModule& sync() const {
    recorder_.drain();
    return *this;
  }
  template <class F>
  uint64_t sum(F f) const {
    uint64_t n = 0;
    for (const auto& s : sync().hosts_) n += f(*s->dev);
    return n;
  }

  // The hosts, side by side in one block (their per-packet state stays close together), and a
  // slot per host with its receive port.
  std::vector<Host> devices_;
  std::vector<std::unique_ptr<Slot>> hosts_;
  std::unique_ptr<traffic::TrafficSource> source_;
  // Per (host, class) stream host * Host::kClasses + tc: a trace's packets that wait while their
  // class queue is full (no file until one is needed).
  SpillStore spill_;
  uint64_t workload_ = 0;  // source_->workload_packets(), kept past end_threads()
  bool any_flow_control_ = false;
  Time link_latency_, win_start_, win_end_;
  Time win_mid_;  // packets injected from here on are the window's second half
  // (time, host) wake-ups for hosts whose queues wait for the wire, earliest first.
  std::priority_queue<std::pair<Time, int>, std::vector<std::pair<Time, int>>, std::greater<>>
      waits_;
  std::priority_queue<RxEvent, std::vector<RxEvent>, std::greater<>> rx_events_;
  uint64_t rx_seq_ = 0;
  // The endpoint and the packets delivered to it, each at its last bit, in time order.
  std::unique_ptr<Endpoint> endpoint_;
  std::function<void(Time)> catch_up_;
  struct EndpointArrival {
    Time t;
    uint64_t seq;
    int host;
    Packet p;
    uint32_t tel = kNoTel;  // its INT stack in ep_tel_, or none
    bool operator>(const EndpointArrival& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  static constexpr uint32_t kNoTel = UINT32_MAX;
  // Hands the endpoint an arrival (run_endpoint, run_host).
  void deliver(const EndpointArrival& a);
  // The INT stacks of arrivals waiting in ep_rx_, and their free slots.
  std::vector<IntStack> ep_tel_;
  std::vector<uint32_t> ep_tel_free_;
  uint32_t keep_tel(const IntStack& t);
  std::priority_queue<EndpointArrival, std::vector<EndpointArrival>, std::greater<>> ep_rx_;
  // Host windows: per host, its flow-control and endpoint arrivals before the window's end (in
  // their time order, out of rx_events_ and ep_rx_); the hosts to run, each once (marked).
  std::function<Time(Time)> window_bound_;
  Time window_end_;  // inside a window: its end (host_wait queues nothing before it); else 0
  std::vector<std::vector<RxEvent>> win_rx_;
  std::vector<std::vector<EndpointArrival>> win_ep_;
  std::vector<int> win_hosts_, win_devices_;  // (win_devices_: those the endpoint names)
  std::vector<uint8_t> win_mark_;
  uint64_t host_windows_ = 0;
  Time next_wake_ = Time::max();
  // The source's packets are pulled a batch at a time (one call per batch, not per packet);
  // next_ is the next one to offer, in pulled_.
  static constexpr size_t kPull = 64;
  std::vector<Packet> pulled_ = std::vector<Packet>(kPull);
  size_t pulled_n_ = 0;
  Packet* next_ = nullptr;
  bool have_next_ = false;
  bool stopped_ = false;
  bool started_ = false;
  sc_core::sc_event wake_;
  // Updated by record(), in arrival order: a flow's packets are numbered by their inject time
  // (their first bit into the network), so a packet counts as reordered when one of its flow
  // injected after it arrived first: what the network did, whatever the classes' queueing at the
  // source.
  traffic::ReorderCounter reorder_;
  stats::Histogram latency_;  // all hosts, fine: the run's percentiles (updated by record())
  unsigned __int128 half_sum_[2] = {0, 0};  // fs, exact (as Histogram), per half (record())
  uint64_t half_n_[2] = {0, 0};
  // Last member: destroyed (its thread joined) before the statistics it updates.
  mutable BatchWorker<Arrival> recorder_;
};

// On every delivered packet's path, from the port (a virtual call): defined here to be inlined.
inline void HostsModule::receive(Slot& s, const Packet& p, Time first_bit, Time arrival,
                                 const IntStack* tel) {
  if (s.credit_rx) rx_event(s, arrival, false, {}, p.tc, static_cast<uint32_t>(p.size.count()));
  if (endpoint_) {
    ep_rx_.push({arrival, rx_seq_++, s.id, p, tel ? keep_tel(*tel) : kNoTel});
    wake_at(arrival);
  }
  recorder_.emplace(p.inject_time, first_bit - link_latency_, arrival - link_latency_,
                    static_cast<uint16_t>(p.size.count()), s.id, p.src, p.ecn == kEcnCe);
}

}  // namespace fabricsim::host
