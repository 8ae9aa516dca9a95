// `rail_only`: rails without spines (Wang et al. 2023, "How to build low-cost networks for
// large language models (without sacrificing performance)"): `servers` servers of G =
// gpus_per_server GPUs, NIC r of every server on rail switch r ("rail<r>", port = server), host
// = server*G + r. Hosts of one rail reach each other through their rail switch; a destination on
// another rail has no route in the network (in the paper such traffic first crosses the source
// server's NVLink domain to the GPU on the destination's rail, which this simulator does not
// model), so Topology::routable() is false for cross-rail pairs and the run refuses traffic that
// would send any (models/topology/traffic_routes.h).
#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

void validate(const TopologyConfig& cfg, const config::Checker& c, const TierPorts& tp) {
  c.require(
      cfg.servers <= tp[0], "servers",
      "rail_only has one switch per rail with a port per server: " + std::to_string(cfg.servers) +
          " servers exceed " + tp.named(0) + " " + std::to_string(tp[0]));
}

int64_t hosts(const TopologyConfig& cfg, const TierPorts&) {
  return cfg.servers * cfg.gpus_per_server;
}
int64_t switches(const TopologyConfig& cfg, const TierPorts&) {
  return cfg.gpus_per_server;
}

Topology build(const TopologyConfig& cfg, const TierPorts&, uint64_t seed) {
  const int g = static_cast<int>(cfg.gpus_per_server);
  Topology t;
  t.hosts = static_cast<int>(cfg.servers) * g;
  for (int r = 0; r < g; ++r) t.add_switch("rail" + std::to_string(r), seed);
  t.switch_group.resize(g);
  for (int r = 0; r < g; ++r) t.switch_group[r] = r;
  for (int host = 0; host < t.hosts; ++host) {
    t.host_port.push_back({host % g, host / g});
    t.host_group.push_back(host % g);
    t.rail_of_host.push_back(host % g);
    t.set_route(host % g, host, {host / g});  // only its own rail switch knows it
  }
  t.unroutable_rule =
      "topology.kind rail_only has no switch between rails (host = server x " + std::to_string(g) +
      " + rail): cross-rail traffic must go through a server, send only between hosts of one "
      "rail (or use rail_optimized)";
  t.tiers = {{"rail", g, static_cast<int>(cfg.servers), 0}};
  t.max_switch_hops = 1;
  return t;
}

}  // namespace

const TopologyKind& rail_only_kind() {
  static const TopologyKind k{"rail_only",
                              "rail switches without spines (Wang 2023): no route between rails",
                              {"servers", "gpus_per_server"},
                              {"rail"},
                              {},
                              validate,
                              hosts,
                              switches,
                              build,
                              false};
  return k;
}

}  // namespace fabricsim::topo
