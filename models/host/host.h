// A host: one server NIC port at the edge of the fabric, as a device of its own.
//
// Hardware: a host's network interface as the switch sees it: the MAC (link::Mac: framing,
// preamble, gap, its line rate) with its own link-level flow control (PFC: it obeys pauses and
// never sends one, since it consumes at line rate; IB credits: it sends with credits and returns
// credits for what it receives), per-class transmit queues (a NIC has a queue per priority), and
// the traffic endpoint: it sends the packets a traffic source generates for it at the time they
// are generated, and receives what the network delivers to it. A frame that finds the wire busy,
// or its class paused or out of credits, waits in its class's queue (a source queue, as in
// BookSim); the wait is counted. Among waiting classes the oldest head frame goes first. Each
// class's queue holds at most `queue_limit` packets (a NIC's transmit ring per priority): a
// packet offered to a full queue is refused and counted (an open-loop generator back-pressured:
// offered, never injected), or, from a source that must not lose it (a trace), waits outside the
// host (HostsModule keeps it in a file, spill_store.h), and a ClassFeeder pushes it in as the
// queue drains. Memory is then bounded by the design.
//
// Plain C++, driven with explicit times by HostsModule (one SystemC process may serve many hosts)
// or by a unit test; the host's state and statistics are its own. Parameters that matter: the
// port's rate and framing (MAC), the flow-control mode, the link latency (a packet's inject time is
// its first bit at the far end of the host's link, where the switch's ingress starts).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "models/common/frame_sink.h"
#include "models/common/packet.h"
#include "models/common/stats.h"
#include "models/common/telemetry.h"
#include "models/link/flow_control.h"
#include "models/link/mac.h"

namespace fabricsim::host {

struct HostConfig {
  int id = 0;
  link::Mac mac;      // the NIC port's wire
  Time link_latency;  // of the host's link, one way
  Time window_start, window_end;
  bool ect = false;                   // mark every packet ECN-capable (ECT(0)) as it leaves
  uint32_t queue_limit = UINT32_MAX;  // packets per class queue (host.queue_limit; 0 there: none)
};

class Host;
// Refills a host class whose packets wait in their source (ClassFeeder::refill pushes them with
// Host::push until the queue is full or the source has none due), each time its queue drains.
class ClassFeeder {
 public:
  virtual ~ClassFeeder() = default;
  virtual void refill(Host& h, int tc) = 0;
};

class Host {
 public:
  static constexpr int kClasses = 16;

  // `fc`: the port's flow control (one port, owned by the host; null or mode none: none).
  Host(const HostConfig& cfg, std::unique_ptr<link::FlowControl> fc);

  int id() const { return id_; }
  // Where the host's frames go (its link, or its switch port when links are ideal).
  void set_output(FrameSink* out) { out_ = out; }
  // No flow control and no change of rate: offer() can take its fast path.
  bool plain() const { return plain_; }

  // --- transmit ---
  // Packet p, generated at p.inject_time = now, is offered to the MAC. Returns when the host
  // wants service() again (Time::max(): not before something arrives).
  [[gnu::always_inline]] Time offer(Packet& p, Time now);
  // The same for a frame with an INT header (an HPCC NIC's): its stack goes with it.
  Time offer_int(Packet& p, const IntStack& tel, Time now);
  // Sends what the host can send at `now`: a due control frame, else its oldest head frame that
  // flow control lets go. Returns when it wants to be served again.
  Time service(Time now);
  // Whether a packet of class tc cannot be offered now: its queue is full, or its packets are fed
  // from their source (deferred). False whenever nothing waits (the common case, one test).
  [[gnu::always_inline]] bool held(int tc) const {
    return waiting_ && (((deferred_ >> (tc & (kClasses - 1))) & 1) ||
                        fifos_[tc & (kClasses - 1)].size() >= queue_limit_);
  }
  // From when the MAC takes a frame without queueing it: the wire's next free preamble start
  // (<= now: free now), or Time::max() while frames wait (for flow control).
  Time tx_free(Time now) const {
    return waiting_ ? Time::max() : std::max(now, mac_.next_start(now));
  }
  // A packet offered to a full queue and not kept (counted: offered, never injected).
  void refuse() { ++tx_.refused; }
  // Class tc's packets now come from `feeder` as its queue drains (set while the queue is full),
  // until the feeder calls undefer(tc).
  void defer(int tc, ClassFeeder* feeder) {
    deferred_ |= 1u << (tc & (kClasses - 1));
    feeder_ = feeder;
  }
  void undefer(int tc) { deferred_ &= ~(1u << (tc & (kClasses - 1))); }
  bool full(int tc) const {
    return !fifos_.empty() && fifos_[tc & (kClasses - 1)].size() >= queue_limit_;
  }
  bool deferred(int tc) const { return (deferred_ >> (tc & (kClasses - 1))) & 1; }
  // A fed packet, generated at its inject_time, into its queue (not sent here: the host's next
  // service sends it); false, and not queued, when the queue is full.
  bool push(const Packet& p);

  // --- receive (what link-level flow control needs of it) ---
  // A data frame of class tc arrived at `t`: the receive buffer takes it and, as the host
  // consumes at line rate, frees it at once (credit mode returns the credits).
  void rx_data(int tc, uint32_t bytes, Time t);
  // A control frame from the switch (a PAUSE, a credit update), applied at `now`.
  void rx_control(const ControlFrame& f, Time now);

  // --- statistics (whole run unless they say window) ---
  struct TxStats {
    uint64_t injected = 0, win_injected = 0;  // packets put on the wire (by inject time)
    stats::WindowBytes win_bytes;             // frame bytes into the switch inside the window
    uint64_t queued = 0;                      // packets that waited for the wire
    Time wait_total, wait_max;
    uint64_t control_frames = 0;
    uint64_t refused = 0;  // offered to a full queue, never injected (host.queue_limit)
  };
  const TxStats& tx() const { return tx_; }
  // What the host received: kept by whoever records its arrivals (HostsModule, in batches).
  struct RxStats {
    explicit RxStats(int histogram_bits = 5) : latency(histogram_bits) {}
    uint64_t delivered = 0, win_delivered = 0, ce_marked = 0;
    stats::WindowBytes win_bytes;  // frame bytes out of the switch inside the window
    stats::Histogram latency;      // fs, packets injected in the window (first bit in, last out)
  };
  RxStats& rx() { return *rx_; }
  const RxStats& rx() const { return *rx_; }
  uint64_t backlog() const { return waiting_; }  // packets still waiting in the queues
  uint32_t queue_limit() const { return queue_limit_; }
  link::FlowControl* flow_control() { return fc_.get(); }
  const link::FlowControl* flow_control() const { return fc_.get(); }
  bool has_flow_control() const { return fc_active_; }
  // The host's counters under `prefix` (its name, e.g. host7): its NIC port's flow control.
  void register_stats(stats::Registry& r, const std::string& prefix);

 private:
  // Counts the packet as injected (inject time = first bit + link latency) and hands it over.
  [[gnu::always_inline]] void put_on_wire(Packet& p, Time first_bit, Time last_bit,
                                          const IntStack* tel = nullptr);
  void send(Packet& p, Time now, const IntStack* tel = nullptr);
  // Keeps int_fifos_ beside fifos_ (a stack per queued frame, hops kNoStack for none) once a
  // frame with an INT header has been offered.
  void start_int();
  static constexpr uint8_t kNoStack = 0xff;
  // The next look the host needs: at the next frame boundary if it has anything to send or
  // timers to serve; Time::max() otherwise.
  Time next_look(Time now) const;

  // What every offered packet reads and writes comes first, together (three cache lines).
  link::Mac mac_;
  FrameSink* out_ = nullptr;
  Time link_latency_;
  Time win_start_, win_end_;
  uint32_t waiting_ = 0;
  bool plain_ = true;
  bool ect_;
  bool fc_active_ = false;
  uint16_t deferred_ = 0;          // classes fed by feeder_ (bit per class)
  uint16_t queued_ = 0;            // classes whose fifos_ hold a packet (bit per class)
  void enqueue(const Packet& p) {  // into its class's queue (fifos_ made), marked in queued_
    fifos_[p.tc & (kClasses - 1)].push_back(p);
    queued_ |= static_cast<uint16_t>(1u << (p.tc & (kClasses - 1)));
  }
  uint32_t queue_limit_;
  TxStats tx_;
  ClassFeeder* feeder_ = nullptr;
  int id_;
  std::unique_ptr<link::FlowControl> fc_;
  // Per class: generated packets waiting for the wire (inject_time = generation time). Made on
  // the host's first wait: an empty deque already holds a block, and most hosts never wait.
  std::vector<std::deque<Packet>> fifos_;
  std::vector<std::deque<IntStack>> int_fifos_;  // beside fifos_ (start_int), else empty
  // Per-host histograms are coarse (percentiles within 2^-5 = 3%): hundreds of fine ones would
  // not stay in cache, and recording is on every packet's path. Held apart (a histogram's header
  // is 600 B): side by side, the hosts' transmit state then stays within a few KB.
  std::unique_ptr<RxStats> rx_ = std::make_unique<RxStats>(5);
};

// The liveness check of a finite workload (a trace) at the end of a run: empty when all its
// `workload` packets were injected, else the violation (how many were left, and what to change).
std::string unsent_workload(uint64_t workload, uint64_t injected);

// Every generated packet's path: inline.
inline void Host::put_on_wire(Packet& p, Time first_bit, Time last_bit, const IntStack* tel) {
  p.inject_time = first_bit + link_latency_;  // first bit into the switch
  if (ect_) p.ecn = kEcnEct0;
  ++tx_.injected;
  if (p.inject_time >= win_start_ && p.inject_time < win_end_) ++tx_.win_injected;
  tx_.win_bytes.add(p.size.count(), p.inject_time, p.inject_time + (last_bit - first_bit),
                    win_start_, win_end_);
  if (tel)
    out_->transfer_int(p, *tel, first_bit, last_bit);
  else
    out_->transfer(p, first_bit, last_bit);
}

inline Time Host::offer(Packet& p, Time now) {
  Time first, last;
  if (plain_ && waiting_ == 0 && mac_.start_if_idle(now, p.size.count(), first, last)) {
    // The common case: no flow control, no lane failure, and the wire idle by the time the
    // preamble would start: the frame goes at once and has not waited.
    put_on_wire(p, first, last);
    return Time::max();
  }
  if (fifos_.empty()) fifos_.resize(kClasses);
  enqueue(p);
  if (!int_fifos_.empty()) int_fifos_[p.tc & (kClasses - 1)].emplace_back().hops = kNoStack;
  ++waiting_;
  return service(now);
}

}  // namespace fabricsim::host
