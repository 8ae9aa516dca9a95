// summary.json: the NICs' transport (messages, packets, retransmissions, CNPs, FCT, slowdown).
#include "models/sim/summary_sections.h"

#include <algorithm>
#include <vector>

namespace fabricsim::sim {

// transport (NIC runs only).
void write_transport_section(const RunReport& r, nlohmann::json& j) {
  if (r.transport.on) {
    const nic::Nic::Stats& t = r.transport.totals;
    j["transport"] = {{"messages_posted", t.posted},
                      {"messages_completed", t.completed},
                      {"messages_failed", t.failed},
                      {"messages_in_flight", r.transport.in_flight},
                      {"messages_delivered", t.messages_delivered},
                      {"bytes_posted", t.bytes_posted},
                      {"bytes_completed", t.bytes_completed},
                      {"bytes_delivered", t.bytes_delivered},
                      {"data_packets_sent", t.data_packets},
                      {"retransmitted_packets", t.retransmitted},
                      {"acks_sent", t.acks_sent},
                      {"naks_sent", t.naks_sent},
                      {"timeouts", t.timeouts},
                      {"cnps_sent", t.cnps_sent},
                      {"cnps_received", t.cnps_received},
                      {"out_of_order_packets", t.out_of_order},
                      {"duplicate_packets", t.duplicates},
                      {"wqe_fetches", t.wqe_fetches},
                      {"fct_ns", latency_json(r.transport.fct)}};
    const SlowdownReport& sd = r.transport.slowdown;
    j["transport"]["slowdown"] = {{"count", sd.count}, {"mean", sd.mean}, {"p50", sd.p50},
                                  {"p95", sd.p95},     {"p99", sd.p99},   {"max", sd.max},
                                  {"exact", sd.exact}};
    // Only when the run had RDMA READs (a run without reads as before).
    if (t.read_requests) {
      j["transport"]["read_requests_sent"] = t.read_requests;
      j["transport"]["read_responses_sent"] = t.read_responses;
      j["transport"]["read_responses_dropped"] = t.read_responses_dropped;
    }
    if (r.transport.rate_rows_not_recorded)
      j["transport"]["rate_rows_not_recorded"] = r.transport.rate_rows_not_recorded;
  }
}

}  // namespace fabricsim::sim
