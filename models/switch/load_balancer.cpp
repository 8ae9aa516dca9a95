#include "models/switch/load_balancer.h"

#include <cstdint>
#include <sstream>

#include "models/common/error.h"

namespace fabricsim::sw {

namespace {

// Parses "src,dst,tc" (any order, spaces allowed) into kHash* bits; 0 on any unknown, repeated
// or empty field.
uint32_t parse_fields(const std::string& text) {
  uint32_t mask = 0;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(' ');
    const auto e = item.find_last_not_of(' ');
    const std::string f = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    const uint32_t bit = f == "src"       ? kHashSrc
                         : f == "dst"     ? kHashDst
                         : f == "tc"      ? kHashTc
                         : f == "entropy" ? kHashEntropy
                                          : 0;
    if (bit == 0 || (mask & bit)) return 0;
    mask |= bit;
  }
  return mask;
}

}  // namespace

void RoutingConfig::visit(config::Visitor& v) {
  v.choice("mode", mode, "ecmp", {"ecmp", "spray", "flowlet", "adaptive", "valiant", "ugal"},
           "How a packet picks among a destination's equal-cost ports (an ECMP group, e.g. a "
           "leaf's uplinks). ecmp: a hash of hash_fields, so a flow keeps one port; spray: per "
           "packet, round robin over the group (one pointer per destination, started by the "
           "hash seed); flowlet: a flow keeps its port until idle for flowlet_gap, then its next "
           "packet takes the port with the fewest bytes queued; adaptive: every packet takes "
           "the port with the fewest bytes queued. Ties start from the hash's port. "
           "Dragonfly only (topology.kind dragonfly, flow_control.mode none), non-minimal: "
           "valiant: every packet between two groups goes minimally to a random intermediate "
           "group (per packet, drawn at the source router from the seed), then minimally to "
           "its destination; ugal (UGAL-L): the source router takes that Valiant path only if "
           "its first port's queue x hops + ugal_threshold is below the minimal path's.");
  // spray, valiant and ugal never hash a packet's fields (hash_seed still seeds them).
  v.applies_when("hash_fields", "{mode}: ecmp, flowlet or adaptive",
                 [this] { return mode == "ecmp" || mode == "flowlet" || mode == "adaptive"; });
  v.param("hash_fields", hash_fields, "src,dst",
          "Comma-separated fields of the flow hash: any of src, dst, tc, entropy. entropy: the "
          "packet's 8-bit entropy (the low byte of its id; the UDP source port of RoCEv2 / UEC), "
          "which NICs set per QP (go_back_n, selective_repeat: QPs of one pair take different "
          "paths) or per packet (rud: spraying); a generator's packets carry their id's low "
          "byte, so they spray per packet. Used by ecmp, and by flowlet (its flow key) and "
          "adaptive (tie order).");
  v.param("hash_seed", hash_seed, 0, 0, (int64_t{1} << 62), "",
          "Seed mixed into the flow hash on top of the per-switch salt (0: the salt alone).");
  for (const char* key : {"flowlet_gap", "flowlet_table_size"})
    v.applies_when(key, "{mode}: flowlet", [this] { return mode == "flowlet"; });
  v.applies_when("ugal_threshold", "{mode}: ugal", [this] { return mode == "ugal"; });
  v.param("flowlet_gap", flowlet_gap, Time::us(2), Time::ps(1), Time::us(1000000),
          "flowlet: idle time after which a flow's next packet starts a new flowlet and may "
          "change port.");
  v.param("flowlet_table_size", flowlet_table_size, 4096, 1, int64_t{1} << 20, "entries",
          "flowlet: entries of the direct-mapped flowlet table, indexed by the flow hash (a power "
          "of two). Flows that share an entry share a flowlet.");
  v.param("ugal_threshold", ugal_threshold, Bytes(0), Bytes(0), Bytes(int64_t{1} << 40),
          "ugal: bias towards the minimal path. A packet takes the Valiant path only if "
          "q_min x H_min > q_val x H_val + ugal_threshold, q the bytes (whole cells) held for "
          "each path's first egress port at the source router, H its router-to-router hops; 0: "
          "the plain comparison of Kim et al. 2008.");
}

void RoutingConfig::validate(const config::Checker& c) const {
  c.require(hash_field_mask() != 0, "hash_fields",
            "'" + hash_fields +
                "' is not a comma-separated list of distinct fields among src, dst, tc, entropy");
  c.require((flowlet_table_size & (flowlet_table_size - 1)) == 0, "flowlet_table_size",
            std::to_string(flowlet_table_size) + " is not a power of two");
}

void RoutingConfig::validate_fabric(const config::Checker& c, const std::string& topology_kind,
                                    const std::string& flow_control_mode) const {
  if (!non_minimal()) return;
  c.require(topology_kind == "dragonfly", "switch.routing.mode",
            mode +
                " routes through intermediate dragonfly groups: it needs topology.kind "
                "dragonfly, got " +
                (topology_kind.empty() ? std::string("single") : topology_kind));
  // A Valiant path (local, global, local, global, local) reuses local and global channels in both
  // of its phases: with lossless links its channel dependencies form cycles that only separate
  // virtual channels per phase (Kim et al. 2008) break, and this model has none.
  c.require(flow_control_mode == "none", "switch.routing.mode",
            mode + " with flow_control.mode " + flow_control_mode +
                " could deadlock: a Valiant path needs a virtual channel per phase (the "
                "intermediate group's hops on separate buffers), which this model does not "
                "separate; use flow_control.mode none (lossy Ethernet) or routing mode ecmp");
}

RoutingMode RoutingConfig::mode_enum() const {
  if (mode == "spray") return RoutingMode::kSpray;
  if (mode == "flowlet") return RoutingMode::kFlowlet;
  if (mode == "adaptive") return RoutingMode::kAdaptive;
  if (mode == "valiant") return RoutingMode::kValiant;
  if (mode == "ugal") return RoutingMode::kUgal;
  return RoutingMode::kEcmp;
}

uint32_t RoutingConfig::hash_field_mask() const {
  return parse_fields(hash_fields);
}

LoadBalancer::LoadBalancer(const RoutingConfig& cfg, const ForwardingTable& table,
                           int64_t cell_bytes)
    : mode_(cfg.mode_enum()),
      fields_(cfg.hash_field_mask()),
      // mix(0) == 0: seed 0 leaves the table's salt as it is.
      salt_(table.salt() ^ ForwardingTable::mix(static_cast<uint64_t>(cfg.hash_seed))),
      gap_fs_(cfg.flowlet_gap.as_fs()) {
  if (mode_ == RoutingMode::kSpray) {
    // Each destination's pointer starts at a seeded position, so that switches (and
    // destinations) do not all start on the group's first port in step.
    spray_next_.resize(static_cast<size_t>(table.destinations()), 0);
    for (int d = 0; d < table.destinations(); ++d) {
      const uint32_t n = table.group(d).count;
      if (n > 1)
        spray_next_[d] = static_cast<uint32_t>(
            ForwardingTable::mix(salt_ ^ (static_cast<uint64_t>(d) + 0x5bd1e995ULL)) % n);
    }
  }
  if (mode_ == RoutingMode::kFlowlet) {
    flowlets_table_.resize(static_cast<size_t>(cfg.flowlet_table_size));
    flowlet_mask_ = static_cast<uint32_t>(cfg.flowlet_table_size - 1);
  }
  if (mode_ == RoutingMode::kValiant || mode_ == RoutingMode::kUgal) {
    if (!table.dragonfly())
      throw InputError("switch.routing.mode: " + cfg.mode +
                       " needs a dragonfly router's forwarding table (topology.kind dragonfly)");
    groups_ = table.dragonfly();
    // Packet::via is 16 bits (a run's tables hold at most 2^26 entries: far fewer groups).
    if (groups_->groups > INT16_MAX)
      throw InputError("switch.routing.mode: " + cfg.mode + " supports at most 32767 groups, got " +
                       std::to_string(groups_->groups));
    self_ = table.self();
    my_group_ = groups_->switch_group[self_];
    const int64_t cell = cell_bytes > 0 ? cell_bytes : 1;
    ugal_threshold_cells_ = (static_cast<int64_t>(cfg.ugal_threshold.count()) + cell - 1) / cell;
  }
}

int LoadBalancer::least_loaded(const ForwardingTable::Group& g, uint32_t start,
                               const int64_t* port_cells) {
  uint32_t best = start;
  int64_t best_cells = port_cells[g.ports[start]];
  uint32_t j = start;
  for (uint32_t k = 1; k < g.count; ++k) {
    if (++j == g.count) j = 0;
    const int64_t cells = port_cells[g.ports[j]];
    if (cells < best_cells) {
      best = j;
      best_cells = cells;
    }
  }
  return g.ports[best];
}

int LoadBalancer::pick(const Packet& p, const ForwardingTable::Group& g, Time now,
                       const int64_t* port_cells) {
  if (mode_ == RoutingMode::kEcmp || groups_) return g.ports[hash(p) % g.count];
  ++multipath_;
  switch (mode_) {
    case RoutingMode::kSpray: {
      uint32_t& next = spray_next_[p.dst];
      const int port = g.ports[next];
      if (++next == g.count) next = 0;
      return port;
    }
    case RoutingMode::kAdaptive: {
      const uint32_t home = static_cast<uint32_t>(hash(p) % g.count);
      const int port = least_loaded(g, home, port_cells);
      diverted_ += port != g.ports[home];
      return port;
    }
    case RoutingMode::kFlowlet: {
      const uint64_t h = hash(p);
      // The destination joins the index (and is the entry's tag) even when it is not a hashed
      // field: an entry's port belongs to one destination's group.
      const uint32_t idx =
          (static_cast<uint32_t>(h >> 32) ^ static_cast<uint32_t>(p.dst) * 0x9e3779b1u) &
          flowlet_mask_;
      Flowlet& f = flowlets_table_[idx];
      const int64_t t = now.as_fs();
      if (f.dst == p.dst && t - f.last_fs < gap_fs_) {  // inside the flowlet: same port
        f.last_fs = t;
        return f.port;
      }
      // A new flowlet: the least-loaded port now (ties from the hash's port).
      if (f.dst >= 0 && f.dst != p.dst && t - f.last_fs < gap_fs_) ++evictions_;
      const uint32_t home = static_cast<uint32_t>(h % g.count);
      const int port = least_loaded(g, home, port_cells);
      ++flowlets_;
      moves_ += f.dst == p.dst && port != f.port;
      diverted_ += port != g.ports[home];
      f.last_fs = t;
      f.dst = p.dst;
      f.port = port;
      return port;
    }
    case RoutingMode::kEcmp:
    case RoutingMode::kValiant:  // a dragonfly has no groups of several ports
    case RoutingMode::kUgal:
      break;
  }
  return g.ports[hash(p) % g.count];
}

int LoadBalancer::route(Packet& p, int minimal, const int64_t* port_cells) {
  const DragonflyGroups& d = *groups_;
  if (p.via >= 0) {
    if (p.via != my_group_) return d.port_toward(self_, p.via);  // on the way to I
    p.via = -1;  // I's entry router: minimal from here
    return minimal;
  }
  if (d.host_switch[p.src] != self_) return minimal;  // not the source router
  const int n = d.groups, dst_group = d.host_group[p.dst];
  if (dst_group == my_group_ || n < 3) return minimal;  // one group, or no third one
  ++inter_group_;
  // I uniform over the n - 2 groups other than mine and the destination's: k-th of the rest.
  int via = static_cast<int>(ForwardingTable::mix(salt_ ^ ForwardingTable::mix(p.id + kTcMul)) %
                             static_cast<uint64_t>(n - 2));
  const int lo = my_group_ < dst_group ? my_group_ : dst_group;
  const int hi = my_group_ ^ dst_group ^ lo;
  if (via >= lo) ++via;
  if (via >= hi) ++via;
  const int port = d.port_toward(self_, via);
  if (mode_ == RoutingMode::kUgal) {
    const int64_t h_min = d.hops(self_, p.dst);
    const int64_t h_val = d.hops_to_group(self_, via) + d.hops(d.entry(via, my_group_), p.dst);
    if (port_cells[minimal] * h_min <= port_cells[port] * h_val + ugal_threshold_cells_)
      return minimal;
  }
  ++non_minimal_;
  p.via = static_cast<int16_t>(via);
  return port;
}

void LoadBalancer::register_stats(stats::Registry& r, const std::string& prefix) const {
  if (mode_ == RoutingMode::kEcmp) return;
  if (groups_) {
    r.counter(prefix + ".routing.inter_group_packets", &inter_group_);
    r.counter(prefix + ".routing.non_minimal_packets", &non_minimal_);
    return;
  }
  r.counter(prefix + ".routing.multipath_packets", &multipath_);
  if (mode_ == RoutingMode::kSpray) return;
  r.counter(prefix + ".routing.diverted", &diverted_);
  if (mode_ != RoutingMode::kFlowlet) return;
  r.counter(prefix + ".routing.flowlets", &flowlets_);
  r.counter(prefix + ".routing.flowlet_moves", &moves_);
  r.counter(prefix + ".routing.flowlet_evictions", &evictions_);
}

}  // namespace fabricsim::sw
