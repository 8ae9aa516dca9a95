#include "models/sim/box_config.h"

#include <algorithm>

namespace fabricsim::sim {

void BoxInternalLink::visit(config::Visitor& v) {
  // [S] a board trace or flyover cable between chips on one board: tens of cm.
  v.param("length_m", length_m, 0.5, 0.0, 10.0, "m",
          "Length of each internal link (board trace or flyover) [S: 0.5 m]; it propagates at "
          "link.ns_per_m.");
  v.param("pre_fec_ber", pre_fec_ber, 0.0, 0.0, 1e-2, "",
          "Pre-FEC bit-error rate of the internal links [S: 0, a short electrical channel].");
}

void BoxConfig::visit(config::Visitor& v) {
  v.param("chip", chip, "",
          "The chip the box is built from: a switch_kinds[].name, 'switch' (the switch: chip), "
          "or empty for this kind's own switch keys.");
  v.param("leaves", leaves, 0, 0, 64, "",
          "Leaf chips, facing the front panel; 0 = this kind is one chip, not a box. Front port "
          "p is leaf p / f's port p % f (f = front_ports / leaves).");
  v.param("spines", spines, 2, 0, 64, "",
          "Spine chips, joining the leaves inside the box (a 2-tier Clos); 0 = a mesh: every pair "
          "of leaves joined directly by links_per_pair links (a packet crosses 2 chips, not 3).");
  v.param("links_per_pair", links_per_pair, 0, 0, 4096, "",
          "Internal links between every leaf and every spine (leaf ports f.. upward, spine ports "
          "l x links_per_pair..). 0 = the most that fit in half a leaf's ports and in a spine.");
  v.param("front_ports", front_ports, 0, 0, 1 << 20, "",
          "The box's ports as the topology sees them (a multiple of leaves). 0 = every leaf port "
          "the internal links leave free.");
  config::visit_section(v, "internal_link",
                        "The links between the box's chips: link.phy's SerDes (lanes, FEC, PCS "
                        "latency) over a short trace, no optics module.",
                        internal_link);
}

int64_t BoxConfig::pair_links(int64_t ports) const {
  if (links_per_pair > 0) return links_per_pair;
  if (spines == 0) return std::max<int64_t>(1, ports / 2 / std::max<int64_t>(leaves - 1, 1));
  return std::max<int64_t>(1, std::min(ports / 2 / spines, ports / std::max<int64_t>(leaves, 1)));
}

int64_t BoxConfig::uplinks(int64_t ports) const {
  return (spines > 0 ? spines : std::max<int64_t>(leaves - 1, 0)) * pair_links(ports);
}

int64_t BoxConfig::front(int64_t ports) const {
  return front_ports > 0 ? front_ports : leaves * (ports - uplinks(ports));
}

topo::BoxSpec BoxConfig::spec(int64_t ports) const {
  topo::BoxSpec s;
  if (!is_box()) return s;
  s.leaves = static_cast<int>(leaves);
  s.spines = static_cast<int>(spines);
  s.links_per_pair = static_cast<int>(pair_links(ports));
  s.front_ports = static_cast<int>(front(ports));
  s.chip_ports = static_cast<int>(ports);
  return s;
}

void BoxConfig::check(const config::Checker& c, const std::string& key, int64_t ports) const {
  if (!is_box()) return;
  const std::string k = key + ".box.";
  const int64_t m = pair_links(ports), up = uplinks(ports);
  c.require(leaves >= 2, k + "leaves", "a box needs at least 2 leaf chips (1 is one chip)");
  c.require(up < ports, k + "links_per_pair",
            std::to_string(up / m) + (spines > 0 ? " spines" : " other leaves") + " x " +
                std::to_string(m) + " links leave a leaf no front port: its chip has " +
                std::to_string(ports) + " ports");
  c.require(spines == 0 || leaves * m <= ports, k + "links_per_pair",
            std::to_string(leaves) + " leaves x " + std::to_string(m) +
                " links need more than a spine chip's " + std::to_string(ports) + " ports");
  const int64_t f = front(ports);
  c.require(f % leaves == 0, k + "front_ports",
            std::to_string(f) + " is not a multiple of box.leaves (" + std::to_string(leaves) +
                "): every leaf has as many front ports");
  c.require(f >= leaves && f / leaves + up <= ports, k + "front_ports",
            std::to_string(f / leaves) + " front ports per leaf plus " + std::to_string(up) +
                " internal links must fit in the chip's " + std::to_string(ports) + " ports");
}

link::LinkConfig BoxConfig::internal(const link::LinkConfig& link) const {
  link::LinkConfig lc = link;
  lc.length_m = internal_link.length_m;
  lc.module_latency = Time();
  lc.phy.pre_fec_ber = internal_link.pre_fec_ber;
  lc.phy.fail_lanes_left = 0;  // a lane failure is a front-panel link's
  return lc;
}

}  // namespace fabricsim::sim
