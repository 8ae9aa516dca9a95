#include "models/topology/topology_config.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "models/topology/registry.h"

namespace fabricsim::topo {

namespace {

// A table per switch with an entry per host: bounded so that an absurd size is refused rather
// than exhausting memory (2^26 entries are ~0.8 GB with the route record).
constexpr int64_t kMaxTableEntries = int64_t{1} << 26;

}  // namespace

std::string TierPorts::named(size_t tier) const {
  if (ports_.empty()) return "switch.ports";
  return keys_.at(tier) + (kinds_.at(tier).empty() ? "" : " (kind " + kinds_.at(tier) + ")");
}

std::string TierPorts::of(size_t tier) const {
  if (ports_.empty()) return "";
  return " (" + keys_.at(tier) + (kinds_.at(tier).empty() ? "" : ", kind " + kinds_.at(tier)) + ")";
}

int64_t TierPorts::max() const {
  return ports_.empty() ? all_ : *std::max_element(ports_.begin(), ports_.end());
}

void TopologyConfig::visit(config::Visitor& v) {
  std::vector<std::string> names;
  std::string doc;
  for (const TopologyKind* k : topology_kinds()) {
    names.emplace_back(k->name);
    doc += (doc.empty() ? "" : " ") + std::string(k->name) + ": " + k->description;
    if (!k->keys.empty()) {
      doc += " (";
      for (size_t i = 0; i < k->keys.size(); ++i) doc += (i ? ", " : "") + std::string(k->keys[i]);
      doc += ")";
    }
    doc += ".";
  }
  v.choice("kind", kind, "single", names,
           doc + " Host numbering and routing of each: docs/topologies.md.");
  // A key acts with the kinds that read it, a tier's chip with the kinds that have the tier.
  std::map<std::string, std::vector<std::string>> readers;
  for (const TopologyKind* k : topology_kinds()) {
    for (const char* key : k->keys) readers[key].emplace_back(k->name);
    for (const char* tier : k->tiers) readers["kinds." + std::string(tier)].emplace_back(k->name);
  }
  for (const auto& [key, kinds] : readers) {
    std::string text;
    for (size_t i = 0; i < kinds.size(); ++i)
      text += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i];
    v.applies_when(key, "{kind}: " + text, [this, kinds = kinds] {
      return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
    });
  }
  v.param("switches", switches, 2, 2, 64, "", "line: number of switches in the chain.");
  v.param("hosts_per_switch", hosts_per_switch, 0, 0, 4096, "",
          "line: hosts on each switch (ports 0..n-1); the next ports link to the left and right "
          "neighbours. 0 = all ports the links leave free.");
  v.param("leaves", leaves, 2, 1, 1024, "", "leaf_spine: number of leaf switches.");
  v.param("spines", spines, 2, 1, 1024, "",
          "leaf_spine, rail_optimized: number of spine switches (links_per_pair links from every "
          "leaf to every spine).");
  v.param("hosts_per_leaf", hosts_per_leaf, 0, 0, 4096, "",
          "leaf_spine, rail_optimized: hosts on each leaf (ports 0..n-1; uplinks follow). 0 = all "
          "ports the uplinks leave free. A rail with more servers than this gets several leaves.");
  v.param("links_per_pair", links_per_pair, 1, 1, 64, "",
          "leaf_spine, fat_tree: parallel links between every two connected switches (ECMP over "
          "all of them).");
  v.param("k", k, 0, 0, 512, "",
          "fat_tree: arity (even): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 "
          "cores, k^3/4 hosts. 0 = the largest even k with k x links_per_pair <= switch.ports.");
  v.param("servers", servers, 4, 1, 65536, "",
          "rail_optimized, rail_only: number of servers (host = server x gpus_per_server + rail).");
  v.param("gpus_per_server", gpus_per_server, 8, 1, 512, "",
          "rail_optimized, rail_only: GPUs per server, one NIC (one host) each; NIC r of every "
          "server attaches to rail r.");
  v.param("routers_per_group", routers_per_group, 4, 2, 512, "",
          "dragonfly: routers per group (a), all-to-all connected inside the group.");
  v.param("hosts_per_router", hosts_per_router, 2, 1, 512, "",
          "dragonfly: hosts on each router (p).");
  v.param("global_links", global_links, 2, 1, 512, "",
          "dragonfly: global links per router (h), each to another group.");
  v.param("groups", groups, 0, 0, 262145, "",
          "dragonfly: groups (g), at most a x h + 1 (one global link between every two groups). "
          "0 = a x h + 1.");
  v.begin_section("kinds",
                  "The chip of each tier of switches: the name of a switch kind (switch_kinds[]) "
                  "its switches are built from, or empty for the switch: chip. A tier names its "
                  "switches' role in topology.kind; the hosts attach to the first tier listed.");
  for (const std::string& tier : all_tier_names()) {
    std::string used;
    for (const TopologyKind* k : topology_kinds())
      if (std::find_if(k->tiers.begin(), k->tiers.end(),
                       [&](const char* t) { return tier == t; }) != k->tiers.end())
        used += (used.empty() ? "" : ", ") + std::string(k->name);
    v.param(tier, tier_kinds[tier], "",
            "Tier " + tier + " (of " + used +
                "): the switch_kinds[].name its switches are, or empty for the switch: chip.");
  }
  v.end_section();
}

std::string TopologyConfig::tier_kind(size_t tier) const {
  const auto it = tier_kinds.find(kind_info().tiers.at(tier));
  return it == tier_kinds.end() ? std::string() : it->second;
}

void TopologyConfig::validate_tier_kinds(const config::Checker& c,
                                         const std::vector<std::string>& kind_names) const {
  const TopologyKind& k = kind_info();
  std::string tiers;
  for (const char* t : k.tiers) tiers += (tiers.empty() ? "" : ", ") + std::string(t);
  for (const auto& entry : tier_kinds) {
    // (not a structured binding: C++17 lets no lambda capture one, and clang enforces it)
    const std::string& tier = entry.first;
    const std::string& name = entry.second;
    if (name.empty()) continue;
    const std::string key = "topology.kinds." + tier;
    c.require(std::find_if(k.tiers.begin(), k.tiers.end(),
                           [&](const char* t) { return tier == t; }) != k.tiers.end(),
              key,
              "topology.kind " + std::string(k.name) + " has no tier " + tier +
                  " (its tiers: " + tiers + ")");
    if (std::find(kind_names.begin(), kind_names.end(), name) != kind_names.end()) continue;
    std::string known;
    for (const auto& n : kind_names) known += (known.empty() ? "" : ", ") + n;
    const std::string hint = config::closest_name(name, kind_names);
    c.fail(key, "no switch kind '" + name +
                    "' (switch_kinds[].name: " + (known.empty() ? "none defined" : known) + ")" +
                    (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
  }
}

const TopologyKind& TopologyConfig::kind_info() const {
  if (kind.empty()) return single_kind();
  if (const TopologyKind* k = find_topology_kind(kind)) return *k;
  throw std::invalid_argument("topology.kind: unknown kind '" + kind + "'");
}

int64_t TopologyConfig::line_hosts(int64_t ports) const {
  // End switches need one neighbour port, middle ones two; every switch gets the same host count.
  const int64_t links = switches > 2 ? 2 : 1;
  return hosts_per_switch > 0 ? hosts_per_switch : ports - links;
}

int64_t TopologyConfig::leaf_hosts(int64_t ports) const {
  return hosts_per_leaf > 0 ? hosts_per_leaf : ports - spines * links_per_pair;
}

int64_t TopologyConfig::hosts(const TierPorts& ports) const {
  return kind_info().hosts(*this, ports);
}

int64_t TopologyConfig::switch_count(const TierPorts& ports) const {
  return kind_info().switches(*this, ports);
}

bool TopologyConfig::all_pairs_routable() const {
  return kind_info().all_pairs_routable;
}

void TopologyConfig::validate_ports(const config::Checker& c, const TierPorts& ports) const {
  const TopologyKind& k = kind_info();
  k.validate(*this, c.under("topology"), ports);
  const int64_t h = k.hosts(*this, ports), s = k.switches(*this, ports);
  c.require(h <= kMaxTableEntries / s, "topology.kind",
            std::string(k.name) + " with these keys has " + std::to_string(h) + " hosts and " +
                std::to_string(s) + " switches: " + std::to_string(h * s) +
                " forwarding entries (a table per switch, an entry per host) exceed the " +
                std::to_string(kMaxTableEntries) + " this simulator holds");
}

}  // namespace fabricsim::topo
