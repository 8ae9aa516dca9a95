#include "models/sim/idle_fabric.h"

#include <algorithm>
#include <map>
#include <queue>
#include <utility>

#include "models/host/endpoint.h"
#include "models/link/mac.h"
#include "models/nic/nic_array.h"

namespace fabricsim::sim {

namespace {

// The one message, as host 0 -> host 1 of a two-NIC array.
class OneMessage : public nic::MessageSource {
 public:
  explicit OneMessage(const nic::Message& m) : m_(m) {}
  bool next(nic::Message& m) override {
    if (done_) return false;
    done_ = true;
    m = m_;
    return true;
  }
  uint64_t total() const override { return 1; }

 private:
  nic::Message m_;
  bool done_ = false;
};

// The two hosts' MACs and the idle routes between them (0 -> 1, 1 -> 0): a frame's first bit
// reaches each switch a link latency after it left the last MAC, leaves the switch's egress MAC
// when the closed form lets it (and that MAC's previous frame and gap are done), and reaches the
// far host a link latency after its last bit left.
class IdleWire : public host::HostPorts {
 public:
  IdleWire(nic::NicArray& nics, const BitRate rate[2], const IdleFabric::Route* route[2],
           const FrameOverhead& o, link::ClassLatency latency)
      : nics_(nics), latency_(latency) {
    for (int h = 0; h < 2; ++h) {
      host_[h] = link::Mac(rate[h], rate[h], Time::max(), o);
      route_[h] = route[h];
      for (const IdleFabric::Hop& hop : *route[h])
        egress_[h].emplace_back(hop.rate, hop.rate, Time::max(), o);
    }
    nics.attach(this);
  }
  Time tx_free(int h, Time now) const override { return std::max(now, host_[h].next_start(now)); }
  void send(int h, Packet& p, Time now) override {
    const uint64_t bytes = p.size.count();
    link::Mac& mac = host_[h];
    Time first = mac.first_bit(std::max(now, mac.next_start(now)));
    Time last = mac.last_bit(first, bytes);
    mac.end_frame(last);
    for (size_t i = 0; i < route_[h]->size(); ++i) {
      const Time hop = i == 0 ? latency_.host : latency_.fabric;
      const Time start = (*route_[h])[i].chip->first_bit(first + hop, bytes);
      link::Mac& out = egress_[h][i];
      first = out.first_bit(start);
      last = out.last_bit(first, bytes);
      out.end_frame(last);
    }
    q_.push({last + latency_.host, seq_++, 1 - h, p});
  }
  // Runs until nothing is left to do.
  void run() {
    Time now;
    Time wake = nics_.run(now);
    for (;;) {
      const Time t = std::min(wake, q_.empty() ? Time::max() : q_.top().t);
      if (t == Time::max()) return;
      now = t;
      while (!q_.empty() && q_.top().t <= now) {
        const Arrival a = q_.top();
        q_.pop();
        nics_.receive(a.h, a.p, now);
      }
      wake = nics_.run(now);
    }
  }

 private:
  struct Arrival {
    Time t;
    uint64_t seq;
    int h;
    Packet p;
    bool operator>(const Arrival& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  nic::NicArray& nics_;
  link::ClassLatency latency_;
  link::Mac host_[2];
  const IdleFabric::Route* route_[2];
  std::vector<link::Mac> egress_[2];
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> q_;
  uint64_t seq_ = 0;
};

}  // namespace

IdleFabric::IdleFabric(const nic::NicConfig& cfg, const FrameOverhead& overhead,
                       link::ClassLatency link_latency, bool ect, RouteOf route,
                       std::function<BitRate(int)> host_rate)
    : cfg_(cfg),
      overhead_(overhead),
      link_latency_(link_latency),
      ect_(ect),
      route_(std::move(route)),
      host_rate_(std::move(host_rate)) {}

Time IdleFabric::fct(const nic::Message& m) const {
  // Copies: route_ may reuse its cache for the second call.
  const Route there = route_(m.src, m.dst), back = route_(m.dst, m.src);
  if (there.empty() || back.empty()) return Time::max();
  const BitRate rate[2] = {host_rate_(m.src), host_rate_(m.dst)};
  // A message like one replayed before (same size, verb, QP, class, rates and chips on the
  // way): its time again, which differs only by where the start falls in the chips' clock cycle.
  std::vector<uint64_t> key = {m.bytes,
                               static_cast<uint64_t>(m.verb),
                               static_cast<uint64_t>(m.qp),
                               static_cast<uint64_t>(m.tc),
                               rate[0].as_bps(),
                               rate[1].as_bps(),
                               there.size()};
  for (const Route* r : {&there, &back})
    for (const Hop& hop : *r) {
      key.push_back(reinterpret_cast<uintptr_t>(hop.chip));
      key.push_back(hop.rate.as_bps());
    }
  const auto hit = cache_.find(key);
  if (hit != cache_.end()) return hit->second;
  for (const Route* r : {&there, &back})
    for (const Hop& hop : *r) exact_ = exact_ && hop.chip->exact();
  nic::Message alone = m;
  alone.id = 0;
  alone.src = 0;
  alone.dst = 1;
  nic::NicArray nics(cfg_, {rate[0], rate[1]}, ect_, std::make_unique<OneMessage>(alone));
  const Route* route[2] = {&there, &back};
  IdleWire wire(nics, rate, route, overhead_, link_latency_);
  wire.run();
  const auto rows = nics.fct();
  const bool done = !rows.empty() && rows[0].sent->state == nic::SentMessage::State::kDone;
  const Time t = done ? rows[0].sent->completion - m.start : Time::max();
  cache_.emplace(std::move(key), t);
  return t;
}

Time IdleFabric::one_way(const Route& route, uint64_t bytes, BitRate rate, const FrameOverhead& o,
                         link::ClassLatency link_latency) {
  const link::Mac host(rate, rate, Time::max(), o);
  Time first = host.first_bit(Time());
  Time last = host.last_bit(first, bytes);
  for (const Hop& hop : route) {
    const Time wire = &hop == &route.front() ? link_latency.host : link_latency.fabric;
    const Time start = hop.chip->first_bit(first + wire, bytes);
    const link::Mac out(hop.rate, hop.rate, Time::max(), o);
    first = out.first_bit(start);
    last = out.last_bit(first, bytes);
  }
  return last + link_latency.host;
}

IdleFabric::RouteOf IdleFabric::topology_routes(const topo::Topology& t,
                                                std::function<const sw::SwitchConfig&(int)> chip,
                                                std::function<BitRate(int, int)> port_rate) {
  // Where each switch port leads (another switch's index, or -1).
  auto next = std::make_shared<std::vector<std::vector<int>>>(t.switches());
  for (int s = 0; s < t.switches(); ++s)
    (*next)[s].assign(static_cast<size_t>(t.switch_ports[s]), -1);
  for (const topo::Wire& w : t.wires) {
    (*next)[w.a.sw][w.a.port] = w.b.sw;
    (*next)[w.b.sw][w.b.port] = w.a.sw;
  }
  // One closed form per (chip, egress port rate), made when a route first crosses it; routes
  // cached per (first switch, destination), on which alone they depend.
  struct State {
    std::map<std::pair<const sw::SwitchConfig*, uint64_t>, std::unique_ptr<sw::ZeroLoadLatency>>
        chips;
    std::unordered_map<uint64_t, IdleFabric::Route> routes;
  };
  auto st = std::make_shared<State>();
  return [&t, chip, port_rate, next, st](int src, int dst) -> const Route& {
    int s = t.host_port[src].sw;
    const uint64_t key =
        static_cast<uint64_t>(s) * static_cast<uint64_t>(t.hosts) + static_cast<uint64_t>(dst);
    auto it = st->routes.find(key);
    if (it != st->routes.end()) return it->second;
    Route r;
    bool arrived = false;
    for (int hops = 0; hops <= t.switches() && s >= 0 && !arrived; ++hops) {
      arrived = s == t.host_port[dst].sw;
      const std::vector<int>& group = t.route(s, dst);
      if (!arrived && group.empty()) break;
      const int port = arrived ? t.host_port[dst].port : group.front();
      const BitRate rate = port_rate(s, port);
      auto& z = st->chips[{&chip(s), rate.as_bps()}];
      if (!z) z = std::make_unique<sw::ZeroLoadLatency>(chip(s), rate);
      r.push_back({z.get(), rate});
      if (!arrived) s = (*next)[s][port];
    }
    if (!arrived) r.clear();  // no route: fct() says so
    return st->routes.emplace(key, std::move(r)).first->second;
  };
}

}  // namespace fabricsim::sim
