// The `workload:` section: collectives run by the ranks over the NICs (traffic.pattern workload).
//
// Not hardware: what the job does. Today one collective (nccl-tests style: `collective` of
// `bytes` on every rank, `iterations` times back to back, `compute` of GPU time before each);
// text workloads and Chakra traces come next (issue #18). Rank r runs on host r.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/units.h"
#include "models/config/config.h"
#include "models/workload/exec_graph.h"

namespace fabricsim::workload {

struct WorkloadConfig : config::Configurable {
  std::string collective;  // a registered algorithm
  Bytes bytes;
  int64_t ranks = 0;  // 0: every host
  int64_t channels = 1;
  Bytes chunk;  // 0: one message per step and channel
  int64_t root = 0;
  int64_t iterations = 1;
  Time compute;      // GPU time on every rank before each iteration
  std::string verb;  // the messages' verb: write_imm | write | send
  int64_t tc = 0;
  int64_t straggler_rank = -1;
  double straggler_slowdown = 1.0;

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
};

// The job's graph: `ranks` ranks (the config's, or `hosts` when 0), every iteration's collective
// a span. Throws std::invalid_argument naming the key for what the collective refuses.
ExecGraph build_workload(const WorkloadConfig& cfg, int hosts);

}  // namespace fabricsim::workload
