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
// message starts or finishes. No packets, no buffers, no credits: the switch never limits more
// than its ports do. A message is delivered (and its send completes) `latency` after its last
// byte left its sender. Plain C++ driven with explicit times (NicDriver, tests).
//
// In-switch reduction (scale_up.reduce; NVLink SHARP's multimem.ld_reduce and multimem.st, as
// NCCL's NVLS algorithm uses them): messages tagged kNvlsReduce / kNvlsMulticast form the
// switch's operations instead of unicasts.
//   reduce to GPU p: the G - 1 messages q -> p of one operation (the k-th of each pair and
//     channel) are the other GPUs' contributions; once all are posted, one flow of b bytes runs
//     on every member's egress (p's own too: its data crosses the switch) and on p's ingress
//     (the reduced result) at one rate, and on the switch's reduction engine (reduce_rate, if
//     given: result bytes per second, shared by the domain's reductions);
//   multicast from GPU p: its G - 1 messages p -> q are one flow of b bytes on p's egress and
//     every member's ingress (p's own too: the store reaches every copy through the switch).
// Every message of an operation is delivered `latency` after the flow's last byte. A GPU's port
// so carries one copy of what the operation moves, whatever G.
#pragma once

#include <cstdint>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "models/common/stats.h"
#include "models/common/units.h"

namespace fabricsim::workload {

// Tags of the switch's operations (tag | G - 1, the messages of one operation): reserved for
// allreduce_nvls; read only when the network reduces.
constexpr uint32_t kNvlsReduce = 0xF1000000u, kNvlsMulticast = 0xF2000000u;
constexpr uint32_t kNvlsKindMask = 0xFF000000u, kNvlsCountMask = 0x0000FFFFu;

class ScaleUpNetwork {
 public:
  // `hosts` GPUs in domains of `gpus` (hosts a multiple of gpus), each port `rate` each way.
  // `reduce`: the switch reduces and multicasts (the tags above); `reduce_rate` its reduction
  // engine's result bytes per second per domain (0: only the ports limit).
  ScaleUpNetwork(int hosts, int gpus, BitRate rate, Time latency, bool reduce = false,
                 BitRate reduce_rate = BitRate());

  int gpus() const { return gpus_; }
  int domains() const { return static_cast<int>(doms_.size()); }
  int domain_of(int host) const { return host / gpus_; }
  bool same_domain(int a, int b) const { return a / gpus_ == b / gpus_; }

  // Message `token` of `bytes` (> 0) from GPU src to GPU dst of the same domain, at `now` (not
  // before the last call's time), on `channel` with `tag` (an operation's part when the network
  // reduces and the tag says so).
  void post(uint32_t token, int src, int dst, uint64_t bytes, Time now, int channel = 0,
            uint32_t tag = 0);
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
  static constexpr uint32_t kNoOp = UINT32_MAX;
  struct Flow {
    uint32_t token;    // a unicast's; an operation's: kNoOp
    uint32_t op;       // the operation (ops_) or kNoOp
    int16_t src, dst;  // ports within the domain (an operation's: its GPU p)
    double left;       // bytes not yet sent
    double rate;       // bytes per fs
  };
  // A switch operation: its messages, gathered until all G - 1 are posted (then a flow).
  struct Op {
    bool reduce = false;
    int16_t root = 0;    // GPU p
    uint32_t need = 0;   // messages of the operation (G - 1)
    uint64_t bytes = 0;  // each message's
    std::vector<uint32_t> tokens;
    std::vector<int16_t> peers;  // the other members' ports
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
  // Calls f(port) for each port the flow uses: 0..G-1 egress, G..2G-1 ingress, 2G the engine.
  template <class F>
  void for_ports(const Flow& f, F&& fn) const;
  // Adds a tagged message to its operation; starts the flow once it is complete.
  void join_op(Domain& d, uint32_t token, int src, int dst, uint64_t bytes, int channel,
               uint32_t tag);

  int gpus_;
  double cap_;  // bytes per fs per port and direction
  Time latency_;
  bool reduce_;
  double engine_cap_;  // the reduction engine's bytes per fs (0: none)
  // Operations: a pool (freed ones reused), those being gathered by (domain, kind, root,
  // channel, sequence), and each message's sequence by (domain, kind, src, dst, channel).
  std::vector<Op> ops_;
  std::vector<uint32_t> free_ops_;
  std::map<std::tuple<int, uint32_t, int, int, uint32_t>, uint32_t> gathering_;
  std::map<std::tuple<int, uint32_t, int, int, int>, uint32_t> op_seq_;
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
