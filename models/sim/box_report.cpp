#include "models/sim/box_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/sim/report.h"

namespace fabricsim::sim {

std::vector<BoxReport> box_reports(const topo::Topology& t,
                                   const std::vector<SwitchReport>& switches) {
  std::vector<BoxReport> out;
  for (const topo::Box& b : t.boxes) {
    BoxReport r;
    r.name = b.name;
    r.front_ports = b.spec.front_ports;
    // Links, each counted once (a mesh's join two leaves).
    r.internal_links =
        b.spec.mesh() ? b.spec.leaves * b.spec.uplinks() / 2 : b.spec.leaves * b.spec.uplinks();
    double lat_sum = 0;
    uint64_t lat_count = 0;
    for (const topo::PortRef& f : b.front) {
      const PortReport& p = switches[static_cast<size_t>(f.sw)].ports[static_cast<size_t>(f.port)];
      r.offered_load += p.offered_load / b.front.size();
      r.accepted_load += p.accepted_load / b.front.size();
      lat_sum += p.latency.mean * static_cast<double>(p.latency.count);
      lat_count += p.latency.count;
      r.latency_max_ns = std::max(r.latency_max_ns, p.latency.max);
    }
    r.latency_mean_ns = lat_count ? lat_sum / static_cast<double>(lat_count) : 0.0;
    int uplinks = 0;
    for (int l = 0; l < b.spec.leaves; ++l) {
      const SwitchReport& leaf = switches[static_cast<size_t>(b.chips[static_cast<size_t>(l)])];
      for (int p = b.spec.front_per_leaf(); p < b.spec.chip_ports; ++p, ++uplinks)
        if (p < b.spec.front_per_leaf() + b.spec.uplinks())
          r.internal_utilisation += leaf.ports[static_cast<size_t>(p)].accepted_load;
        else
          --uplinks;  // an idle port past the internal links
    }
    if (uplinks > 0) r.internal_utilisation /= uplinks;
    for (int c : b.chips) {
      const SwitchReport& s = switches[static_cast<size_t>(c)];
      r.chips.push_back(s.name);
      r.dropped += s.dropped;
      r.buffer_peak_bytes += s.buffer_peak_bytes;
      r.buffer_peak_chip_bytes = std::max(r.buffer_peak_chip_bytes, s.buffer_peak_bytes);
      r.buffer_capacity_bytes += s.buffer_capacity_bytes;
      for (const PortReport& p : s.ports) {
        r.paused_ns += p.fc.paused_ns + p.fc.credit_stall_ns;
        r.pause_sent += p.fc.pause_sent;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

nlohmann::json boxes_json(const std::vector<BoxReport>& boxes) {
  nlohmann::json a = nlohmann::json::array();
  for (const BoxReport& b : boxes)
    a.push_back({{"name", b.name},
                 {"chips", b.chips},
                 {"front_ports", b.front_ports},
                 {"internal_links", b.internal_links},
                 {"throughput",
                  {{"offered_load", b.offered_load},
                   {"accepted_load", b.accepted_load},
                   {"internal_utilisation", b.internal_utilisation}}},
                 {"dropped", b.dropped},
                 {"pauses", {{"sent", b.pause_sent}, {"paused_ns", b.paused_ns}}},
                 {"buffer",
                  {{"capacity_bytes", b.buffer_capacity_bytes},
                   {"peak_bytes_sum", b.buffer_peak_bytes},
                   {"peak_bytes_chip", b.buffer_peak_chip_bytes}}},
                 {"latency_ns", {{"mean", b.latency_mean_ns}, {"max", b.latency_max_ns}}}});
  return a;
}

std::string format_boxes(const std::vector<BoxReport>& boxes) {
  std::string s;
  for (const BoxReport& b : boxes)
    s += fmt::format(
        "box {} ({} chips, {} front ports): offered {:.3f} accepted {:.3f} of the front panel, "
        "internal links {:.3f} busy; dropped {}, pauses sent {}; buffer peak {:.0f} B (largest "
        "chip {:.0f} B); latency to its front ports mean {:.1f} ns, max {:.1f} ns\n",
        b.name, b.chips.size(), b.front_ports, b.offered_load, b.accepted_load,
        b.internal_utilisation, b.dropped, b.pause_sent, b.buffer_peak_bytes,
        b.buffer_peak_chip_bytes, b.latency_mean_ns, b.latency_max_ns);
  return s;
}

}  // namespace fabricsim::sim
