// The scale-up domains: GPUs joined by a scale-up switch (NVLink/NVSwitch-class) beside their
// NICs on the scale-out fabric.
//
// Hardware: each domain of G GPUs (a server's 8 on NVSwitch, or an NVL72 rack's 72) hangs off one
// non-blocking switch; GPU p's port carries `rate` each way (egress: GPU to switch; ingress:
// switch to GPU) and a message's last byte lands `latency` after it left its sender's port. Host
// (GPU) h belongs to domain h / G: hosts are numbered server x gpus_per_server + GPU, so a domain
// is G consecutive hosts (whole servers). Domains are separate networks: a message between two
// domains takes the NICs.
//
// The model (docs/architecture.md, "Scale-up domain"): message-level and fluid. The messages in
// flight in a domain share its ports max-min fairly (progressive filling: each egress and
// ingress port's rate split among its unfinished messages, the most loaded port first), as a
// non-blocking crossbar with per-port bandwidth does on average; rates are recomputed whenever a
// message starts or finishes. No packets, no buffers, no credits, no in-switch reduction: the
// switch never limits more than its ports do. A message is delivered (and its send completes)
// `latency` after its last byte left its sender. Plain C++ driven with explicit times
// (NicDriver, tests).
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/common/units.h"

namespace fabricsim::workload {

class ScaleUpNetwork {
 public:
  // `hosts` GPUs in domains of `gpus` (hosts a multiple of gpus), each port `rate` each way.
  ScaleUpNetwork(int hosts, int gpus, BitRate rate, Time latency);

  int gpus() const { return gpus_; }
  int domains() const { return static_cast<int>(doms_.size()); }
  int domain_of(int host) const { return host / gpus_; }
  bool same_domain(int a, int b) const { return a / gpus_ == b / gpus_; }

  // Message `token` of `bytes` (> 0) from GPU src to GPU dst of the same domain, at `now` (not
  // before the last call's time).
  void post(uint32_t token, int src, int dst, uint64_t bytes, Time now);
  // When something next happens (a message finishing its bytes, or a delivery); Time::max():
  // nothing in flight.
  Time next_event() const;
  // Brings the domains to `now` and pops one message delivered at or before it (its token and
  // delivery time); false when none is due.
  bool pop_delivered(Time now, uint32_t& token, Time& t);

  // Totals, for results: messages and bytes posted, and how long the domains had a message in
  // flight (the union over all domains of the times any was busy).
  uint64_t messages() const { return messages_; }
  uint64_t bytes() const { return bytes_; }
  Time active() const { return active_; }
  uint64_t in_flight() const { return in_flight_; }
  // Per domain: "<prefix><d>.messages|bytes", per port (per_port) "…port<p>.tx_busy_ns|rx_busy_ns".
  void register_stats(stats::Registry& r, const std::string& prefix) const;

 private:
  struct Flow {
    uint32_t token;
    int16_t src, dst;  // ports within the domain
    double left;       // bytes not yet sent
    double rate;       // bytes per fs
  };
  struct Domain {
    std::vector<Flow> flows;
    Time at;                    // flows' `left` are as of this time
    Time finish = Time::max();  // the earliest flow's last byte
    uint64_t messages = 0, bytes = 0;
    std::vector<int64_t> tx_busy_fs, rx_busy_fs;  // per port: time with a message on it
  };
  struct Delivery {
    Time t;
    uint64_t seq;
    uint32_t token;
    bool operator>(const Delivery& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  void advance(Domain& d, Time to);  // moves every flow's bytes on to `to`
  void settle(Domain& d);            // finishes drained flows, recomputes rates and finish
  void share(Domain& d);             // max-min fair rates (progressive filling)
  void run_to(Time now);             // every finish at or before now, in time order
  void note_busy(Time now);          // the union-of-busy clock

  int gpus_;
  double cap_;  // bytes per fs per port and direction
  Time latency_;
  std::vector<Domain> doms_;
  std::priority_queue<Delivery, std::vector<Delivery>, std::greater<>> deliveries_;
  uint64_t seq_ = 0, messages_ = 0, bytes_ = 0, in_flight_ = 0;
  Time active_, busy_since_ = Time::max();
  // share()'s scratch, kept to avoid allocating per event.
  std::vector<double> cap_left_;
  std::vector<int> unfrozen_;
  std::vector<std::vector<int>> on_port_;
  std::vector<char> frozen_, seen_;
};

}  // namespace fabricsim::workload
