#include "models/sim/aggregation_setup.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "models/common/error.h"
#include "models/topology/aggregation_nodes.h"

namespace fabricsim::sim {

namespace {

const sw::SwitchConfig& chip_of(const topo::Topology& t, const RunConfig& cfg, int s) {
  return cfg.chip(cfg.tier_kind_index(static_cast<size_t>(t.switch_tier[s])));
}

}  // namespace

topo::Topology with_aggregation_units(topo::Topology t, const RunConfig& cfg) {
  std::vector<bool> at(static_cast<size_t>(t.switches()));
  bool any = false;
  for (int s = 0; s < t.switches(); ++s) any |= at[s] = chip_of(t, cfg, s).aggregation.enabled;
  if (!any) return t;
  if (!cfg.nic.enabled || cfg.traffic.pattern != "workload")
    throw InputError(
        "switch.aggregation.enabled: true needs nic.enabled: true and traffic.pattern: workload "
        "(the aggregation units reduce a workload's allreduce_innet, over the NICs' transport)");
  try {
    topo::add_aggregation_nodes(t, at);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  return t;
}

std::vector<int> workload_hosts(const RunConfig& cfg, int ranks) {
  std::vector<int> host_of(static_cast<size_t>(ranks));
  std::iota(host_of.begin(), host_of.end(), 0);
  if (cfg.workload.placement == "rail") {  // host = server x G + GPU (docs/topologies.md)
    const auto gpus = static_cast<int>(cfg.topology.gpus_per_server);
    for (int r = 0; r < ranks; ++r) host_of[r] = (r % (ranks / gpus)) * gpus + r / (ranks / gpus);
  }
  return host_of;
}

BitRate unit_rate(const sw::SwitchConfig& chip) {
  if (chip.aggregation.throughput.as_bps()) return chip.aggregation.throughput;
  return BitRate::bps(chip.port_speed.as_bps() * static_cast<uint64_t>(chip.ports));
}

std::shared_ptr<const workload::InNetworkPlan> aggregation_plan(const topo::Topology& t,
                                                                const RunConfig& cfg,
                                                                const std::vector<int>& host_of) {
  if (t.aggregation_host.empty()) return nullptr;
  auto plan = std::make_shared<workload::InNetworkPlan>();
  std::vector<int> unit_of(static_cast<size_t>(t.switches()), -1);
  for (int s = 0; s < t.switches(); ++s)
    if (t.aggregation_host[s] >= 0) {
      unit_of[s] = plan->units();
      plan->parent.push_back(-1);
      plan->name.push_back(t.switch_names[s]);
      plan->buffer.push_back(chip_of(t, cfg, s).aggregation.buffer.count());
    }
  const std::vector<int> up = topo::aggregation_parents(t);
  for (int s = 0; s < t.switches(); ++s)
    if (unit_of[s] >= 0 && up[s] >= 0) plan->parent[unit_of[s]] = unit_of[up[s]];
  plan->job_ranks = static_cast<int>(host_of.size());
  for (int h : host_of) plan->leaf_of_rank.push_back(unit_of[t.host_port[h].sw]);
  return plan;
}

std::vector<UnitStats> unit_stats(const workload::InNetworkPlan& plan, const workload::ExecGraph& g,
                                  const workload::WorkloadEngine& e) {
  using workload::NodeKind;
  std::vector<UnitStats> out(static_cast<size_t>(plan.units()));
  for (int a = 0; a < plan.units(); ++a) out[a].name = plan.name[a];
  auto unit = [&](int rank) { return rank >= plan.job_ranks ? rank - plan.job_ranks : -1; };
  // Per (span, unit, channel): its reduce receives (step 0) and result sends (step 1), in node
  // order: slice j is the j-th group of as many as the unit has children.
  std::map<std::tuple<uint32_t, int, int>, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>>
      per;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const workload::Node& n = g.node(i);
    const int a = unit(n.rank);
    if (a >= 0 && n.kind == NodeKind::kRecv && n.step == 0) {
      out[a].bytes_reduced += n.bytes;
      per[{n.span, a, n.channel}].first.push_back(i);
    } else if (a >= 0 && n.kind == NodeKind::kSend && n.step == 1) {
      per[{n.span, a, n.channel}].second.push_back(i);
    }
    // A job rank's send up whose last dependency (its buffer slot's result) finished last.
    const int to = unit(n.peer);
    if (a < 0 && to >= 0 && n.kind == NodeKind::kSend && n.step == 0 && n.dep_end > n.dep_begin) {
      const uint32_t slot = g.deps()[n.dep_end - 1];
      if (g.node(slot).kind != NodeKind::kRecv || g.node(slot).step != 1) continue;
      bool last = e.ended(slot) != Time::max();
      for (uint32_t d = n.dep_begin; d + 1 < n.dep_end && last; ++d)
        last = e.ended(g.deps()[d]) < e.ended(slot);
      out[to].buffer_stalls += last;
    }
  }
  // Occupancy: +bytes at a slice's first arrival, -bytes as its last result send is posted.
  std::vector<std::vector<std::pair<Time, int64_t>>> events(out.size());
  for (const auto& [key, lists] : per) {
    const auto& [recv, send] = lists;
    std::set<int> peers;
    for (uint32_t r : recv) peers.insert(g.node(r).peer);
    const size_t k = peers.size();
    auto& ev = events[std::get<1>(key)];
    for (size_t j = 0; j + k <= recv.size(); j += k) {
      Time in = Time::max(), gone;
      for (size_t q = j; q < j + k; ++q) in = std::min(in, e.ended(recv[q]));
      for (size_t q = j; q < j + k && q < send.size(); ++q)
        gone = std::max(gone, e.started(send[q]));
      if (in == Time::max() || gone == Time::max()) continue;  // not finished
      ev.push_back({in, static_cast<int64_t>(g.node(recv[j]).bytes)});
      ev.push_back({gone, -static_cast<int64_t>(g.node(recv[j]).bytes)});
    }
  }
  for (size_t a = 0; a < out.size(); ++a) {
    std::sort(events[a].begin(), events[a].end());  // a release before an arrival at one time
    int64_t held = 0;
    for (const auto& [t, b] : events[a]) {
      held += b;
      out[a].buffer_peak =
          std::max(out[a].buffer_peak, static_cast<uint64_t>(std::max<int64_t>(held, 0)));
    }
  }
  return out;
}

std::string unit_stats_csv(const std::vector<UnitStats>& s) {
  std::string c = "switch,bytes_reduced,buffer_peak_bytes,buffer_stalls\n";
  for (const UnitStats& u : s)
    c += fmt::format("{},{},{},{}\n", u.name, u.bytes_reduced, u.buffer_peak, u.buffer_stalls);
  return c;
}

}  // namespace fabricsim::sim
