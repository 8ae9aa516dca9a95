// Load balancing over equal-cost paths: which port of an ECMP group a packet leaves by.
//
// Hardware: the ECMP / dynamic load-balancing stage that follows the forwarding lookup in the
// ingress pipeline (its latency is part of switch.pipeline.ingress_cycles), as switch chips have
// it for the uplinks of a leaf: a hash over configured header fields, per-packet spraying,
// flowlet switching (CONGA, LetFlow) or per-packet adaptive routing on local queue depth.
// The choice is made when the packet is admitted (its first cell seen), from the switch's own
// state at that cycle: no remote congestion feedback is modelled.
//
// Parameters (switch.routing): mode; hash_fields and hash_seed (the key and seed of the flow
// hash that ecmp uses and that flowlet and adaptive use to index and break ties); flowlet_gap
// and flowlet_table_size (flowlet). The default (ecmp over src,dst, seed 0) is the plain salted
// (source, destination) hash of ForwardingTable::lookup, bit for bit.
//
// Only groups of two or more ports come here: a host-facing entry is a group of one, resolved by
// the core without a call. Nothing allocates per packet: the spray pointers and the flowlet table
// are sized when the switch is built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/packet.h"
#include "models/common/stats.h"
#include "models/common/units.h"
#include "models/config/config.h"
#include "models/switch/forwarding_table.h"

namespace fabricsim::sw {

enum class RoutingMode : uint8_t { kEcmp, kSpray, kFlowlet, kAdaptive };

// Header fields the flow hash may cover (bits of RoutingConfig::hash_field_mask()). The Packet
// carries no flow label or entropy field, so these three are all there is.
constexpr uint32_t kHashSrc = 1, kHashDst = 2, kHashTc = 4;

// The `switch.routing` section.
struct RoutingConfig {
  std::string mode;         // ecmp | spray | flowlet | adaptive
  std::string hash_fields;  // comma-separated subset of src, dst, tc
  int64_t hash_seed = 0;
  Time flowlet_gap;
  int64_t flowlet_table_size = 0;

  void visit(config::Visitor& v);
  // `c` reports keys under switch.routing.
  void validate(const config::Checker& c) const;
  RoutingMode mode_enum() const;
  // The fields named by hash_fields (0 if the text is invalid: validate() reports that).
  uint32_t hash_field_mask() const;
};

class LoadBalancer {
 public:
  // `table`: the switch's forwarding table (its salt, and its groups for the spray pointers).
  LoadBalancer(const RoutingConfig& cfg, const ForwardingTable& table);

  RoutingMode mode() const { return mode_; }

  // The flow hash of `p` over the configured fields: the salted (src, dst) hash of
  // ForwardingTable::lookup with the default fields and seed 0.
  uint64_t hash(const Packet& p) const {
    uint64_t key = 0;
    if (fields_ & kHashSrc) key ^= static_cast<uint64_t>(static_cast<uint32_t>(p.src)) << 32;
    if (fields_ & kHashDst) key ^= static_cast<uint32_t>(p.dst);
    if (fields_ & kHashTc) key ^= static_cast<uint64_t>(static_cast<uint32_t>(p.tc)) * kTcMul;
    return ForwardingTable::mix(salt_ ^ key);
  }

  // The port of group `g` (g.count >= 2) that packet `p` leaves by, admitted at `now`.
  // `port_cells[q]`: the buffer cells held for egress port q (VOQs and egress queues), the
  // switch's view of each port's queue at this cycle.
  // Out of line: the core's admission loop stays as small as it was for groups of one.
  [[gnu::noinline]] int pick(const Packet& p, const ForwardingTable::Group& g, Time now,
                             const int64_t* port_cells);

  // Counters (0 in ecmp mode, where nothing but the hash decides).
  uint64_t multipath_packets() const { return multipath_; }  // routed over a group of >= 2
  uint64_t diverted() const { return diverted_; }    // flowlet, adaptive: not the hash's port
  uint64_t flowlets() const { return flowlets_; }    // flowlets started
  uint64_t flowlet_moves() const { return moves_; }  // ... on another port than the last one
  uint64_t flowlet_evictions() const { return evictions_; }  // active entries taken over
  // The counters as `<prefix>.routing.*` (none in ecmp mode: its results stay as they were).
  void register_stats(stats::Registry& r, const std::string& prefix) const;

 private:
  static constexpr uint64_t kTcMul = 0x9e3779b97f4a7c15ULL;  // spreads tc over the whole word
  struct Flowlet {
    int64_t last_fs = 0;  // admission time of the entry's last packet
    int32_t dst = -1;     // the destination (group) the entry was made for; -1: never used
    int32_t port = -1;
  };

  // The port of `g` with the fewest cells held, scanning from index `start` (ties: the first
  // in that cyclic order).
  static int least_loaded(const ForwardingTable::Group& g, uint32_t start,
                          const int64_t* port_cells);

  RoutingMode mode_;
  uint32_t fields_;
  uint64_t salt_;  // the table's per-switch salt, with hash_seed mixed in
  int64_t gap_fs_ = 0;
  uint32_t flowlet_mask_ = 0;
  std::vector<uint32_t> spray_next_;  // spray: per destination, the group index to use next
  std::vector<Flowlet> flowlets_table_;
  uint64_t multipath_ = 0, diverted_ = 0, flowlets_ = 0, moves_ = 0, evictions_ = 0;
};

}  // namespace fabricsim::sw
