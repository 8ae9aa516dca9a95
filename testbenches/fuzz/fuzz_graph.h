// What the workload fuzz targets (workload_text_fuzz.cpp, chakra_fuzz.cpp) require of a graph a
// reader accepted: well formed, and runnable to its end. A finding aborts with the reason.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "models/workload/exec_graph.h"
#include "models/workload/ideal_network.h"
#include "models/workload/workload_engine.h"

namespace fabricsim::fuzz {

[[noreturn]] inline void graph_finding(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

// The fuzz targets' graph limit: a 4 KB input may ask for the run's 16M nodes (iterations
// 1000000), which is allowed but not what a fuzzer's 2 GB and 10 s are for.
constexpr uint64_t kFuzzGraphNodes = 200000;

// Every dependency earlier, every message 1 B to 2 GiB to another rank and matched with a
// receive of its size, spans within the graph; then the graph runs to its end on the ideal
// network (a deadlock is a cycle the reader should have refused).
inline void check_graph(const char* target, const workload::ExecGraph& g) {
  using workload::NodeKind;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const workload::Node& n = g.node(i);
    if (n.rank < 0 || n.rank >= g.ranks()) graph_finding(target, "a node's rank is out of range");
    for (uint32_t d = n.dep_begin; d < n.dep_end; ++d)
      if (g.deps()[d] >= i) graph_finding(target, "a node depends on a later one");
    if (n.kind == NodeKind::kCompute) continue;
    if (n.bytes < 1 || n.bytes > workload::kMaxWorkloadBytes)
      graph_finding(target, "a message of " + std::to_string(n.bytes) + " B");
    if (n.peer < 0 || n.peer >= g.ranks() || n.peer == n.rank)
      graph_finding(target, "a message to no other rank");
    const uint32_t m = g.match(i);
    if (m >= g.size() || g.match(m) != i || g.node(m).bytes != n.bytes || g.node(m).kind == n.kind)
      graph_finding(target, "a message without its matched counterpart");
  }
  for (const workload::Span& s : g.spans())
    if (s.first > s.last || s.last > g.size()) graph_finding(target, "a span outside the graph");
  // Run only what fits the clock: all the work one after another (computes, every byte at
  // 400 Gb/s, a microsecond a message) within 5000 s of the femtosecond clock's 9223.
  double work_s = 0;
  for (const workload::Node& n : g.nodes())
    work_s += n.kind == NodeKind::kCompute ? n.duration.as_s()
                                           : static_cast<double>(n.bytes) * 8 / 400e9 + 1e-6;
  if (work_s > 5000) return;
  workload::IdealNetwork net(g.ranks(), BitRate::gbps(400), Time::ns(1000));
  workload::WorkloadEngine e(g, net);
  net.run(e);
  if (!e.finished())
    graph_finding(target, std::to_string(e.unfinished()) + " of " + std::to_string(g.size()) +
                              " nodes never finished on the ideal network");
}

}  // namespace fabricsim::fuzz
