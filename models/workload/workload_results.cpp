#include "models/workload/workload_results.h"

#include <map>

namespace fabricsim::workload {

double CollectiveResult::algbw_gbps() const {
  if (!finished || end <= start) return 0;
  return static_cast<double>(bytes) / time().as_s() * 1e-9;
}

std::vector<CollectiveResult> collective_results(const ExecGraph& g, const WorkloadEngine& e) {
  std::vector<CollectiveResult> out;
  out.reserve(g.spans().size());
  for (const Span& s : g.spans()) {
    CollectiveResult r;
    r.name = s.name;
    r.algorithm = s.algorithm;
    r.ranks = s.ranks;
    r.bytes = s.bytes;
    r.bus_factor = s.bus_factor;
    r.finished = true;
    Time slowest = Time();
    for (uint32_t i = s.first; i < s.last; ++i) {
      if (e.ended(i) == Time::max()) {
        r.finished = false;
        continue;
      }
      r.start = std::min(r.start, e.started(i));
      if (e.ended(i) >= slowest) {
        slowest = e.ended(i);
        r.slowest_rank = g.node(i).rank;
      }
    }
    r.end = slowest;
    if (r.start == Time::max()) r.start = Time();
    out.push_back(r);
  }
  return out;
}

}  // namespace fabricsim::workload
