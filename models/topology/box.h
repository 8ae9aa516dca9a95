// Multi-chip boxes: a switch of a topology that is a sub-netlist of chips (switch_kinds[].box).
//
// Hardware: a box (a 102.4T system of four 25.6T chips, a 409.6T one of four 102.4T chips) is a
// 2-tier Clos inside one enclosure: `leaves` chips face the front panel, `spines` chips join
// them, and every leaf has `links_per_pair` internal links to every spine (board traces or a
// flyover, with the chips' own SerDes; their latency is the box's internal link). The
// topology's builders place a box like one switch of `front_ports` ports; expand_boxes() then
// replaces it by its chips: front port p is leaf p / f's port p % f (f = front ports per leaf),
// leaf l reaches spine s on ports f + s*m + j (j < m) and spine s reaches leaf l on ports
// l*m + j. Forwarding inside: a leaf sends a packet out of its own front ports when the box's
// route for the destination has some there, else up through one ECMP group over all its
// uplinks; a spine sends down to the leaves holding the box's front ports for the destination
// (ECMP over their links). A packet thus crosses one chip (in and out on one leaf) or three
// (leaf, spine, leaf).
//
// Plain data, no kernel: tests check the expansion (port map, routes) directly.
#pragma once

#include <string>
#include <vector>

#include "models/topology/topology.h"

namespace fabricsim::topo {

// Replaces every switch of `t` whose tier has a box in `tier_box` (indexed by tier; a tier past
// its end is no box) by its chips, named `<switch>.leaf<l>` and `<switch>.spine<s>` and salted
// by their names, in place (a box's chips take its position in the switch order, leaves first).
// Host ports, wires, groups and routes are carried over; the internal wires are added after the
// topology's own (Wire::box set). Topology::boxes and switch_box describe the result.
Topology expand_boxes(const Topology& t, const std::vector<BoxSpec>& tier_box, uint64_t seed);

}  // namespace fabricsim::topo
