// Refuses traffic that a topology cannot carry: a pair (src, dst) for which
// Topology::routable() is false (a rail-only network's cross-rail pairs). Without this the
// switch would drop every such packet as unroutable, silently; instead the run stops before it
// starts (exit 2) with a message naming the pair and the topology's rule.
//
// Synthetic patterns are checked from their definition (every pair they may draw: uniform and
// all_to_all every pair, hotspot every source to the hot port plus uniform unless the fraction
// is 1, incast the senders to the target, permutation the derangement the run will draw); a
// trace line by line. Traffic at load 0 sends nothing and passes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "models/topology/topology.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::topo {

// `fail(key, message)` must throw.
using RouteFailFn = std::function<void(const std::string& key, const std::string& message)>;

// `cfg` (not a trace) must have passed traffic::check_traffic_endpoints for t.hosts; `seed` is
// the run's (the permutation's draw).
void check_traffic_routes(const Topology& t, const traffic::TrafficConfig& cfg, uint64_t seed,
                          const RouteFailFn& fail);
// Every line of the trace at `path` (already checked by traffic::TraceReplay).
void check_trace_routes(const Topology& t, const std::string& path, int tc_count,
                        const traffic::PacketLimit& limit, const RouteFailFn& fail);

}  // namespace fabricsim::topo
