#include "models/workload/workload_config.h"

#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "models/workload/collective.h"

namespace fabricsim::workload {

#define FABRICSIM_WORKLOAD_FORMAT(id) FABRICSIM_REGISTER_WORKLOAD_FORMAT(id);
#include "fabricsim_workload_formats.inc"
#undef FABRICSIM_WORKLOAD_FORMAT

const WorkloadFormats& WorkloadFormats::global() {
  static const WorkloadFormats r = [] {
    WorkloadFormats reg;
#define FABRICSIM_WORKLOAD_FORMAT(id) register_workload_format_##id(reg);
#include "fabricsim_workload_formats.inc"
#undef FABRICSIM_WORKLOAD_FORMAT
    return reg;
  }();
  return r;
}

void WorkloadConfig::visit(config::Visitor& v) {
  v.choice("format", format, "collective", {"collective", "text", "chakra"},
           "Where the ranks' programs come from: collective (default: the keys below, "
           "nccl-tests style), text (a workload file of layers: docs/trace-format.md) or "
           "chakra (Chakra execution traces, one .et file per rank).");
  v.param("file", file, "",
          "text, chakra: the workload file (relative paths from the configuration file's "
          "folder); chakra: a rank's file with the rank number replaced by {rank} "
          "(e.g. traces/chakra/allreduce.{rank}.et), or a folder of <name>.<rank>.et files.");
  v.choice("collective", collective, "allreduce_ring", CollectiveRegistry::global().names(),
           "The collective every rank runs (a registered algorithm: models/workload/coll_*.cpp), "
           "nccl-tests style. alltoallv_direct needs per-pair sizes: not from this section.");
  v.param("bytes", bytes, Bytes(64ull << 20), Bytes(1), Bytes(64ull << 30),
          "S, as nccl-tests counts it: each rank's buffer (all-reduce, reduce-scatter input, "
          "all-gather output, broadcast data, all-to-all send buffer). Default 64 MiB.");
  v.param("sweep_to", sweep_to, Bytes(0), Bytes(0), Bytes(64ull << 30),
          "A size sweep in one run, as nccl-tests' -b/-e/-f: the collective at bytes, "
          "bytes x sweep_factor, ... up to this size (each `iterations` times, one after the "
          "other); collectives.csv has a row per call (scripts/plot_busbw.py draws busbw "
          "against size). 0 (default): bytes only.");
  v.param("sweep_factor", sweep_factor, 2, 2, 1024, "",
          "The sweep's size multiplier (nccl-tests' -f), default 2.");
  v.param("ranks", ranks, 0, 0, 1 << 20, "ranks",
          "Ranks of the job, rank r on host r; 0 (default): one per host.");
  v.choice("placement", placement, "linear", {"linear", "rail"},
           "Which host (NIC) each rank runs on: linear (rank r on host r: a server's GPUs are "
           "consecutive ranks) or rail (rail_optimized / rail_only topologies: consecutive ranks "
           "on the same rail across servers, rank r on server r mod servers, GPU r / servers, "
           "so that a ring over all ranks stays on a rail but for one hop per rail).");
  v.param("channels", channels, 1, 1, 64, "channels",
          "Parallel instances of the algorithm, each on its own QP between two ranks (NCCL's "
          "channels): at most nic.qps_per_pair.");
  // NCCL's Simple-protocol step: NCCL_BUFFSIZE 4 MiB (src/init.cc) / NCCL_STEPS 8
  // (src/include/device.h), its broadcast and tree slice (docs/hardware-facts.md).
  v.param("chunk", chunk, Bytes(512ull << 10), Bytes(0), Bytes(1ull << 31),
          "Pipelining: each step's data cut into slices of at most this many bytes, a slice "
          "forwarded as soon as it has arrived. Default 512KiB, NCCL's step (NCCL_BUFFSIZE "
          "4 MiB / NCCL_STEPS 8 [V]: its broadcast and tree slice; its ring all-reduce, "
          "all-gather and reduce-scatter send 2 steps, 1 MiB, a slice); 0: no pipelining, one "
          "message per step and channel.");
  v.param("group_size", group_size, 0, 0, 1 << 20, "ranks",
          "Communicators: the collective runs in every group of this many ranks at once (tensor "
          "or expert parallel groups), each its own call (a row of collectives.csv, bus "
          "bandwidth over the group); 0 (default): one communicator of every rank.");
  v.param("group_stride", group_stride, 1, 1, 1 << 20, "ranks",
          "Ranks apart within a group: 1 (default) groups consecutive ranks (a server's GPUs), "
          "the tensor-parallel size groups across servers (data parallel). group_size x "
          "group_stride must divide the ranks; the groups are as the text format's "
          "communicators (docs/trace-format.md).");
  v.param("root", root, 0, 0, 1 << 20, "rank",
          "broadcast: the root rank (with group_size: its index within each group).");
  v.param("iterations", iterations, 1, 1, 100000, "",
          "The collective this many times, each after the previous one on every rank.");
  v.param("compute", compute, Time(), Time(), Time::us(1000000000),
          "GPU time on every rank before each iteration's collective (0: none).");
  v.choice("verb", verb, "write_imm", {"write_imm", "write", "send"},
           "The verb of the collective's messages: write_imm (default: the receiver gets a "
           "completion, as NCCL's IB transport signals it), write, send.");
  v.param("tc", tc, 0, 0, 15, "class", "Traffic class of the messages.");
  v.param("straggler_rank", straggler_rank, -1, -1, 1 << 20, "rank",
          "A rank whose compute is slower (-1: none).");
  v.param("straggler_slowdown", straggler_slowdown, 1.0, 1.0, 1000.0, "",
          "The straggler's compute time factor.");
}

void WorkloadConfig::validate(const config::Checker& c) const {
  c.require(group_size != 1, "group_size", "a communicator needs 2 or more ranks (0: all)");
  c.require(group_size == 0 || root < group_size, "root",
            "must be an index within a group (below workload.group_size)");
  c.require(sweep_to.count() == 0 || sweep_to.count() >= bytes.count(), "sweep_to",
            "below workload.bytes (" + bytes.str() + "): the sweep goes up from bytes");
  c.require(format == "collective" || !file.empty(), "file",
            "format " + format + " reads a workload file: give workload.file");
  c.require(format != "collective" || file.empty(), "file",
            "a workload file is read with format text or chakra, not collective");
  if (format != "collective") return;
  c.require(collective != "alltoallv_direct", "collective",
            "alltoallv_direct takes per-pair sizes, which this section cannot give (use "
            "alltoall_direct, or a workload file when it comes)");
}

ExecGraph build_workload(const WorkloadConfig& cfg, int hosts, const std::string& base_dir) {
  if (cfg.format != "collective") {
    std::string path = cfg.file;
    if (!base_dir.empty() && !path.empty() && path.front() != '/') path = base_dir + "/" + path;
    const WorkloadFormatEntry* f = WorkloadFormats::global().find(cfg.format);
    if (!f) throw std::invalid_argument("workload.format " + cfg.format + ": not built yet");
    return f->read(path, cfg, hosts);
  }
  const int n = cfg.ranks ? static_cast<int>(cfg.ranks) : hosts;
  ExecGraph g(n + (cfg.innet ? cfg.innet->units() : 0));  // the units' ranks after the job's
  // The communicators: every rank, or groups of workload.group_size.
  std::vector<std::vector<int>> groups;
  if (cfg.group_size == 0) {
    groups.emplace_back(static_cast<size_t>(n));
    std::iota(groups[0].begin(), groups[0].end(), 0);
  } else {
    try {
      groups = communicator_groups(n, static_cast<int>(cfg.group_size),
                                   static_cast<int>(cfg.group_stride));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("workload.group_size, workload.group_stride: ") +
                                  e.what());
    }
  }
  CollectiveCall c;
  c.bytes = cfg.bytes.count();
  c.channels = static_cast<int>(cfg.channels);
  c.chunk_bytes = cfg.chunk.count();
  c.root = static_cast<int>(cfg.root);
  c.innet = cfg.innet.get();
  if (!cfg.rank_domain.empty()) c.domain = &cfg.rank_domain;
  c.scale_up_reduce = cfg.scale_up_reduce;
  RankNodes after(static_cast<size_t>(n));
  // The sizes: bytes, or the sweep from bytes up to sweep_to.
  std::vector<uint64_t> sizes = {cfg.bytes.count()};
  if (cfg.sweep_to.count())
    while (sizes.back() <= cfg.sweep_to.count() / static_cast<uint64_t>(cfg.sweep_factor))
      sizes.push_back(sizes.back() * static_cast<uint64_t>(cfg.sweep_factor));
  for (const uint64_t size : sizes) {
    c.bytes = size;
    const size_t first = g.size();
    for (int64_t it = 0; it < cfg.iterations; ++it) {
      // The other iterations of this size add what the first did: counted before they are built.
      if (it == 1)
        g.require(count_product({g.size() - first, static_cast<uint64_t>(cfg.iterations - 1)}),
                  fmt::format("workload.iterations {}: {} more of {} nodes", cfg.iterations,
                              cfg.iterations - 1, g.size() - first));
      g.begin_iteration();
      if (cfg.compute > Time())
        for (int r = 0; r < n; ++r) {
          const uint32_t x = g.add_compute(r, cfg.compute, after[r]);
          after[r] = {x};
        }
      const std::string name = sizes.size() > 1 ? fmt::format("{}@{}#{}", cfg.collective, size, it)
                                                : fmt::format("{}#{}", cfg.collective, it);
      // Every group's call, each after its own ranks' previous work (the groups run at once).
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        c.ranks = groups[gi];
        c.name = groups.size() > 1 ? fmt::format("{}@g{}", name, gi) : name;
        RankNodes start(c.ranks.size());
        for (size_t i = 0; i < c.ranks.size(); ++i) start[i] = after[c.ranks[i]];
        const RankNodes done = add_collective(g, cfg.collective, c, start);
        for (size_t i = 0; i < c.ranks.size(); ++i) after[c.ranks[i]] = done[i];
      }
    }
  }
  g.finalize();
  return g;
}

}  // namespace fabricsim::workload
