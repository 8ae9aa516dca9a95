#include "models/topology/bisection.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

namespace fabricsim::topo {

namespace {

// Dinic's algorithm on arcs in pairs (a, a ^ 1): an undirected edge of capacity c is two arcs of
// capacity c, each the other's residual.
class Dinic {
 public:
  Dinic(int nodes, const std::vector<std::tuple<int, int, uint64_t>>& edges)
      : first_(static_cast<size_t>(nodes) + 1, 0), level_(nodes), next_(nodes) {
    for (const auto& [a, b, c] : edges) {
      (void)c;
      ++first_[a + 1];
      ++first_[b + 1];
    }
    std::partial_sum(first_.begin(), first_.end(), first_.begin());
    arcs_.resize(first_.back());
    to_.resize(edges.size() * 2);
    cap_.resize(edges.size() * 2);
    std::vector<size_t> fill(first_.begin(), first_.end() - 1);
    for (size_t e = 0; e < edges.size(); ++e) {
      const auto& [a, b, c] = edges[e];
      to_[2 * e] = b;
      to_[2 * e + 1] = a;
      cap_[2 * e] = cap_[2 * e + 1] = c;
      arcs_[fill[a]++] = 2 * e;
      arcs_[fill[b]++] = 2 * e + 1;
    }
  }

  uint64_t run(int s, int t, int* phases) {
    uint64_t total = 0;
    int n = 0;
    while (levels(s, t)) {
      ++n;
      for (size_t v = 0; v < next_.size(); ++v) next_[v] = first_[v];
      while (const uint64_t f = augment(s, t)) total += f;
    }
    if (phases) *phases = n;
    return total;
  }

 private:
  bool levels(int s, int t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<int> queue{s};
    level_[s] = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      const int v = queue[i];
      for (size_t k = first_[v]; k < first_[v + 1]; ++k) {
        const size_t a = arcs_[k];
        if (cap_[a] > 0 && level_[to_[a]] < 0) {
          level_[to_[a]] = level_[v] + 1;
          queue.push_back(to_[a]);
        }
      }
    }
    return level_[t] >= 0;
  }

  // One augmenting path of the level graph, found iteratively (a line of a thousand switches
  // would be a deep recursion); dead ends leave the level graph. 0 when the flow is blocking.
  uint64_t augment(int s, int t) {
    path_.clear();
    int v = s;
    while (true) {
      if (v == t) {
        uint64_t b = std::numeric_limits<uint64_t>::max();
        for (const size_t a : path_) b = std::min(b, cap_[a]);
        for (const size_t a : path_) {
          cap_[a] -= b;
          cap_[a ^ 1] += b;
        }
        return b;
      }
      size_t& k = next_[v];
      while (k < first_[v + 1] && !(cap_[arcs_[k]] > 0 && level_[to_[arcs_[k]]] == level_[v] + 1))
        ++k;
      if (k < first_[v + 1]) {
        path_.push_back(arcs_[k]);
        v = to_[arcs_[k]];
        continue;
      }
      level_[v] = -1;  // nothing further from here in this phase
      if (path_.empty()) return 0;
      const size_t a = path_.back();
      path_.pop_back();
      v = to_[a ^ 1];
      ++next_[v];
    }
  }

  std::vector<size_t> first_;  // node -> its first entry of arcs_ (CSR)
  std::vector<size_t> arcs_;
  std::vector<int> to_;
  std::vector<uint64_t> cap_;  // residual capacity per arc
  std::vector<int> level_;
  std::vector<size_t> next_;  // per node: the next arc to try in this phase
  std::vector<size_t> path_;
};

// The minimum cut between the hosts with in_a[h] and the others.
uint64_t cut(const Topology& t, const std::vector<uint64_t>& speed, const std::vector<char>& in_a,
             int* phases) {
  const int s = t.switches(), sink = t.switches() + 1;
  std::vector<std::tuple<int, int, uint64_t>> edges;
  edges.reserve(t.wires.size() + 2 * static_cast<size_t>(t.switches()));
  for (const Wire& w : t.wires)
    edges.emplace_back(w.a.sw, w.b.sw, std::min(speed[w.a.sw], speed[w.b.sw]));
  std::vector<uint64_t> to_a(t.switches(), 0), to_b(t.switches(), 0);
  for (int h = 0; h < t.hosts; ++h) {
    const int sw = t.host_port[h].sw;
    (in_a[h] ? to_a : to_b)[sw] += speed[sw];
  }
  for (int sw = 0; sw < t.switches(); ++sw) {
    if (to_a[sw]) edges.emplace_back(s, sw, to_a[sw]);
    if (to_b[sw]) edges.emplace_back(sw, sink, to_b[sw]);
  }
  return Dinic(t.switches() + 2, edges).run(s, sink, phases);
}

}  // namespace

uint64_t max_flow(int nodes, const std::vector<std::tuple<int, int, uint64_t>>& edges, int source,
                  int sink, int* phases) {
  return Dinic(nodes, edges).run(source, sink, phases);
}

Bisection bisection(const Topology& t, const std::vector<uint64_t>& switch_port_bps) {
  Bisection b;
  if (t.hosts < 2) return b;
  const int half = t.hosts / 2;  // the smaller half when the count is odd
  // Full bisection: the smaller half's hosts each at its line rate (the slowest, to be safe).
  std::vector<uint64_t> host_bps(t.hosts);
  for (int h = 0; h < t.hosts; ++h) host_bps[h] = switch_port_bps[t.host_port[h].sw];
  std::sort(host_bps.begin(), host_bps.end());
  b.full_bps = std::accumulate(host_bps.begin(), host_bps.begin() + half, uint64_t{0});
  // Halvings: by host number, then by group (hosts ordered by group, then number) when that
  // differs (a rail network's groups are its rails, interleaved in the numbering).
  std::vector<std::pair<std::string, std::vector<int>>> orders;
  std::vector<int> order(t.hosts);
  std::iota(order.begin(), order.end(), 0);
  orders.emplace_back("by host number", order);
  if (static_cast<int>(t.host_group.size()) == t.hosts) {
    std::stable_sort(order.begin(), order.end(),
                     [&t](int x, int y) { return t.host_group[x] < t.host_group[y]; });
    std::vector<char> a(t.hosts, 0), a0(t.hosts, 0);
    for (int i = 0; i < half; ++i) a[order[i]] = a0[i] = 1;
    if (a != a0) orders.emplace_back("by group", order);
  }
  b.bps = std::numeric_limits<uint64_t>::max();
  for (const auto& [name, o] : orders) {
    std::vector<char> in_a(t.hosts, 0);
    for (int i = 0; i < half; ++i) in_a[o[i]] = 1;
    int phases = 0;
    const uint64_t c = cut(t, switch_port_bps, in_a, &phases);
    b.phases += phases;
    if (c < b.bps) {
      b.bps = c;
      b.split = name;
    }
  }
  return b;
}

}  // namespace fabricsim::topo
