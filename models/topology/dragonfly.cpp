// `dragonfly` (Kim, Dally, Scott and Abts, ISCA 2008): g groups of a = routers_per_group routers,
// all-to-all connected inside the group (local links); every router has p = hosts_per_router hosts
// and h = global_links links to other groups. g = a*h + 1 (groups: 0) joins every two groups by
// exactly one global link; fewer groups leave global ports unused (terminated); more cannot close.
//
// Numbering (docs/topologies.md): router R of group G is switch G*a + R, "g<G>_r<R>"; host
// (G*a + R)*p + i sits on its port i. Router R's local port to router R2 of its group is
// p + (R2 < R ? R2 : R2 - 1); its global ports are p + a - 1 + x (x < h).
// Global arrangement ("consecutive"): a group's global links are numbered j = R*h + x (router R,
// global port x); link j of group G goes to group (G + j + 1) mod g, for j < g - 1. It arrives at
// link g - 2 - j of that group, so the two ends agree and every pair of groups has one link.
// Minimal routing: local hop to the router holding the global link to the destination's group,
// the global hop, a local hop to the destination's router: at most 3 links, 4 routers.
// Non-minimal routing (switch.routing.mode valiant / ugal, models/switch/load_balancer.h) reads
// the group table every router's ForwardingTable points at (sw::DragonflyGroups, one per run):
// each router's port towards every group, the gateway router of every pair of groups.
#include <memory>

#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

int64_t group_count(const TopologyConfig& cfg) {
  return cfg.groups > 0 ? cfg.groups : cfg.routers_per_group * cfg.global_links + 1;
}

void validate(const TopologyConfig& cfg, const config::Checker& c, const TierPorts& tp) {
  const int64_t ports = tp[0];
  const int64_t a = cfg.routers_per_group, p = cfg.hosts_per_router, h = cfg.global_links;
  const int64_t used = p + (a - 1) + h;
  c.require(used <= ports, "hosts_per_router",
            "a dragonfly router uses hosts_per_router " + std::to_string(p) +
                " + (routers_per_group - 1) " + std::to_string(a - 1) + " local + global_links " +
                std::to_string(h) + " = " + std::to_string(used) + " ports, but " + tp.is(0));
  const int64_t g = group_count(cfg);
  c.require(g <= a * h + 1, "groups",
            std::to_string(g) + " groups need " + std::to_string(g - 1) +
                " global links per group (one to every other group) but a group has "
                "routers_per_group x global_links = " +
                std::to_string(a) + " x " + std::to_string(h) + " = " + std::to_string(a * h) +
                ": at most " + std::to_string(a * h + 1) + " groups");
  c.require(g >= 2, "groups", "a dragonfly needs at least 2 groups, got " + std::to_string(g));
}

int64_t hosts(const TopologyConfig& cfg, const TierPorts&) {
  return group_count(cfg) * cfg.routers_per_group * cfg.hosts_per_router;
}
int64_t switches(const TopologyConfig& cfg, const TierPorts&) {
  return group_count(cfg) * cfg.routers_per_group;
}

Topology build(const TopologyConfig& cfg, const TierPorts&, uint64_t seed) {
  const int a = static_cast<int>(cfg.routers_per_group), p = static_cast<int>(cfg.hosts_per_router);
  const int h = static_cast<int>(cfg.global_links), g = static_cast<int>(group_count(cfg));
  Topology t;
  t.hosts = static_cast<int>(hosts(cfg, 0));
  for (int G = 0; G < g; ++G)
    for (int R = 0; R < a; ++R)
      t.add_switch("g" + std::to_string(G) + "_r" + std::to_string(R), seed);
  const auto local = [&](int from, int to) { return p + (to < from ? to : to - 1); };
  const auto global_port = [&](int j) { return p + a - 1 + j % h; };
  // Group G's global link towards group T (T != G): its number j.
  const auto link_to = [&](int G, int T) { return ((T - G - 1) % g + g) % g; };

  for (int s = 0; s < g * a; ++s) t.switch_group.push_back(s / a);
  for (int host = 0; host < t.hosts; ++host) {
    t.host_port.push_back({host / p, host % p});
    t.host_group.push_back(host / p / a);
  }
  for (int G = 0; G < g; ++G)
    for (int R = 0; R < a; ++R)
      for (int R2 = R + 1; R2 < a; ++R2)
        t.add_wire({G * a + R, local(R, R2)}, {G * a + R2, local(R2, R)});
  t.group_port.assign(g, std::vector<PortRef>(g));
  for (int G = 0; G < g; ++G)
    for (int T = 0; T < g; ++T) {
      if (T == G) continue;
      const int j = link_to(G, T);
      t.group_port[G][T] = {G * a + j / h, global_port(j)};
      if (G < T) {
        const int back = link_to(T, G);  // = g - 2 - j
        t.add_wire({G * a + j / h, global_port(j)}, {T * a + back / h, global_port(back)});
      }
    }
  for (int host = 0; host < t.hosts; ++host) {
    const int dg = host / p / a, dr = host / p % a;
    for (int G = 0; G < g; ++G)
      for (int R = 0; R < a; ++R) {
        int port;
        if (G == dg) {
          port = R == dr ? host % p : local(R, dr);
        } else {
          const int j = link_to(G, dg), gateway = j / h;
          port = R == gateway ? global_port(j) : local(R, gateway);
        }
        t.set_route(G * a + R, host, {port});
      }
  }
  // The group table, shared by every router's forwarding table.
  auto groups = std::make_shared<sw::DragonflyGroups>();
  groups->groups = g;
  groups->host_group = t.host_group;
  for (int host = 0; host < t.hosts; ++host) groups->host_switch.push_back(host / p);
  groups->switch_group = t.switch_group;
  groups->gateway.assign(static_cast<size_t>(g) * g, -1);
  groups->toward.assign(static_cast<size_t>(g) * a * g, -1);
  for (int G = 0; G < g; ++G)
    for (int T = 0; T < g; ++T) {
      if (T == G) continue;
      const int gw = t.group_port[G][T].sw;
      groups->gateway[static_cast<size_t>(G) * g + T] = gw;
      for (int R = 0; R < a; ++R) {
        const int s = G * a + R;
        groups->toward[static_cast<size_t>(s) * g + T] =
            s == gw ? t.group_port[G][T].port : local(R, gw - G * a);
      }
    }
  for (int s = 0; s < g * a; ++s) t.tables[s].set_dragonfly(groups, s);
  t.tiers = {{"router", g * a, p, a - 1 + h}, {"group (global links)", g, a * p, g - 1}};
  t.max_switch_hops = 4;
  return t;
}

}  // namespace

const TopologyKind& dragonfly_kind() {
  static const TopologyKind k{"dragonfly",
                              "groups of all-to-all routers, one global link between every two "
                              "groups (Kim 2008), minimal routing",
                              {"routers_per_group", "hosts_per_router", "global_links", "groups"},
                              {"router"},
                              {{0, 0}},
                              validate,
                              hosts,
                              switches,
                              build};
  return k;
}

}  // namespace fabricsim::topo
