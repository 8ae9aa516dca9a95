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
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/common/packet.h"

namespace fabricsim::sw {

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
    entries_[dst] = {static_cast<uint32_t>(group_.size()), static_cast<uint32_t>(ports.size())};
    group_.insert(group_.end(), ports.begin(), ports.end());
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
  int destinations() const { return static_cast<int>(entries_.size()); }
  uint64_t salt() const { return salt_; }

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
  uint64_t salt_ = 0;
};

}  // namespace fabricsim::sw
