// summary.json: the workload (collectives, iterations, the ranks' compute and exposed
// communication).
#include "models/sim/summary_sections.h"

#include <algorithm>
#include <vector>

namespace fabricsim::sim {

// workload (workload runs only).
void write_workload_section(const RunReport& r, nlohmann::json& j) {
  if (r.workload.on) {
    const WorkloadReport& w = r.workload;
    std::vector<double> times, busbw;
    uint64_t finished = 0;
    for (const auto& c : w.collectives)
      if (c.finished) {
        ++finished;
        times.push_back(c.time().as_ns());
        busbw.push_back(c.busbw_GBps());
      }
    auto stats = [](const std::vector<double>& v) {
      nlohmann::json s = {{"count", v.size()}};
      if (v.empty()) return s;
      double sum = 0, lo = v[0], hi = v[0];
      for (double x : v) {
        sum += x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      s["mean"] = sum / static_cast<double>(v.size());
      s["min"] = lo;
      s["max"] = hi;
      return s;
    };
    // Iterations (at most 1,000 listed) and the ranks' compute and exposed communication.
    nlohmann::json its = nlohmann::json::array();
    std::vector<double> it_times;
    for (const auto& it : w.job.iterations) {
      if (it.finished) it_times.push_back((it.end - it.start).as_ns());
      if (its.size() < 1000)
        its.push_back({{"start_ns", it.start.as_ns()},
                       {"end_ns", it.finished ? nlohmann::json(it.end.as_ns()) : nlohmann::json()},
                       {"time_ns", it.finished ? nlohmann::json((it.end - it.start).as_ns())
                                               : nlohmann::json()}});
    }
    std::vector<double> compute, exposed;
    size_t worst = 0;
    for (size_t rk = 0; rk < w.job.busy.size(); ++rk) {
      compute.push_back(w.job.compute[rk].as_ns());
      exposed.push_back(w.job.exposed(rk).as_ns());
      if (exposed.back() > exposed[worst]) worst = rk;
    }
    j["workload"] = {{"ranks", w.ranks},
                     {"nodes", w.nodes},
                     {"nodes_unfinished", w.unfinished},
                     {"end_ns", w.end.as_ns()},
                     {"collectives", w.collectives.size()},
                     {"collectives_finished", finished},
                     {"collective_time_ns", stats(times)},
                     {"busbw_GBps", stats(busbw)},
                     {"iterations", its},
                     {"iteration_time_ns", stats(it_times)},
                     {"compute_ns", stats(compute)},
                     {"exposed_comm_ns", stats(exposed)},
                     {"exposed_comm_worst_rank", exposed.empty() ? -1 : static_cast<int>(worst)}};
  }
}

}  // namespace fabricsim::sim
