// SystemC endpoints attached to the switch ports: the hosts that send and receive traffic.
//
// TrafficSourceModule: one process for all endpoints, pulling the merged, time-ordered packet
// stream of a TrafficSource and handing each packet to its host's MAC at the time it was generated.
// Each host MAC sends frames back to back with the link's framing overhead; a frame that finds the
// wire busy waits in the host's FIFO (a source queue, as in BookSim), and the wait is reported.
// TrafficSinkModule: the receiving hosts; they measure latency (first bit into the switch to last
// bit out) and delivered bytes, for packets injected inside the measurement window, and count
// packets delivered out of order within their (source, destination) flow (reorder_counter.h).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include <systemc>

#include "models/common/batch_worker.h"
#include "models/common/packet_port.h"
#include "models/common/stats.h"
#include "models/link/flow_control.h"
#include "models/traffic/reorder_counter.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic {

// What a host's receive side (the sink) hands its own MAC: arrivals that matter to link-level
// flow control (credit accounting, PAUSE frames, FC packets).
class HostRxHandler {
 public:
  virtual ~HostRxHandler() = default;
  virtual void host_rx_data(int host, const Packet& p, Time arrival) = 0;
  virtual void host_rx_control(int host, const ControlFrame& f, Time arrival) = 0;
};

class TrafficSourceModule : public sc_core::sc_module, public HostRxHandler {
 public:
  SC_HAS_PROCESS(TrafficSourceModule);
  sc_core::sc_vector<sc_core::sc_port<PacketPortIf>> out;

  // `link_latency`: one-way latency of the host's link; a packet's inject time is the time its
  // first bit reaches the switch (first bit out of the host + link_latency).
  TrafficSourceModule(sc_core::sc_module_name name, std::unique_ptr<TrafficSource> source,
                      int endpoints, BitRate port_rate, Time window_start, Time window_end,
                      FrameOverhead overhead = {}, Time link_latency = Time());
  // The hosts' link-level flow control (one port per host; owned by the caller). Its control
  // frames go out ahead of data; paused or credit-starved hosts hold their FIFO.
  void set_flow_control(link::FlowControl* fc);
  // Each host's MAC rate (its switch port's, with breakout), and the rates from `change_at` on
  // (a lane failure); by default all at the port rate given to the constructor.
  void set_host_rates(const std::vector<BitRate>& rates, const std::vector<BitRate>& rates_after,
                      Time change_at);
  // Mark every packet ECN-capable (ECT(0)) when it leaves its host.
  void set_ect(bool ect) { ect_ = ect; }

  void host_rx_data(int host, const Packet& p, Time arrival) override;
  void host_rx_control(int host, const ControlFrame& f, Time arrival) override;

  void stop() { stopped_ = true; }  // inject nothing more
  uint64_t injected() const { return injected_; }
  uint64_t win_injected() const { return win_injected_; }
  const std::vector<stats::WindowBytes>& win_injected_bytes() const { return win_bytes_; }
  // Source queueing: packets that waited for their host's wire, the total and longest wait, and
  // packets still queued.
  uint64_t queued_packets() const { return queued_; }
  Time queue_wait_total() const { return wait_total_; }
  Time queue_wait_max() const { return wait_max_; }
  uint64_t backlog() const { return backlog_; }

 private:
  struct Host {
    Time wire_free;            // earliest first bit of the host's next frame
    uint32_t waiting = 0;      // packets in the host's queues
    MacTiming mac, mac_after;  // its link's timing, before and after rates_change_at_
  };

  void emit();
  void fetch();
  void end_of_elaboration() override;
  // Offers packet p (generated at p.inject_time) to its host's MAC at `now` (inline: every
  // packet's path).
  [[gnu::always_inline]] void offer(Packet& p, Time now);
  void send(Host& h, Packet& p, Time now);
  // Counts the packet as injected (inject time = first bit + link latency) and hands it over.
  [[gnu::always_inline]] void put_on_wire(Packet& p, Time first_bit, Time last_bit);
  // Sends what host `id` can send at `now` (a control frame, else its head packet if flow control
  // lets it) and arranges a wake-up for the rest.
  void service(int id, Time now);
  void host_wait(int id, Time t);
  void drain_hosts(Time now);
  void apply_rx(Time now);
  void wake_at(Time t);

  std::unique_ptr<TrafficSource> source_;
  std::vector<PacketPortIf*> out_if_;  // bound interfaces, resolved once after elaboration
  FrameOverhead overhead_;
  Time link_latency_;
  std::vector<Host> hosts_;  // small and hot: every packet reads its host's entry
  // Per host and class: generated packets waiting for the wire (inject_time = generation time).
  static constexpr int kClasses = 16;
  // (Made on a host's first wait: an empty deque already holds a block, and most hosts never
  // wait.)
  std::vector<std::vector<std::deque<Packet>>> fifos_;
  // (time, host) wake-ups for hosts whose FIFO waits for the wire, earliest first.
  std::priority_queue<std::pair<Time, int>, std::vector<std::pair<Time, int>>, std::greater<>>
      waits_;
  Time next_wake_ = Time::max();
  link::FlowControl* fc_ = nullptr;
  bool plain_ = true;  // no flow control and no lane failure: offer() has a fast path
  Time rates_change_at_ = Time::max();
  // A frame of `bytes` starting (preamble first) at `now` on host `id`: its first and last bit,
  // and the earliest first bit of the next frame.
  struct FrameTimes {
    Time start, first, last, next_free;  // start: the preamble's first bit
  };
  // The preamble before a frame of host `id` whose preamble would start at `t`.
  const MacTiming& timing(const Host& h, Time t) const {
    return t >= rates_change_at_ ? h.mac_after : h.mac;
  }
  FrameTimes frame_times(const Host& h, uint64_t bytes, Time now) const;
  bool ect_ = false;
  std::vector<Time> host_wake_;  // per host: the earliest wake-up already in waits_
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
  std::priority_queue<RxEvent, std::vector<RxEvent>, std::greater<>> rx_events_;
  uint64_t rx_seq_ = 0;
  uint64_t queued_ = 0, backlog_ = 0;
  Time wait_total_, wait_max_;
  Time win_start_, win_end_;
  // The source's packets are pulled a batch at a time (one call per batch, not per packet);
  // next_ is the next one to offer, in pulled_.
  static constexpr size_t kPull = 64;
  std::vector<Packet> pulled_ = std::vector<Packet>(kPull);
  size_t pulled_n_ = 0;
  Packet* next_ = nullptr;
  bool have_next_ = false;
  // Moves next_ on (pulling the next batch when this one is used up); false when exhausted.
  bool advance();
  bool stopped_ = false;
  bool started_ = false;
  sc_core::sc_event wake_;
  uint64_t injected_ = 0, win_injected_ = 0;
  std::vector<stats::WindowBytes> win_bytes_;
};

class TrafficSinkModule : public sc_core::sc_module {
 public:
  sc_core::sc_vector<sc_core::sc_export<PacketPortIf>> in;

  // `link_latency`: one-way latency of the hosts' links, taken off the arrival time so that the
  // latency ends at the last bit out of the switch's egress port.
  // `stats_thread`: record the statistics on a helper thread (results are the same either way).
  TrafficSinkModule(sc_core::sc_module_name name, int endpoints, Time window_start, Time window_end,
                    int histogram_bits, Time link_latency = Time(), bool stats_thread = false);

  uint64_t delivered() const { return sync().delivered_; }
  uint64_t ce_marked() const { return sync().ce_marked_; }  // delivered with ECN = CE
  // Packets delivered after a later packet of their (source, destination) flow (whole run).
  uint64_t reordered() const { return reorder_.reordered(); }
  uint64_t win_delivered() const { return sync().win_delivered_; }
  const stats::Histogram& latency_fs() const { return sync().latency_; }
  const stats::Histogram& port_latency_fs(int port) const { return sync().port_latency_[port]; }
  // Bytes that left the switch inside the window, per port (stats::window_bytes).
  const std::vector<stats::WindowBytes>& win_delivered_bytes() const { return sync().win_bytes_; }
  // Arrivals that link-level flow control needs go to the hosts' MACs (credit mode also hands
  // over data, for the receive-buffer accounting).
  void set_rx_handler(HostRxHandler* h, bool with_data) {
    rx_handler_ = h;
    rx_data_ = with_data;
  }

 private:
  struct Port : PacketPortIf {
    TrafficSinkModule* owner = nullptr;
    int port = 0;
    void transfer(const Packet& p, Time first_bit, Time last_bit) override {
      owner->receive(port, p, first_bit, last_bit);
    }
    void control(const ControlFrame& f, Time, Time last_bit) override {
      if (owner->rx_handler_) owner->rx_handler_->host_rx_control(port, f, last_bit);
    }
  };
  [[gnu::always_inline]] void receive(int port, const Packet& p, Time first_bit, Time last_bit);
  // What the statistics need of a delivered packet.
  struct Arrival {
    Arrival() = default;
    // (Built in place in the batch by BatchWorker::emplace: a temporary copied in with wide
    // loads over its narrower stores stalled store-to-load forwarding on every packet.)
    Arrival(Time inject, Time first, Time last, uint16_t b, int32_t p, bool c)
        : inject_time(inject), first_bit(first), last_bit(last), port(p), bytes(b), ce(c) {}
    Time inject_time;  // first bit into the network
    Time first_bit;    // first bit out of the switch
    Time last_bit;     // last bit out of the switch
    int32_t port = 0;
    uint16_t bytes = 0;  // frames are at most 65,535 B (traffic.size, the trace format)
    bool ce = false;
  };
  static_assert(sizeof(Arrival) == 32, "two arrival records a cache line");
  // Applies a batch of arrivals to the statistics: in batches, so that the histograms' buckets
  // stay in cache for a whole batch (and, with the helper thread, off the simulation thread).
  void record(const std::vector<Arrival>& batch);
  const TrafficSinkModule& sync() const {
    recorder_.drain();
    return *this;
  }

  std::vector<Port> ports_;
  HostRxHandler* rx_handler_ = nullptr;
  bool rx_data_ = false;
  // On the simulation thread, in arrival order (the batches keep no source or id).
  ReorderCounter reorder_;
  Time link_latency_;
  Time win_start_, win_end_;
  // Updated by record() only.
  uint64_t delivered_ = 0, win_delivered_ = 0, ce_marked_ = 0;
  stats::Histogram latency_;
  std::vector<stats::Histogram> port_latency_;
  std::vector<stats::WindowBytes> win_bytes_;
  // Last member: destroyed (its thread joined) before the statistics it updates.
  mutable BatchWorker<Arrival> recorder_;
};

// On every delivered packet's path, from the port (a virtual call): defined here to be inlined.
inline void TrafficSinkModule::receive(int port, const Packet& p, Time first_bit, Time arrival) {
  if (rx_data_) rx_handler_->host_rx_data(port, p, arrival);
  reorder_.arrive(p.src, p.dst, p.id);
  recorder_.emplace(p.inject_time, first_bit - link_latency_, arrival - link_latency_,
                    static_cast<uint16_t>(p.size.count()), port, p.ecn == kEcnCe);
}

}  // namespace fabricsim::traffic
