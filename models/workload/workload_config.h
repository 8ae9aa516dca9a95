// The `workload:` section: collectives run by the ranks over the NICs (traffic.pattern workload).
//
// Not hardware: what the job does. Today one collective (nccl-tests style: `collective` of
// `bytes` on every rank, `iterations` times back to back, `compute` of GPU time before each);
// text workloads and Chakra traces come next (issue #18). Rank r runs on host r.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/registry.h"
#include "models/common/units.h"
#include "models/config/config.h"
#include "models/workload/exec_graph.h"
#include "models/workload/innet_plan.h"

namespace fabricsim::workload {

struct WorkloadConfig : config::Configurable {
  std::string format;      // collective | text | chakra
  std::string file;        // text, chakra: the workload file (chakra: a rank's file, see below)
  std::string collective;  // a registered algorithm
  Bytes bytes;
  Bytes sweep_to;  // 0: one size; else bytes, bytes x factor, ... up to this (nccl-tests' -e)
  int64_t sweep_factor = 2;
  int64_t ranks = 0;      // 0: every host
  std::string placement;  // linear | rail
  int64_t channels = 1;
  Bytes chunk;             // 0: one message per step and channel
  int64_t group_size = 0;  // 0: one communicator of every rank
  int64_t group_stride = 1;
  int64_t root = 0;
  int64_t iterations = 1;
  Time compute;      // GPU time on every rank before each iteration
  std::string verb;  // the messages' verb: write_imm | write | send
  int64_t tc = 0;
  int64_t straggler_rank = -1;
  double straggler_slowdown = 1.0;
  // Not a key: the most channels a call may use (nic.qps_per_pair; the fabric sets it).
  int64_t max_channels = 64;
  // Not a key: the switches' aggregation units (switch.aggregation; the fabric sets it), the
  // ranks after the job's in the graph.
  std::shared_ptr<const InNetworkPlan> innet;
  // Not a key: per rank, its scale-up domain (scale_up:; empty: none; the fabric sets it).
  std::vector<int> rank_domain;
  // Not a key: whether the scale-up switch reduces (scale_up.reduce; allreduce_nvls needs it).
  bool scale_up_reduce = false;

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
};

// Readers of workload files, by workload.format: one file each registers itself
// (FABRICSIM_REGISTER_WORKLOAD_FORMAT), listed in models/workload/CMakeLists.txt. `read` returns
// the finalized graph of the file at `path` (resolved), for `hosts` hosts.
struct WorkloadFormatEntry {
  std::string description;
  ExecGraph (*read)(const std::string& path, const WorkloadConfig& cfg, int hosts);
};

class WorkloadFormats {
 public:
  static const WorkloadFormats& global();
  void add(const std::string& name, WorkloadFormatEntry e) { entries_.add(name, std::move(e)); }
  const WorkloadFormatEntry* find(const std::string& name) const { return entries_.find(name); }

 private:
  Registry<WorkloadFormatEntry> entries_{"workload format"};
};

#define FABRICSIM_REGISTER_WORKLOAD_FORMAT(id) \
  void register_workload_format_##id(WorkloadFormats& registry)

// The job's graph: `ranks` ranks (the config's, or `hosts` when 0), every iteration's collective
// a span. Throws std::invalid_argument naming the key for what the collective refuses, and for a
// workload file, InputError naming the file and line or node. `base_dir`: what a relative
// `file` resolves against (the configuration file's folder).
ExecGraph build_workload(const WorkloadConfig& cfg, int hosts, const std::string& base_dir = "");

}  // namespace fabricsim::workload
