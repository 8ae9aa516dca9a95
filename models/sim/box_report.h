// Per-box roll-up of a run's results (multi-chip boxes: models/topology/box.h): what the box's
// chips did together, as a user of the box sees it from its front panel.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/topology/topology.h"

namespace fabricsim::sim {

struct SwitchReport;

struct BoxReport {
  std::string name;
  std::vector<std::string> chips;  // `<box>.leaf0`, ...: summary.json's switches[] names
  int front_ports = 0, internal_links = 0;
  // Window, over the front panel: bytes in / out over its capacity (the mean of its ports').
  double offered_load = 0, accepted_load = 0;
  // Window, over the leaves' internal (uplink) ports: bytes out over their capacity.
  double internal_utilisation = 0;
  uint64_t dropped = 0;               // whole run, all chips
  double paused_ns = 0;               // window, every port of every chip (PFC pause / credit stall)
  uint64_t pause_sent = 0;            // window, PFC pauses the chips sent (internal ones included)
  double buffer_peak_bytes = 0;       // window: the sum of the chips' peaks (an upper bound)
  double buffer_peak_chip_bytes = 0;  // window: the largest chip's peak
  double buffer_capacity_bytes = 0;   // all chips
  // Host-to-host latency of the packets delivered out of the front panel (window, mean and
  // max of the ports' means / maxima; ns): through the box when the hosts sit on it.
  double latency_mean_ns = 0, latency_max_ns = 0;
};

// The boxes of `t` from the chips' reports (indexed as t's switches).
std::vector<BoxReport> box_reports(const topo::Topology& t,
                                   const std::vector<SwitchReport>& switches);
nlohmann::json boxes_json(const std::vector<BoxReport>& boxes);
std::string format_boxes(const std::vector<BoxReport>& boxes);

}  // namespace fabricsim::sim
