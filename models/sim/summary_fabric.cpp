// summary.json: the run (window, throughput, latency) and the fabric (buffers, switches, topology,
// load balance, packets, hosts' queues).
#include "models/sim/summary_sections.h"

#include <algorithm>
#include <vector>

namespace fabricsim::sim {

nlohmann::json latency_json(const LatencyReport& l) {
  return {{"count", l.count}, {"mean", l.mean}, {"min", l.min}, {"p50", l.p50},
          {"p99", l.p99},     {"p999", l.p999}, {"max", l.max}};
}

// window, throughput, latency_ns.
void write_run_section(const RunReport& r, nlohmann::json& j) {
  j["window"] = {{"start_ns", r.window_start.as_ns()},
                 {"end_ns", r.window_end.as_ns()},
                 {"sim_end_ns", r.end_time.as_ns()},
                 {"drained", r.drained}};
  j["throughput"] = {{"offered_load", r.offered_load}, {"accepted_load", r.accepted_load}};
  j["latency_ns"] = latency_json(r.latency);
  j["latency_ns"]["first_half_count"] = r.latency_halves.first_count;
  j["latency_ns"]["first_half_mean"] = r.latency_halves.first_mean;
  j["latency_ns"]["second_half_count"] = r.latency_halves.second_count;
  j["latency_ns"]["second_half_mean"] = r.latency_halves.second_mean;
}

// buffer, switches, hosts, topology, load_balance, packets.
void write_fabric_sections(const RunReport& r, nlohmann::json& j) {
  auto port_buffers = [](const SwitchReport& sr) {
    nlohmann::json ports = nlohmann::json::array();
    for (size_t i = 0; i < sr.ports.size(); ++i)
      ports.push_back({{"port", i},
                       {"peak_bytes", sr.ports[i].buffer_peak_bytes},
                       {"peak_bytes_run", sr.ports[i].buffer_peak_bytes_run},
                       {"mean_bytes", sr.ports[i].buffer_mean_bytes}});
    return ports;
  };
  nlohmann::json switches = nlohmann::json::array();
  nlohmann::json hot_ports = nlohmann::json::array();
  for (const auto& sr : r.switches) {
    if (sr.name == r.buffer_switch) hot_ports = port_buffers(sr);
    switches.push_back({{"name", sr.name},
                        {"buffer",
                         {{"capacity_bytes", sr.buffer_capacity_bytes},
                          {"peak_bytes", sr.buffer_peak_bytes},
                          {"peak_bytes_run", sr.buffer_peak_bytes_run},
                          {"mean_bytes", sr.buffer_mean_bytes}}},
                        {"packets",
                         {{"received", sr.received},
                          {"departed", sr.departed},
                          {"dropped", sr.dropped},
                          {"in_flight", sr.in_flight}}},
                        {"egress_underruns", sr.underruns}});
    if (!sr.kind.empty()) switches.back()["kind"] = sr.kind;  // only with switch kinds
  }
  // `buffer` describes the switch with the highest peak (the only one in a single-switch run).
  j["buffer"] = {{"switch", r.buffer_switch},         {"capacity_bytes", r.buffer_capacity_bytes},
                 {"peak_bytes", r.buffer_peak_bytes}, {"peak_bytes_run", r.buffer_peak_bytes_run},
                 {"mean_bytes", r.buffer_mean_bytes}, {"ports", hot_ports}};
  j["hosts"] = r.hosts;
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& t : r.tiers)
    tiers.push_back({{"name", t.name},
                     {"switches", t.switches},
                     {"down_ports", t.down_ports},
                     {"up_ports", t.up_ports},
                     {"oversubscription", t.oversubscription}});
  j["topology"] = {
      {"kind", r.topology_kind}, {"max_switch_hops", r.max_switch_hops}, {"tiers", tiers}};
  j["switches"] = switches;
  if (!r.boxes.empty()) j["boxes"] = boxes_json(r.boxes);  // only with multi-chip boxes
  nlohmann::json lb = nlohmann::json::array();
  for (const auto& l : r.load_balance)
    lb.push_back({{"switch", l.name},
                  {"switch_ports", l.ports},
                  {"mean_utilisation", l.mean},
                  {"max_utilisation", l.max},
                  {"max_over_mean", l.mean > 0 ? l.max / l.mean : 0.0}});
  j["load_balance"] = lb;
  j["packets"] = {{"injected", r.injected},
                  {"delivered", r.delivered},
                  {"dropped", r.dropped},
                  {"in_flight", r.in_flight},
                  {"lost_on_links", r.link_lost},
                  {"ce_marked_delivered", r.ce_delivered},
                  {"reordered", r.reordered},
                  {"window",
                   {{"injected", r.win_injected},
                    {"delivered", r.win_delivered},
                    {"dropped", r.win_dropped},
                    {"in_flight", r.win_in_flight}}}};
}

// host_queues, and flow_events and occupancy_csv_ends_ns when their files are cut short.
void write_host_sections(const RunReport& r, nlohmann::json& j) {
  j["host_queues"] = {{"packets_waited", r.host_queued},
                      {"wait_mean_ns", r.host_wait_mean_ns},
                      {"wait_max_ns", r.host_wait_max_ns},
                      {"backlog_at_end", r.host_backlog}};
  // Only when a queue was full (a run that never fills one reads as before the limit existed).
  if (r.host_refused) j["host_queues"]["refused_packets"] = r.host_refused;
  // Only when flow_events.csv is not the whole story (stats.flow_events reached).
  if (r.flow_events_not_recorded)
    j["flow_events"] = {{"recorded", r.flow_events.size()},
                        {"not_recorded", r.flow_events_not_recorded}};
  // Only when occupancy.csv stops before the run's end (its cap: occupancy_writer.h).
  if (r.occupancy_capped_at != Time::max())
    j["occupancy_csv_ends_ns"] = r.occupancy_capped_at.as_ns();
}

}  // namespace fabricsim::sim
