// Flow-control spans and drop instants of a run, for timelines: a priority group's XOFF-to-XON at
// the port that receives (PFC), a priority's paused interval at the port that transmits, a virtual
// lane's credit stall, a packet dropped at admission. `fabricsim run` writes them to
// flow_events.csv, which scripts/timeline.py draws as spans and instants (docs/reports.md).
//
// Not hardware: part of the statistics facility (stats.h). Blocks report through a SpanSink (the
// log, and the device they report for); an interval is reported once it has closed, or by
// flush() at the end of the run while still open. Bounded: past `limit` records further ones are
// only counted (stats.flow_events), so a long congested run cannot grow without end.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "models/common/units.h"

namespace fabricsim::stats {

enum class SpanKind : uint8_t { kXoff, kPaused, kCreditStall, kDrop };
const char* span_kind_name(SpanKind k);

struct SpanRecord {
  Time start, end;  // end == start: an instant
  int32_t device;   // the fabric's numbering: switches first, then hosts
  int16_t port;
  uint8_t cls;  // priority, or virtual lane (credit stalls)
  SpanKind kind;
};

class SpanLog {
 public:
  explicit SpanLog(uint64_t limit = 0) : limit_(limit) {}
  void add(SpanKind k, int device, int port, int cls, Time start, Time end) {
    if (records_.size() < limit_)
      records_.push_back(
          SpanRecord{start, end, device, static_cast<int16_t>(port), static_cast<uint8_t>(cls), k});
    else
      ++not_recorded_;
  }
  const std::vector<SpanRecord>& records() const { return records_; }
  // Threads: merges `other`'s records into this log's by device, stably. Each holds the
  // records of one window from one side's devices, in device order (a switch adds its records
  // as it runs, and a side's switches run in id order), so merging every side's log in turn
  // gives the one-thread order.
  void merge_by_device(SpanLog& other) {
    if (other.records_.empty()) return;
    std::vector<SpanRecord> m;
    m.reserve(records_.size() + other.records_.size());
    std::merge(records_.begin(), records_.end(), other.records_.begin(), other.records_.end(),
               std::back_inserter(m),
               [](const SpanRecord& a, const SpanRecord& b) { return a.device < b.device; });
    records_.swap(m);
    other.records_.clear();
    not_recorded_ += other.not_recorded_;
    other.not_recorded_ = 0;
  }
  // Threads: `other` holds what the switches added during a window (unbounded); its records go
  // in at `at`, this log's size when the window began, which is where a one-thread run adds
  // them (the window runs before the rest's events in its span). The limit then keeps the
  // first records, as it would have.
  void splice(size_t at, SpanLog& other) {
    records_.insert(records_.begin() + static_cast<std::ptrdiff_t>(at), other.records_.begin(),
                    other.records_.end());
    other.records_.clear();
    not_recorded_ += other.not_recorded_;
    other.not_recorded_ = 0;
    if (records_.size() > limit_) {
      not_recorded_ += records_.size() - limit_;
      records_.resize(limit_);
    }
  }
  uint64_t not_recorded() const { return not_recorded_; }
  // MPI: empties the log (an unbounded one, whose records another process takes).
  void clear() { records_.clear(); }
  uint64_t limit() const { return limit_; }

 private:
  uint64_t limit_;
  std::vector<SpanRecord> records_;
  uint64_t not_recorded_ = 0;
};

// Where a block reports: nowhere (the default, and for a block outside a fabric), or a log for a
// device.
struct SpanSink {
  SpanLog* log = nullptr;
  int device = 0;
  void add(SpanKind k, int port, int cls, Time start, Time end) const {
    if (log) log->add(k, device, port, cls, start, end);
  }
};

inline const char* span_kind_name(SpanKind k) {
  switch (k) {
    case SpanKind::kXoff:
      return "xoff";
    case SpanKind::kPaused:
      return "paused";
    case SpanKind::kCreditStall:
      return "credit_stall";
    case SpanKind::kDrop:
      return "drop";
  }
  return "?";
}

}  // namespace fabricsim::stats
