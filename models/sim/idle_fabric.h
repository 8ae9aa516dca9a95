// The flow completion time of a message alone on an idle fabric: what fct.csv's `slowdown`
// divides by.
//
// Not hardware: a replay. The message's two NICs, fresh (nic.h: their own QPs, PCIe links and
// host memories, nothing posted before), run it over the zero-load path between them: each
// host's MAC, the links' latency, and at each switch of the route the chip's zero-load closed
// form (models/switch/zero_load.h) followed by its egress port's MAC, so that back-to-back frames
// follow each other as they do through the chip; ACKs come back the same way. Nothing else is in
// the fabric: no other message, no pause, no ECN mark, no loss. The replay is thus the run's own
// NIC model timed against the closed form the switch is validated against, and a message that
// met nothing in the run has a slowdown of exactly 1 (validation case nic_slowdown).
//
// Stated limits (docs/results.md): the route is the first port of each ECMP group (equal-cost
// routes cross the same kinds of chip); dragonfly Valiant/UGAL routing is measured against the
// minimal route; a lane failure (link.phy.lane_failure) is not replayed; chips whose egress does
// not start frames with no_underrun cut-through are an estimate (ZeroLoadLatency::exact).
//
// Plain C++: the fabric builds it from its topology (IdleFabric::from), a test from routes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/common/packet.h"
#include "models/link/optics.h"
#include "models/nic/message_workload.h"
#include "models/nic/nic_config.h"
#include "models/switch/switch_config.h"
#include "models/switch/zero_load.h"
#include "models/topology/topology.h"

namespace fabricsim::sim {

class IdleFabric {
 public:
  // A switch a packet crosses: its zero-load timing, and the rate of the port it leaves by.
  struct Hop {
    const sw::ZeroLoadLatency* chip;
    BitRate rate;
  };
  using Route = std::vector<Hop>;
  // route(src, dst): the switches a packet from host src to host dst crosses, in order (it may
  // return a reference into a cache: valid until the next call).
  using RouteOf = std::function<const Route&(int src, int dst)>;

  // `host_rate(h)`: host h's port rate; `ect`: data packets are ECN-capable (as in the run).
  IdleFabric(const nic::NicConfig& cfg, const FrameOverhead& overhead,
             link::ClassLatency link_latency, bool ect, RouteOf route,
             std::function<BitRate(int)> host_rate);

  // The routes of a topology: the first port of each ECMP group, switch s's chip chip(s), the
  // rate of its port p port_rate(s, p).
  static RouteOf topology_routes(const topo::Topology& t,
                                 std::function<const sw::SwitchConfig&(int)> chip,
                                 std::function<BitRate(int, int)> port_rate);

  // The zero-load time from the start of a frame of `bytes` at a host's MAC (at `rate`) to its
  // last bit at the far host along `route`: the chips' closed forms, each egress port's MAC,
  // `link_latency` a link (its host class at both ends, its fabric class between switches). An
  // RTT is two of them (the data frame there, its ACK back).
  static Time one_way(const Route& route, uint64_t bytes, BitRate rate, const FrameOverhead& o,
                      link::ClassLatency link_latency);

  // m's flow completion time (post to send completion) alone on the idle fabric, or Time::max()
  // if it does not complete there. Replayed for the first message of its kind (size, verb, QP,
  // class, the hosts' rates, the chips on the way there and back); later ones of the kind get
  // that time again. It depends on the start only through where the start falls in the chips'
  // clock cycle, so theirs may differ from their own replay by a fraction of a cycle per switch
  // crossing (< 1 ns per crossing at 1.35 GHz): the replay costs ~2 us of CPU per packet, and a
  // run's messages are mostly of few kinds.
  Time fct(const nic::Message& m) const;
  // Whether every chip crossed so far has an exact zero-load closed form.
  bool exact() const { return exact_; }
  // Messages replayed (the distinct kinds).
  uint64_t replays() const { return cache_.size(); }

 private:
  const nic::NicConfig& cfg_;
  FrameOverhead overhead_;
  link::ClassLatency link_latency_;
  bool ect_;
  RouteOf route_;
  std::function<BitRate(int)> host_rate_;
  mutable bool exact_ = true;
  mutable std::map<std::vector<uint64_t>, Time> cache_;
};

}  // namespace fabricsim::sim
