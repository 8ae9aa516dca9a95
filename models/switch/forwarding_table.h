// Destination lookup: endpoint id -> egress port, with ECMP groups.
//
// Hardware: the L2/L3 forwarding lookup at the end of the ingress pipeline (its latency is part of
// switch.pipeline.ingress_cycles). An entry is a group of equal-cost egress ports; a packet whose
// destination has several picks one by a hash of its flow (source, destination), salted per switch
// as real ECMP hashes are (so that consecutive tiers do not make the same choice, "hash
// polarisation"). Every packet of a flow takes the same path, so flows stay in order.
// lookup() is that default choice; the switch core reads the group itself (group()) and lets its
// LoadBalancer (load_balancer.h, switch.routing) choose among several ports.
// A single-switch run attaches endpoint i to port i; topologies fill the table
// (models/topology/topology.h).
//
// A dragonfly router's table also points at the run's DragonflyGroups (one shared, read-only copy):
// the group of every host and router and the port towards every group, the "group table" a
// dragonfly router holds besides its host entries, which non-minimal (Valiant, UGAL) routing reads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/common/packet.h"

namespace fabricsim::sw {

// A dragonfly's groups as its routers see them (Kim et al., ISCA 2008): all-to-all routers inside
// a group, one global link between every two groups. Built once per run by the dragonfly topology
// and shared by every router's table.
struct DragonflyGroups {
  int groups = 0;
  std::vector<int32_t> host_group;    // per host: its group
  std::vector<int32_t> host_switch;   // per host: the router it attaches to
  std::vector<int32_t> switch_group;  // per router: its group
  std::vector<int32_t> gateway;  // [G * groups + T]: G's router holding G's link to T (-1: T = G)
  // [s * groups + T]: router s's port towards group T: its global port if it holds the link to T,
  // else its local port to the router that does; -1 for its own group.
  std::vector<int32_t> toward;

  int port_toward(int sw, int group) const {
    return toward[static_cast<size_t>(sw) * groups + group];
  }
  // Router-to-router links from router `sw` into group `t` (!= its own): the global one, after a
  // local one unless `sw` holds the link itself.
  int hops_to_group(int sw, int t) const {
    return 1 + (gateway[static_cast<size_t>(switch_group[sw]) * groups + t] != sw);
  }
  // The router at which a packet from group `from` enters group `t`.
  int entry(int t, int from) const { return gateway[static_cast<size_t>(t) * groups + from]; }
  // Router-to-router links of the minimal path from router `sw` to host `dst`: 0 on its router,
  // 1 in its group, else [local] global [local].
  int hops(int sw, int dst) const {
    const int r = host_switch[dst];
    if (r == sw) return 0;
    const int g = switch_group[sw], d = host_group[dst];
    if (g == d) return 1;
    return hops_to_group(sw, d) + (entry(d, g) != r);
  }
};

class ForwardingTable {
 public:
  static constexpr int kNoRoute = -1;

  ForwardingTable() = default;
  // A table for `endpoints` destinations, all without a route, with ECMP hash salt `salt`.
  explicit ForwardingTable(int endpoints, uint64_t salt = 0)
      : entries_(static_cast<size_t>(endpoints)), salt_(salt) {}

  static ForwardingTable identity(int ports) {
    ForwardingTable t(ports);
    for (int i = 0; i < ports; ++i) t.set(i, {i});
    return t;
  }

  // Destination `dst` leaves through one of `ports` (an ECMP group when there are several).
  void set(int dst, const std::vector<int>& ports) {
    if (dst < 0 || dst >= static_cast<int>(entries_.size()) || ports.empty())
      throw std::invalid_argument("ForwardingTable::set: bad destination or empty group");
    // Destinations with the same ports share one copy of the list (a fat tree's edge switch sends
    // all but its own hosts to the same uplinks): the lists then stay in cache, and a lookup
    // misses at most on its destination's entry.
    const auto [it, added] = lists_.try_emplace(ports, static_cast<uint32_t>(group_.size()));
    if (added) group_.insert(group_.end(), ports.begin(), ports.end());
    entries_[dst] = {it->second, static_cast<uint32_t>(ports.size())};
  }

  // The default choice: the group's port picked by the salted (source, destination) hash.
  int lookup(const Packet& p) const {
    if (p.dst < 0 || p.dst >= static_cast<int>(entries_.size())) return kNoRoute;
    const Entry& e = entries_[p.dst];
    if (e.count <= 1) return e.count == 0 ? kNoRoute : group_[e.first];
    return group_[e.first + flow_hash(p.src, p.dst) % e.count];
  }

  // The equal-cost egress ports of destination `dst` (count 0: no route).
  struct Group {
    const int* ports = nullptr;
    uint32_t count = 0;
  };
  Group group(int dst) const {
    if (dst < 0 || dst >= static_cast<int>(entries_.size())) return {};
    const Entry& e = entries_[dst];
    return {group_.data() + e.first, e.count};
  }
  // Asks the CPU for destination `dst`'s entry (a hint: any number is fine).
  void prefetch(int dst) const {
    if (dst >= 0 && dst < static_cast<int>(entries_.size())) __builtin_prefetch(&entries_[dst]);
  }
  int destinations() const { return static_cast<int>(entries_.size()); }
  // One more destination, without a route (an endpoint added after the topology's hosts: a
  // switch's aggregation unit, models/topology/aggregation_nodes.h).
  void add_destination() { entries_.emplace_back(); }
  uint64_t salt() const { return salt_; }

  // This table is router `self` of a dragonfly (nullptr: not a dragonfly).
  void set_dragonfly(std::shared_ptr<const DragonflyGroups> groups, int self) {
    dragonfly_ = std::move(groups);
    self_ = self;
  }
  const std::shared_ptr<const DragonflyGroups>& dragonfly() const { return dragonfly_; }
  int self() const { return self_; }  // the router's index in the topology (-1: not set)

  // splitmix64 finaliser: cheap and well mixed (a bijection of 64-bit words).
  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
  }
  // The hash key of (src, dst): source in the high word, destination in the low one.
  static uint64_t flow_key(int src, int dst) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) ^ static_cast<uint32_t>(dst);
  }

 private:
  struct Entry {
    uint32_t first = 0, count = 0;
  };
  uint64_t flow_hash(int src, int dst) const { return mix(salt_ ^ flow_key(src, dst)); }

  std::vector<Entry> entries_;
  std::vector<int> group_;
  std::map<std::vector<int>, uint32_t> lists_;  // each distinct port list: its start in group_
  uint64_t salt_ = 0;
  std::shared_ptr<const DragonflyGroups> dragonfly_;
  int self_ = -1;
};

}  // namespace fabricsim::sw
