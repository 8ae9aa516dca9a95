// summary.json: link-level flow control (PFC pauses, IB credit stalls, ECN marks), per switch and
// for the hosts.
#include "models/sim/summary_sections.h"

#include <algorithm>
#include <vector>

#include "models/link/flow_control.h"

namespace fabricsim::sim {

// flow_control.
void write_flow_control_section(const RunReport& r, nlohmann::json& j) {
  // Link-level flow control, per switch and for the hosts (sums over ports; peaks are maxima).
  // The counts and times from the window's start to the end, and (`*_run`) over the whole run,
  // the span of `counters`.
  using PortStatsList = std::vector<const link::FlowControl::PortStats*>;
  auto fc_json = [](const PortStatsList& ports, const PortStatsList& ports_run) {
    link::FlowControl::PortStats t, w;
    for (const auto* p : ports) t.add(*p);
    for (const auto* p : ports_run) w.add(*p);
    const std::vector<double> by_prio(std::begin(t.paused_ns_by_prio),
                                      std::end(t.paused_ns_by_prio));
    const std::vector<double> by_vl(std::begin(t.credit_stall_ns_by_vl),
                                    std::end(t.credit_stall_ns_by_vl));
    return nlohmann::json{{"pause_frames_sent", t.pause_sent},
                          {"pause_frames_received", t.pause_received},
                          {"paused_ns", t.paused_ns},
                          {"paused_ns_by_priority", by_prio},
                          {"credit_stall_ns_by_vl", by_vl},
                          {"headroom_peak_bytes", t.headroom_peak_bytes},
                          {"lossless_drops", t.lossless_drops},
                          {"xoff_at_end", t.xoff_pgs},
                          {"paused_at_end", t.paused_prios},
                          {"fc_packets_sent", t.fc_packets_sent},
                          {"credit_stall_ns", t.credit_stall_ns},
                          {"credits_outstanding_at_end", t.credits_outstanding},
                          {"pause_frames_sent_run", w.pause_sent},
                          {"pause_frames_received_run", w.pause_received},
                          {"paused_ns_run", w.paused_ns},
                          {"lossless_drops_run", w.lossless_drops},
                          {"fc_packets_sent_run", w.fc_packets_sent},
                          {"credit_stall_ns_run", w.credit_stall_ns}};
  };
  nlohmann::json fc = {{"mode", r.flow_control_mode}};
  nlohmann::json fc_switches = nlohmann::json::object();
  for (const auto& sr : r.switches) {
    PortStatsList ps, ps_run;
    for (const auto& p : sr.ports) {
      ps.push_back(&p.fc);
      ps_run.push_back(&p.fc_run);
    }
    fc_switches[sr.name] = fc_json(ps, ps_run);
    nlohmann::json bins = nlohmann::json::array();
    for (const auto& [n, m] : sr.ecn_bins) bins.push_back({n, m});
    fc_switches[sr.name]["ecn"] = {{"ect_packets", sr.ecn_packets},
                                   {"marked", sr.ecn_marked},
                                   {"bin_bytes", sr.ecn_bin_bytes},
                                   {"bins_packets_marked", bins}};
  }
  PortStatsList hs, hs_run;
  for (const auto& h : r.host_fc) hs.push_back(&h);
  for (const auto& h : r.host_fc_run) hs_run.push_back(&h);
  fc["switches"] = fc_switches;
  fc["hosts"] = fc_json(hs, hs_run);
  j["flow_control"] = fc;
}

}  // namespace fabricsim::sim
