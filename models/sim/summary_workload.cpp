// summary.json: the workload (collectives, iterations, the ranks' compute and exposed
// communication).
#include "models/sim/summary_sections.h"

#include <algorithm>
#include <vector>

namespace fabricsim::sim {

namespace {

// Per communicator tag ("untagged": the rest): the ranks' exposed communication (docs/results.md:
// the parts sum to exposed_comm_ns per rank), the bytes they sent, and the critical path.
nlohmann::json by_tag(const WorkloadReport& w) {
  const workload::ClassResult& c = w.by_class;
  nlohmann::json tags = nlohmann::json::object(), path_comm = nlohmann::json::object();
  for (size_t k = 0; k < w.classes.size(); ++k) {
    const std::string name = k == 0 ? "untagged" : w.classes[k];
    double sum = 0, hi = 0, bytes = 0, bytes_hi = 0;
    for (size_t r = 0; r < c.exposed[k].size(); ++r) {
      sum += c.exposed[k][r].as_ns();
      hi = std::max(hi, c.exposed[k][r].as_ns());
      bytes += static_cast<double>(c.sent[k][r]);
      bytes_hi = std::max(bytes_hi, static_cast<double>(c.sent[k][r]));
    }
    const auto n = static_cast<double>(std::max<size_t>(1, c.exposed[k].size()));
    tags[name] = {{"exposed_mean_ns", sum / n},
                  {"exposed_max_ns", hi},
                  {"sent_mean_bytes", bytes / n},
                  {"sent_max_bytes", bytes_hi}};
    path_comm[name] = c.path_comm[k].as_ns();
  }
  return {{"exposed", tags},
          {"critical_path",
           {{"length_ns", c.path_length.as_ns()},
            {"compute_ns", c.path_compute.as_ns()},
            {"comm_ns", path_comm},
            {"gap_ns", c.path_gap.as_ns()},
            {"nodes", c.path_nodes}}}};
}

}  // namespace

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
    if (!w.classes.empty()) j["workload"]["by_tag"] = by_tag(w);
    if (w.scale_up_on)  // (without domains every message takes the NICs: nothing to split)
      for (const auto& [key, x] :
           {std::pair{"scale_up", &w.scale_up}, std::pair{"scale_out", &w.scale_out}})
        j["workload"][key] = {
            {"messages", x->messages}, {"bytes", x->bytes}, {"active_ns", x->active.as_ns()}};
  }
}

}  // namespace fabricsim::sim
