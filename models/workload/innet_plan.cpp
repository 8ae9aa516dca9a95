#include "models/workload/innet_plan.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace fabricsim::workload {

std::vector<int> ReductionTree::up_order() const {
  std::vector<int> down;
  std::function<void(int)> visit = [&](int i) {
    down.push_back(i);
    for (int k : children[i]) visit(k);
  };
  visit(root);
  return {down.rbegin(), down.rend()};
}

int ReductionTree::depth() const {
  int d = 0;
  for (size_t i = 0; i < unit.size(); ++i) {
    if (unit[i] >= 0) continue;
    int levels = 0;
    for (int p = parent[i]; p >= 0; p = parent[p]) ++levels;
    d = std::max(d, levels);
  }
  return d;
}

ReductionTree reduction_tree(const InNetworkPlan& plan, const std::vector<int>& ranks) {
  const int units = plan.units();
  // Children per unit: the ranks under it and the units below it that the call reaches.
  std::vector<int> kids(static_cast<size_t>(units), 0);
  std::vector<bool> used(static_cast<size_t>(units), false);
  int root = -1;
  for (int r : ranks) {
    const int a = r < static_cast<int>(plan.leaf_of_rank.size()) ? plan.leaf_of_rank[r] : -1;
    if (a < 0)
      throw std::invalid_argument(fmt::format(
          "rank {}'s switch has no aggregation unit (switch.aggregation.enabled on its chip)", r));
    ++kids[a];
    int u = a;
    while (!used[u]) {
      used[u] = true;
      if (plan.parent[u] < 0) break;
      ++kids[plan.parent[u]];
      u = plan.parent[u];
    }
    while (plan.parent[u] >= 0) u = plan.parent[u];
    if (root >= 0 && u != root)
      throw std::invalid_argument(
          fmt::format("ranks {} and {} hang under different root units ({} and {}): no common tree",
                      ranks[0], r, plan.name[root], plan.name[u]));
    root = u;
  }
  // Drop the units with one child: the rank or unit below goes to the nearest one kept.
  auto kept = [&](int a) { return used[a] && kids[a] >= 2; };
  auto above = [&](int a) {  // the nearest kept unit above a's child slot at unit a
    while (a >= 0 && !kept(a)) a = plan.parent[a];
    return a;
  };
  ReductionTree t;
  const auto n = static_cast<int>(ranks.size());
  std::vector<int> node_of(static_cast<size_t>(units), -1);
  t.rank = ranks;
  t.unit.assign(static_cast<size_t>(n), -1);
  for (int a = 0; a < units; ++a)
    if (kept(a)) {
      node_of[a] = static_cast<int>(t.rank.size());
      t.rank.push_back(plan.rank_of_unit(a));
      t.unit.push_back(a);
    }
  t.parent.assign(t.rank.size(), -1);
  t.children.resize(t.rank.size());
  for (size_t i = 0; i < t.rank.size(); ++i) {
    const int a =
        t.unit[i] < 0 ? above(plan.leaf_of_rank[ranks[i]]) : above(plan.parent[t.unit[i]]);
    if (a < 0) {
      t.root = static_cast<int>(i);
      continue;
    }
    t.parent[i] = node_of[a];
    t.children[node_of[a]].push_back(static_cast<int>(i));
  }
  return t;
}

}  // namespace fabricsim::workload
