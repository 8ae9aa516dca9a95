// A switch kind that is a multi-chip box (`switch_kinds[].box`): the chips it is built from and
// how they are wired inside (models/topology/box.h has the netlist and the forwarding).
//
// A kind with box.leaves > 0 is a box: the topology places it like one switch of
// box.front_ports ports (each at its chips' port_speed), and the fabric builds it from
// box.leaves + box.spines chips (box.chip: another switch kind, or this kind's own switch keys)
// joined by box.links_per_pair internal links between every leaf and spine. The internal links
// run the chips' SerDes with the link.phy settings (lanes, FEC and PCS latency) over a board
// trace or flyover of box.internal_link.length_m, with no optics module [S].
#pragma once

#include <cstdint>
#include <string>

#include "models/config/config.h"
#include "models/link/phy_config.h"
#include "models/topology/topology.h"

namespace fabricsim::sim {

struct BoxInternalLink : config::Configurable {
  double length_m = 0;
  double pre_fec_ber = 0;
  void visit(config::Visitor& v) override;
};

struct BoxConfig : config::Configurable {
  std::string chip;  // a switch kind's name, "switch", or "" (the kind's own chip keys)
  int64_t leaves = 0;
  int64_t spines = 2;
  int64_t links_per_pair = 0;  // 0: as many as fill a leaf's half or a spine
  int64_t front_ports = 0;     // 0: every leaf port the uplinks leave free
  BoxInternalLink internal_link;

  void visit(config::Visitor& v) override;
  bool is_box() const { return leaves > 0; }
  // The links per pair and front ports with 0 resolved for chips of `ports` ports.
  int64_t pair_links(int64_t ports) const;
  int64_t front(int64_t ports) const;
  // A leaf's internal links: to every spine, or (spines 0, a mesh) to every other leaf.
  int64_t uplinks(int64_t ports) const;
  // The netlist's description, for chips of `ports` ports.
  topo::BoxSpec spec(int64_t ports) const;
  // Refuses (naming `key`.box.*) a box its chips of `ports` ports cannot build.
  void check(const config::Checker& c, const std::string& key, int64_t ports) const;
  // The internal links' configuration: `link`'s PHY over the internal trace, no module.
  link::LinkConfig internal(const link::LinkConfig& link) const;
};

}  // namespace fabricsim::sim
