// Load balancing over equal-cost paths, and non-minimal routing in a dragonfly: which port a
// packet leaves by.
//
// Hardware: the ECMP / dynamic load-balancing stage that follows the forwarding lookup in the
// ingress pipeline (its latency is part of switch.pipeline.ingress_cycles), as switch chips have
// it for the uplinks of a leaf: a hash over configured header fields, per-packet spraying,
// flowlet switching (CONGA, LetFlow) or per-packet adaptive routing on local queue depth.
// The choice is made when the packet is admitted (its first cell seen), from the switch's own
// state at that cycle: no remote congestion feedback is modelled.
//
// Dragonfly routers (Kim, Dally, Scott, Abts, ISCA 2008) may instead route non-minimally:
// valiant sends every packet between two groups through a random intermediate group (minimal to
// it, then minimal to the destination), ugal (UGAL-L) chooses per packet between that path and
// the minimal one on the source router's own queue depths times the paths' hop counts. The source
// router decides and writes the intermediate group into the packet (Packet::via), which the
// routers on the way follow and the intermediate group clears.
//
// Parameters (switch.routing): mode; hash_fields and hash_seed (the key and seed of the flow
// hash that ecmp uses and that flowlet and adaptive use to index and break ties, and with the
// packet id the seed of valiant's and ugal's intermediate group); flowlet_gap and
// flowlet_table_size (flowlet); ugal_threshold (ugal's bias towards the minimal path). The
// default (ecmp over src,dst, seed 0) is the plain salted (source, destination) hash of
// ForwardingTable::lookup, bit for bit.
//
// Only groups of two or more ports come to pick(): a host-facing entry is a group of one,
// resolved by the core without a call; in valiant and ugal modes every packet goes to route()
// (a dragonfly has no groups of several ports). Nothing allocates per packet: the spray pointers
// and the flowlet table are sized when the switch is built.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/packet.h"
#include "models/common/stats.h"
#include "models/common/units.h"
#include "models/config/config.h"
#include "models/switch/forwarding_table.h"

namespace fabricsim::sw {

enum class RoutingMode : uint8_t { kEcmp, kSpray, kFlowlet, kAdaptive, kValiant, kUgal };

// Header fields the flow hash may cover (bits of RoutingConfig::hash_field_mask()). entropy: the
// packet's 8-bit entropy (packet_entropy(), the UDP source port of RoCEv2 and UEC), which NICs
// set per QP (RC) or per packet (RUD) to spread a pair's traffic over the paths.
constexpr uint32_t kHashSrc = 1, kHashDst = 2, kHashTc = 4, kHashEntropy = 8;

// The `switch.routing` section.
struct RoutingConfig {
  std::string mode;         // ecmp | spray | flowlet | adaptive | valiant | ugal
  std::string hash_fields;  // comma-separated subset of src, dst, tc, entropy
  int64_t hash_seed = 0;
  Time flowlet_gap;
  int64_t flowlet_table_size = 0;
  Bytes ugal_threshold;  // ugal: the minimal path wins unless the Valiant one is this much shorter

  void visit(config::Visitor& v);
  // `c` reports keys under switch.routing.
  void validate(const config::Checker& c) const;
  // The checks against the rest of the run: valiant and ugal need a dragonfly
  // (`topology_kind`) and no link-level flow control (`flow_control_mode` none). `c` reports
  // keys by their full names.
  void validate_fabric(const config::Checker& c, const std::string& topology_kind,
                       const std::string& flow_control_mode) const;
  RoutingMode mode_enum() const;
  // valiant or ugal: routes through intermediate dragonfly groups.
  bool non_minimal() const { return mode == "valiant" || mode == "ugal"; }
  // The fields named by hash_fields (0 if the text is invalid: validate() reports that).
  uint32_t hash_field_mask() const;
};

class LoadBalancer {
 public:
  // `table`: the switch's forwarding table (its salt, and its groups for the spray pointers; in
  // valiant and ugal modes its DragonflyGroups, without which they throw InputError).
  // `cell_bytes`: the buffer's cell size (ugal_threshold in cells).
  LoadBalancer(const RoutingConfig& cfg, const ForwardingTable& table, int64_t cell_bytes = 1);

  RoutingMode mode() const { return mode_; }
  // valiant or ugal: every packet goes through route().
  bool non_minimal() const { return groups_ != nullptr; }

  // The flow hash of `p` over the configured fields: the salted (src, dst) hash of
  // ForwardingTable::lookup with the default fields and seed 0.
  uint64_t hash(const Packet& p) const {
    uint64_t key = 0;
    if (fields_ & kHashSrc) key ^= static_cast<uint64_t>(static_cast<uint32_t>(p.src)) << 32;
    if (fields_ & kHashDst) key ^= static_cast<uint32_t>(p.dst);
    if (fields_ & kHashTc) key ^= static_cast<uint64_t>(static_cast<uint32_t>(p.tc)) * kTcMul;
    if (fields_ & kHashEntropy) key ^= static_cast<uint64_t>(packet_entropy(p)) * kEntropyMul;
    return ForwardingTable::mix(salt_ ^ key);
  }

  // The port of group `g` (g.count >= 2) that packet `p` leaves by, admitted at `now`.
  // `port_cells[q]`: the buffer cells held for egress port q (VOQs and egress queues), the
  // switch's view of each port's queue at this cycle.
  // Out of line: the core's admission loop stays as small as it was for groups of one.
  [[gnu::noinline]] int pick(const Packet& p, const ForwardingTable::Group& g, Time now,
                             const int64_t* port_cells);

  // valiant, ugal: the port packet `p` leaves this dragonfly router by, given its minimal port
  // `minimal` (the forwarding table's). At the packet's source router (the one its source host
  // is on), for a destination in another group (and at least 3 groups), it draws the
  // intermediate group I uniformly among the groups other than the source's and the
  // destination's, from hash_seed, the router's salt and the packet id (deterministic, no state);
  // valiant takes the Valiant path, ugal takes it only if
  //   q_min * H_min > q_val * H_val + ugal_threshold (in cells),
  // q the buffer cells held for the path's first egress port here (port_cells), H the path's
  // router-to-router links (minimal: [local] global [local]; Valiant: [local] global into I, then
  // I's entry router's minimal path to the destination). Taking the Valiant path sets p.via = I;
  // a router of another group follows p.via towards I, and I's entry router clears it and routes
  // minimally from there. Every other packet goes minimally.
  [[gnu::noinline]] int route(Packet& p, int minimal, const int64_t* port_cells);

  // Counters (0 in ecmp mode, where nothing but the hash decides).
  uint64_t multipath_packets() const { return multipath_; }  // routed over a group of >= 2
  uint64_t diverted() const { return diverted_; }    // flowlet, adaptive: not the hash's port
  uint64_t flowlets() const { return flowlets_; }    // flowlets started
  uint64_t flowlet_moves() const { return moves_; }  // ... on another port than the last one
  uint64_t flowlet_evictions() const { return evictions_; }  // active entries taken over
  // valiant, ugal, at source routers: packets to another group whose path this router chose,
  // and those of them sent through an intermediate group.
  uint64_t inter_group_packets() const { return inter_group_; }
  uint64_t non_minimal_packets() const { return non_minimal_; }
  // The counters as `<prefix>.routing.*` (none in ecmp mode: its results stay as they were).
  void register_stats(stats::Registry& r, const std::string& prefix) const;

 private:
  static constexpr uint64_t kTcMul = 0x9e3779b97f4a7c15ULL;       // spreads tc over the whole word
  static constexpr uint64_t kEntropyMul = 0xc2b2ae3d27d4eb4fULL;  // another odd constant
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
  // valiant, ugal
  std::shared_ptr<const DragonflyGroups> groups_;  // the table's (null: not valiant / ugal)
  int self_ = -1, my_group_ = -1;
  int64_t ugal_threshold_cells_ = 0;
  uint64_t inter_group_ = 0, non_minimal_ = 0;
};

}  // namespace fabricsim::sw
