// occupancy.csv, streamed while the run goes: the buffer occupancy time series of every switch.
//
// Not hardware: the results side of the switches' occupancy sampling
// (SwitchCore::set_occupancy_interval). Every switch samples at the same instants, k x
// stats.occupancy_interval; a row of the file is one instant: time_ns, total_bytes (over all
// switches), then every switch's egress ports, switch by switch. A switch takes its samples
// lazily (at its next buffer change), so an instant's row can be written only once every switch
// has passed it. The runner calls advance(now) between sc_start calls, when every cycle before
// `now` has run in every switch: the writer has each switch take its samples before `now`,
// writes the rows they all have, and releases them. The runner lets at most max_step() of
// simulated time pass between calls, so a switch never holds more than a batch of samples (about
// 4 MB of values in all): memory does not grow with simulated time, and the file is written in
// large blocks as it goes.
//
// The file is written as occupancy.csv.part and renamed to occupancy.csv by finish(): a run
// stopped by a signal still finishes it (whole, up to where the run stopped). `fabricsim run`
// writes it in the run's private folder, published with the other result files as one set
// (output_dir.h), so a crash or a full disk leaves the previous set, never a truncated file.
// The bytes are those the report used to write at the end: "{:.3f}" of the time in ns, then
// integers. The cores hand over cells; the writer multiplies the nonzero ones into bytes and
// writes the zeros of idle ports four at a time (a lightly loaded switch's row is mostly zeros).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "models/common/units.h"
#include "models/switch/switch_core.h"

namespace fabricsim::sim {

// The column names after time_ns and total_bytes: portN_bytes for one switch, SWITCH.portN_bytes
// for several.
std::vector<std::string> occupancy_columns(const std::vector<std::string>& switch_names, int ports);
// The same with each switch's own port count (switch kinds).
std::vector<std::string> occupancy_columns(const std::vector<std::string>& switch_names,
                                           const std::vector<int>& ports);

// Writes t in nanoseconds with three decimals, exactly as fmt "{:.3f}" formats t.as_ns(), at
// `out` (which must have room for 32 characters); returns the end. Whole picoseconds (every
// interval in practice) take an integer path that needs no floating-point formatting.
char* format_time_ns(char* out, Time t);

// Where a switch's samples come from: its core (CoreOccupancy), or under MPI the rank that runs
// it (models/sim/mpi_partition.cpp). The same members as SwitchCore's.
class OccupancySource {
 public:
  virtual ~OccupancySource() = default;
  virtual const std::string& name() const = 0;
  virtual void set_occupancy_interval(Time interval) = 0;
  virtual void take_occupancy_samples_before(Time t) = 0;
  virtual int64_t occupancy_first() const = 0;
  virtual int64_t occupancy_cell_bytes() const = 0;
  virtual size_t occupancy_pending() const = 0;
  virtual size_t occupancy_row_size() const = 0;
  virtual const int64_t* occupancy_row(size_t k) const = 0;
  virtual void release_occupancy(size_t count) = 0;
};

class CoreOccupancy : public OccupancySource {
 public:
  explicit CoreOccupancy(sw::SwitchCore* c) : c_(c) {}
  const std::string& name() const override { return c_->name(); }
  void set_occupancy_interval(Time i) override { c_->set_occupancy_interval(i); }
  void take_occupancy_samples_before(Time t) override { c_->take_occupancy_samples_before(t); }
  int64_t occupancy_first() const override { return c_->occupancy_first(); }
  int64_t occupancy_cell_bytes() const override { return c_->occupancy_cell_bytes(); }
  size_t occupancy_pending() const override { return c_->occupancy_pending(); }
  size_t occupancy_row_size() const override { return c_->occupancy_row_size(); }
  const int64_t* occupancy_row(size_t k) const override { return c_->occupancy_row(k); }
  void release_occupancy(size_t count) override { c_->release_occupancy(count); }

 private:
  sw::SwitchCore* c_;
};

class OccupancyWriter {
 public:
  // Values the switches may hold between two advance() calls (4 MB of int64).
  static constexpr size_t kBatchValues = size_t{1} << 19;

  // Sets `interval` as every core's sampling interval (0: no samples, the file has its header
  // only) and opens `path`.part. `columns`: the per-port column names (occupancy_columns), one
  // per port of every core in order. Throws std::runtime_error if the file cannot be written.
  // At most `max_values` values are written (rows x values a row): past them the cores stop
  // sampling and the file ends there (capped_at()), so that a long drain (a workload's run, a
  // stuck fabric up to sim.drain_limit) cannot fill the disk.
  OccupancyWriter(std::vector<sw::SwitchCore*> cores, const std::vector<std::string>& columns,
                  Time interval, std::string path, size_t batch_values = kBatchValues,
                  double max_values = kMaxValues);
  // The same from sources (not owned), one per switch in order.
  OccupancyWriter(std::vector<OccupancySource*> sources, const std::vector<std::string>& columns,
                  Time interval, std::string path, size_t batch_values = kBatchValues,
                  double max_values = kMaxValues);
  // The values a run may write (sim.duration's samples are checked against it before the run).
  static constexpr double kMaxValues = 64e6;
  // Without finish() (an exception ended the run): removes the .part file.
  ~OccupancyWriter();
  OccupancyWriter(const OccupancyWriter&) = delete;
  OccupancyWriter& operator=(const OccupancyWriter&) = delete;

  // The longest stretch of simulated time between two advance() calls (Time::max(): any).
  Time max_step() const { return max_step_; }
  // Every cycle before `now` has run in every core: writes the rows of the instants before it.
  void advance(Time now);
  // The run stopped at `end`: writes the remaining rows, up to and including the instant `end`,
  // and renames the file over `path`. Throws std::runtime_error if it cannot be written.
  void finish(Time end);
  // Rows written so far (for tests).
  int64_t rows() const { return next_; }
  // The first instant not written because the cap was reached (Time::max(): not reached).
  Time capped_at() const { return capped_ ? interval_ * next_ : Time::max(); }

 private:
  OccupancyWriter(std::vector<OccupancySource*> sources, const std::vector<std::string>& columns,
                  Time interval, std::string path, size_t batch_values, double max_values,
                  std::vector<std::unique_ptr<OccupancySource>> owned);
  void write_rows(size_t rows);
  void flush();
  [[noreturn]] void fail();
  void close_and_remove();

  std::vector<std::unique_ptr<OccupancySource>> owned_;  // the cores' adapters
  std::vector<OccupancySource*> cores_;
  Time interval_;
  std::string path_, part_;
  std::FILE* file_ = nullptr;
  Time max_step_ = Time::max();
  int64_t next_ = 0;       // the next sample (row) to write
  int64_t max_rows_ = 0;   // rows the cap allows
  bool capped_ = false;    // the cap was reached: no more samples
  size_t row_chars_ = 0;   // room a row may need
  std::vector<char> buf_;  // formatted rows waiting for the file
  size_t used_ = 0;
};

}  // namespace fabricsim::sim
