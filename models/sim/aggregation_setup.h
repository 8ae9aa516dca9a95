// The switches' aggregation units in a run (switch.aggregation): where they attach, their
// ports' rates, the plan allreduce_innet reduces on, and what each unit did (aggregation.csv).
//
// Hardware: a SHARP-like Aggregation Node per switch (models/topology/aggregation_nodes.h); the
// workload layer's view of them: models/workload/innet_plan.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/sim/run_config.h"
#include "models/topology/topology.h"
#include "models/workload/innet_plan.h"
#include "models/workload/nic_driver.h"

namespace fabricsim::sim {

// `t` with a unit on every switch whose chip has switch.aggregation.enabled (unchanged if none).
// InputError when the run cannot have them: no NICs, traffic other than a workload, no spare
// port, a topology routed by rails or groups.
topo::Topology with_aggregation_units(topo::Topology t, const RunConfig& cfg);

// The host of each of a workload's `ranks` ranks (workload.placement).
std::vector<int> workload_hosts(const RunConfig& cfg, int ranks);

// The rate of a unit's port: switch.aggregation.throughput (0: ports x port_speed).
BitRate unit_rate(const sw::SwitchConfig& chip);

// The plan for the job's ranks on hosts `host_of` (nullptr when the topology has no units).
std::shared_ptr<const workload::InNetworkPlan> aggregation_plan(const topo::Topology& t,
                                                                const RunConfig& cfg,
                                                                const std::vector<int>& host_of);

// What each unit did, from the run's graph and its times: bytes it reduced (received from its
// children), the most bytes it held at once (a chunk from its first child's arrival to its
// result's last send down), and its children's sends that waited for the buffer (their slot's
// result the last dependency to finish).
struct UnitStats {
  std::string name;
  uint64_t bytes_reduced = 0, buffer_peak = 0, buffer_stalls = 0;
};
std::vector<UnitStats> unit_stats(const workload::InNetworkPlan& plan, const workload::ExecGraph& g,
                                  const workload::WorkloadEngine& e);
// aggregation.csv: a row per unit.
std::string unit_stats_csv(const std::vector<UnitStats>& s);

}  // namespace fabricsim::sim
