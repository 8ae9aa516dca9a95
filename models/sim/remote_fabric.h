// What the process that runs the kernel (MPI rank 0) needs of the switches other processes run,
// behind an interface so that the fabric builds without MPI (models/sim/mpi_partition.h
// implements it; docs/architecture.md, "MPI").
//
// Not hardware: the parallel run's bookkeeping. Rank 0's own copies of those switches never run;
// what the runner and the results read of them comes from here: counts between sc_start calls
// (the drain's packets in flight), commands the runner gives every switch (liveness samples, the
// window's start), and at the end each switch's report, checks, counters and spans.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/remote_side.h"
#include "models/common/span_log.h"
#include "models/common/units.h"
#include "models/link/link_module.h"

namespace fabricsim::sim {

class Fabric;
class OccupancySource;
struct SwitchReport;

// The MPI job this process belongs to (one process: rank 0 of 1).
struct MpiWorld {
  int rank = 0, size = 1;
};
inline MpiWorld g_mpi_world;

// Sums over some switches (and the switch-to-switch link directions they send on).
struct SwitchCounts {
  uint64_t dropped = 0, in_flight = 0, win_dropped = 0, win_in_flight = 0;
  uint64_t received = 0, departed = 0, active_cycles = 0;
  uint64_t link_frames = 0, link_lost = 0, link_win_lost = 0;
  void add(const SwitchCounts& o) {
    dropped += o.dropped;
    in_flight += o.in_flight;
    win_dropped += o.win_dropped;
    win_in_flight += o.win_in_flight;
    received += o.received;
    departed += o.departed;
    active_cycles += o.active_cycles;
    link_frames += o.link_frames;
    link_lost += o.link_lost;
    link_win_lost += o.link_win_lost;
  }
};

class RemoteFabric {
 public:
  virtual ~RemoteFabric() = default;
  // Side s's stand-in for the switches' scheduler (s >= 1).
  virtual RemoteSide* side(int s) = 0;
  // The earliest first bit of a frame on a watched wire of the other ranks' switches, as they
  // last reported (Time::max(): none).
  virtual Time oldest_watched_frame() const = 0;
  // Switch s's occupancy samples (occupancy.csv), taken where it runs.
  virtual OccupancySource* occupancy(int s) = 0;
  // Their counts now (between sc_start calls; after finish(), the final ones).
  virtual SwitchCounts counts() = 0;
  virtual void sample_progress(Time now) = 0;
  virtual void open_window() = 0;
  // The end of the run: each rank closes its switches' windows at `end` and sends its switches'
  // reports (loads over a window of `window_s` seconds), checks, counters and spans.
  virtual void finish(Time end, double window_s) = 0;
  virtual const SwitchReport& switch_report(int s) const = 0;
  // A direction (0: a to b) of switch-to-switch wire `wire` that another rank's switch sends on:
  // its counters there (null: a direction rank 0 runs).
  virtual const link::LinkModule::Counters* link_counters(int wire, int dir) const = 0;
  // Switch s's violations of check `which` (0: packets and cells, 1: progress, 2: flow control).
  virtual const std::vector<std::string>& violations(int s, int which) const = 0;
  // Their counters over rank 0's (the same names: their values replace the stale ones).
  virtual void merge_counters(nlohmann::json& counters) const = 0;
  // Their spans flushed at the end, per side, into `per_side` (in device order per side).
  virtual void take_spans(std::vector<stats::SpanLog>& per_side) = 0;
  // Message counts for perf.json: exchanges with the other ranks and bytes sent and received.
  virtual uint64_t exchanges() const = 0;
  virtual uint64_t bytes() const = 0;
  // The other ranks' CPU seconds (after finish()); rank 0's wall seconds waiting for their
  // answers; the longest any other rank spent serving rank 0's commands (not waiting for them).
  virtual double cpu_s() const = 0;
  virtual double wait_s() const = 0;
  virtual double busy_s() const = 0;
};

// Set by mpi_partition.cpp when MPI is built: rank 0's stand-in for the other ranks.
inline std::unique_ptr<RemoteFabric> (*g_make_remote_fabric)(Fabric&) = nullptr;

}  // namespace fabricsim::sim
