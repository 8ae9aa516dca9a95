#include "models/workload/collective.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "models/traffic/text_fields.h"

namespace fabricsim::workload {

#define FABRICSIM_COLLECTIVE(id) FABRICSIM_REGISTER_COLLECTIVE(id);
#include "fabricsim_collectives.inc"
#undef FABRICSIM_COLLECTIVE

const CollectiveRegistry& CollectiveRegistry::global() {
  static const CollectiveRegistry r = [] {
    CollectiveRegistry reg;
#define FABRICSIM_COLLECTIVE(id) register_collective_##id(reg);
#include "fabricsim_collectives.inc"
#undef FABRICSIM_COLLECTIVE
    return reg;
  }();
  return r;
}

uint64_t count_product(std::initializer_list<uint64_t> counts) {
  uint64_t p = 1;
  for (const uint64_t c : counts)
    if (__builtin_mul_overflow(p, c, &p)) return UINT64_MAX;
  return p;
}

uint64_t piece(uint64_t total, uint64_t parts, uint64_t i) {
  return total / parts + (i < total % parts ? 1 : 0);
}

std::vector<std::vector<int>> communicator_groups(int ranks, int size, int stride) {
  if (size < 1 || stride < 1 || ranks % (size * stride) != 0)
    throw std::invalid_argument(fmt::format(
        "groups of {} ranks {} apart do not tile {} ranks (size x stride must divide them)", size,
        stride, ranks));
  std::vector<std::vector<int>> out;
  for (int base = 0; base < ranks; base += size * stride)
    for (int off = 0; off < stride; ++off) {
      std::vector<int> g;
      for (int j = 0; j < size; ++j) g.push_back(base + off + j * stride);
      out.push_back(std::move(g));
    }
  return out;
}

RankNodes add_collective(ExecGraph& g, const std::string& algorithm, const CollectiveCall& c,
                         const RankNodes& start) {
  const CollectiveEntry& e = CollectiveRegistry::global().at(algorithm);
  const auto n = static_cast<int>(c.ranks.size());
  auto bad = [&](const std::string& why) {  // (the name clipped: a trace's may be KBs long)
    return std::invalid_argument(
        fmt::format("collective {} ({}): {}", traffic::shown(c.name), algorithm, why));
  };
  if (n < 2) throw bad(fmt::format("a communicator of {} rank(s); it needs 2 or more", n));
  std::set<int> seen;
  for (int r : c.ranks) {
    if (r < 0 || r >= g.ranks())
      throw bad(fmt::format("rank {} is outside the job's {} ranks", r, g.ranks()));
    if (!seen.insert(r).second) throw bad(fmt::format("rank {} appears twice", r));
  }
  if (c.channels < 1 || c.channels > 64)
    throw bad(fmt::format("{} channels (1 to 64)", c.channels));
  if (!start.empty() && static_cast<int>(start.size()) != n)
    throw bad("start nodes for a different number of ranks");
  if (const std::string why = e.refuse(c); !why.empty()) throw bad(why);
  RankNodes none(static_cast<size_t>(n)), done(static_cast<size_t>(n));
  g.begin_span(c.name, algorithm, n, c.bytes, e.bus_factor(n));
  try {
    e.build(g, c, start.empty() ? none : start, done);
  } catch (const std::invalid_argument& x) {
    throw bad(x.what());
  }
  g.end_span();
  return done;
}

void ring_pass(ExecGraph& g, const CollectiveCall& c, int steps,
               const std::function<uint64_t(int k, int i)>& block, const RankNodes& start,
               RankNodes& done, int step_base, const std::vector<std::vector<int>>* rings) {
  const auto n = static_cast<int>(c.ranks.size());
  const auto ch = static_cast<uint64_t>(c.channels);
  if (rings) {  // each a permutation of the positions (a caller's bug otherwise)
    if (rings->size() != ch)
      throw std::invalid_argument(fmt::format("{} rings for {} channels", rings->size(), ch));
    for (const auto& r : *rings) {
      std::vector<bool> seen(static_cast<size_t>(n));
      size_t distinct = 0;
      for (const int i : r)
        if (i >= 0 && i < n && !seen[static_cast<size_t>(i)]) {
          seen[static_cast<size_t>(i)] = true;
          ++distinct;
        }
      if (distinct != static_cast<size_t>(n) || r.size() != static_cast<size_t>(n))
        throw std::invalid_argument("a channel's ring is not a permutation of the ranks");
    }
  }
  // The position at index i of channel x's ring.
  auto pos = [&](uint64_t x, int i) { return rings ? (*rings)[x][static_cast<size_t>(i)] : i; };
  // Slices per step: enough that no slice of the largest block exceeds chunk_bytes.
  uint64_t largest = 0;
  for (int k = 0; k < steps; ++k)
    for (int i = 0; i < n; ++i) largest = std::max(largest, block(k, i));
  const uint64_t per_channel = (largest + ch - 1) / ch;
  const uint64_t m =
      c.chunk_bytes ? std::max<uint64_t>(1, (per_channel + c.chunk_bytes - 1) / c.chunk_bytes) : 1;
  // Counted before the slices' tables are allocated (n x channels x slices entries each).
  g.require(count_product({2, static_cast<uint64_t>(steps), static_cast<uint64_t>(n), ch, m}),
            fmt::format("{} steps x {} ranks x {} channels x {} slices", steps, n, ch, m));
  // The previous step's receive at each rank, per channel and slice.
  std::vector<uint32_t> prev(static_cast<size_t>(n * ch * m), kNoNode), cur(prev.size());
  auto at = [&](int i, uint64_t x, uint64_t s) {
    return (static_cast<uint64_t>(i) * ch + x) * m + s;
  };
  std::vector<uint32_t> last_send(prev.size(), kNoNode);
  for (int k = 0; k < steps; ++k) {
    g.set_step(step_base + k);
    for (int p = 0; p < n; ++p) {
      const uint64_t b = block(k, p);
      for (uint64_t x = 0; x < ch; ++x) {
        const int i = pos(x, p), j = pos(x, (p + 1) % n);
        const uint64_t bx = piece(b, ch, x);
        for (uint64_t s = 0; s < m; ++s) {
          const uint64_t bytes = piece(bx, m, s);
          if (bytes == 0)
            throw std::invalid_argument(
                fmt::format("{} B cannot be cut into {} ranks' blocks x {} channels x {} slices",
                            c.bytes, n, ch, m));
          std::vector<uint32_t> deps =
              k == 0 ? start[static_cast<size_t>(i)] : std::vector<uint32_t>{prev[at(i, x, s)]};
          last_send[at(i, x, s)] =
              g.add_send(c.ranks[i], c.ranks[j], bytes, static_cast<int>(x), deps);
          cur[at(j, x, s)] =
              g.add_recv(c.ranks[j], c.ranks[i], bytes, static_cast<int>(x), start[j]);
        }
      }
    }
    std::swap(prev, cur);
  }
  for (int i = 0; i < n; ++i)
    for (uint64_t x = 0; x < ch; ++x)
      for (uint64_t s = 0; s < m; ++s) {
        done[i].push_back(prev[at(i, x, s)]);
        done[i].push_back(last_send[at(i, x, s)]);
      }
}

std::vector<std::vector<int>> domain_groups(const CollectiveCall& c, std::string& why) {
  if (!c.domain) {
    why = "needs scale-up domains (scale_up:) to split the ranks by";
    return {};
  }
  std::vector<std::vector<int>> groups;
  std::map<int, size_t> index;
  for (size_t i = 0; i < c.ranks.size(); ++i) {
    const int r = c.ranks[i];
    if (r < 0 || static_cast<size_t>(r) >= c.domain->size()) {
      why = fmt::format("rank {} has no scale-up domain", r);
      return {};
    }
    auto [it, fresh] = index.emplace((*c.domain)[static_cast<size_t>(r)], groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(static_cast<int>(i));
  }
  for (const auto& g : groups)
    if (g.size() != groups[0].size()) {
      why = fmt::format("its ranks span {} scale-up domains with unequal counts ({} and {})",
                        groups.size(), groups[0].size(), g.size());
      return {};
    }
  return groups;
}

std::vector<std::vector<int>> rail_rings(const std::vector<std::vector<int>>& groups,
                                         int channels) {
  const auto n_dom = static_cast<int>(groups.size());
  const auto gpus = static_cast<int>(groups.at(0).size());
  // Offsets of the groups' entries: neighbours differ (but for G = 2 with N odd, and N = 1).
  std::vector<int> shift(static_cast<size_t>(n_dom));
  for (int d = 0; d < n_dom; ++d) shift[static_cast<size_t>(d)] = d % 2;
  if (n_dom >= 3 && n_dom % 2 == 1) shift.back() = 2;
  std::vector<std::vector<int>> rings(static_cast<size_t>(channels));
  for (int x = 0; x < channels; ++x) {
    auto entry = [&](int d) { return (x + shift[static_cast<size_t>(d % n_dom)]) % gpus; };
    std::vector<int>& ring = rings[static_cast<size_t>(x)];
    for (int d = 0; d < n_dom; ++d) {
      const int a = entry(d);
      const int b = entry(d + 1) != a ? entry(d + 1) : (a + 1) % gpus;  // the exit
      const auto& members = groups[static_cast<size_t>(d)];
      ring.push_back(members[static_cast<size_t>(a)]);
      for (int k = 1; k < gpus; ++k)
        if (const int l = (a + k) % gpus; l != b) ring.push_back(members[static_cast<size_t>(l)]);
      if (b != a) ring.push_back(members[static_cast<size_t>(b)]);
    }
  }
  return rings;
}

void all_to_all(ExecGraph& g, const CollectiveCall& c, const std::vector<uint64_t>& sizes,
                const RankNodes& start, RankNodes& done) {
  const auto n = static_cast<int>(c.ranks.size());
  g.require(count_product({2, static_cast<uint64_t>(n), static_cast<uint64_t>(n - 1),
                           static_cast<uint64_t>(c.channels)}),
            fmt::format("an all-to-all of {} ranks x {} channels", n, c.channels));
  for (int i = 0; i < n; ++i)
    for (int k = 1; k < n; ++k) {
      const int j = (i + k) % n;
      for (int x = 0; x < c.channels; ++x) {
        const uint64_t out = piece(sizes[static_cast<size_t>(i) * n + j], c.channels, x);
        const uint64_t in = piece(sizes[static_cast<size_t>(j) * n + i], c.channels, x);
        if (out) done[i].push_back(g.add_send(c.ranks[i], c.ranks[j], out, x, start[i]));
        if (in) done[i].push_back(g.add_recv(c.ranks[i], c.ranks[j], in, x, start[i]));
      }
    }
}

void on_positions(
    const CollectiveCall& c, const std::vector<int>& who, uint64_t bytes, RankNodes& at,
    const std::function<void(const CollectiveCall&, const RankNodes&, RankNodes&)>& step) {
  CollectiveCall sub = c;
  sub.ranks.clear();
  sub.bytes = bytes;
  RankNodes start, done(who.size());
  for (const int i : who) {
    sub.ranks.push_back(c.ranks[static_cast<size_t>(i)]);
    start.push_back(at[static_cast<size_t>(i)]);
  }
  step(sub, start, done);
  for (size_t j = 0; j < who.size(); ++j) at[static_cast<size_t>(who[j])] = std::move(done[j]);
}

}  // namespace fabricsim::workload
