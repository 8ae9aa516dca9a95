#include "models/topology/traffic_routes.h"

#include <optional>
#include <utility>
#include <vector>

#include "models/traffic/synthetic.h"
#include "models/traffic/trace_replay.h"

namespace fabricsim::topo {

namespace {

using Pair = std::optional<std::pair<int, int>>;

std::string describe(const Topology& t, int src, int dst, const std::string& what) {
  return what + " from host " + std::to_string(src) + " to host " + std::to_string(dst) +
         ", which the topology cannot route: " + t.unroutable_rule;
}

// The first pair (src, dst != src unless `self`) with no route, over all sources and
// destinations.
Pair any_pair(const Topology& t, bool self) {
  for (int s = 0; s < t.hosts; ++s)
    for (int d = 0; d < t.hosts; ++d)
      if ((self || d != s) && !t.routable(s, d)) return std::make_pair(s, d);
  return std::nullopt;
}

Pair to_one(const Topology& t, int dst, const std::vector<int>& sources) {
  for (int s : sources)
    if (!t.routable(s, dst)) return std::make_pair(s, dst);
  return std::nullopt;
}

}  // namespace

void check_traffic_routes(const Topology& t, const traffic::TrafficConfig& cfg, uint64_t seed,
                          const RouteFailFn& fail) {
  if (t.rail_of_host.empty() || cfg.pattern == "trace" || cfg.pattern == "workload" ||
      cfg.load <= 0)
    return;  // (a workload's routes: checked where the run configuration checks the workload)
  Pair bad;
  std::string key = "traffic.pattern";
  if (cfg.pattern == "uniform" || cfg.pattern == "all_to_all") {
    bad = any_pair(t, cfg.pattern == "uniform" && cfg.self);
  } else if (cfg.pattern == "hotspot") {
    const int hot = static_cast<int>(cfg.hotspot_port);
    std::vector<int> all;
    for (int s = 0; s < t.hosts; ++s)
      if (s != hot || cfg.self) all.push_back(s);
    if (cfg.hotspot_fraction > 0) bad = to_one(t, hot, all);
    if (bad) key = "traffic.hotspot.port";
    if (!bad && cfg.hotspot_fraction < 1) bad = any_pair(t, cfg.self);
  } else if (cfg.pattern == "incast") {
    const int target = static_cast<int>(cfg.incast_target);
    const int64_t count = cfg.incast_sources == 0 ? t.hosts - 1 : cfg.incast_sources;
    std::vector<int> senders;
    for (int s = 0; s < t.hosts && static_cast<int64_t>(senders.size()) < count; ++s)
      if (s != target) senders.push_back(s);
    bad = to_one(t, target, senders);
    key = "traffic.incast.target";
  } else if (cfg.pattern == "permutation") {
    // The derangement the run will draw (it depends on the seed and the host count only).
    const traffic::SyntheticSource source(cfg, t.hosts, BitRate::gbps(800), seed);
    const auto& perm = source.permutation();
    for (int s = 0; s < t.hosts && !bad; ++s)
      if (!t.routable(s, perm[s])) bad = std::make_pair(s, static_cast<int>(perm[s]));
  }
  if (bad) fail(key, describe(t, bad->first, bad->second, cfg.pattern + " traffic sends"));
}

void check_trace_routes(const Topology& t, const std::string& path, int tc_count,
                        const traffic::PacketLimit& limit, const RouteFailFn& fail) {
  if (t.rail_of_host.empty()) return;
  traffic::TraceReader reader(path, t.hosts, tc_count, limit);
  traffic::TraceReader::Record r;
  for (uint64_t line = 1; reader.next(r); ++line)
    if (!t.routable(r.src, r.dst))
      fail("traffic.trace.file",
           describe(t, r.src, r.dst, path + ": packet " + std::to_string(line) + " goes"));
}

}  // namespace fabricsim::topo
