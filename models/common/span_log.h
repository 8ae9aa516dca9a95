// Flow-control spans and drop instants of a run, for timelines: a priority group's XOFF-to-XON at
// the port that receives (PFC), a priority's paused interval at the port that transmits, a virtual
// lane's credit stall, a packet dropped at admission. `fabricsim run` writes them to
// flow_events.csv, which scripts/timeline.py draws as spans and instants (docs/reports.md).
//
// Not hardware: part of the statistics facility (stats.h). Blocks report through a SpanSink (the
// log, and the device they report for); an interval is reported once it has closed, or by
// flush() at the end of the run while still open. Bounded: past `limit` records only the first
// `limit` in output order are kept (the others counted, stats.flow_events), so a long congested
// run cannot grow without end and the set kept does not depend on the order of the adds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <tuple>
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
  explicit SpanLog(uint64_t limit = 0)
      : limit_(limit), slack_(std::clamp<uint64_t>(limit, 1024, 1 << 20)) {}
  void add(SpanKind k, int device, int port, int cls, Time start, Time end) {
    const SpanRecord r{start, end, device, static_cast<int16_t>(port), static_cast<uint8_t>(cls),
                       k};
    if (limit_ == 0 || (full_ && !before(r, last_))) {
      ++not_recorded_;  // past the first `limit` records
      return;
    }
    records_.push_back(r);
    if (records_.size() > limit_ && records_.size() - limit_ >= slack_) trim();
  }
  // The records kept: past the limit, the first `limit` in output order (before(): by start,
  // then device, port, kind, class and end), whatever the order they were added in. The threads
  // and the host windows add them in orders of their own; the set kept is the same.
  const std::vector<SpanRecord>& records() const {
    trim();
    return records_;
  }
  // Output order (flow_events.csv).
  static bool before(const SpanRecord& a, const SpanRecord& b) {
    return std::tie(a.start, a.device, a.port, a.kind, a.cls, a.end) <
           std::tie(b.start, b.device, b.port, b.kind, b.cls, b.end);
  }
  // Threads: merges `other`'s records into this log's by device, stably. Each holds the
  // records of one window from one side's devices, in device order (a switch adds its records
  // as it runs, and a side's switches run in id order), so merging every side's log in turn
  // gives the one-thread order (the order of records() before it is sorted).
  void merge_by_device(SpanLog& other) {
    if (other.records_.empty() && other.not_recorded_ == 0) return;
    std::vector<SpanRecord> m;
    m.reserve(records_.size() + other.records_.size());
    std::merge(records_.begin(), records_.end(), other.records_.begin(), other.records_.end(),
               std::back_inserter(m),
               [](const SpanRecord& a, const SpanRecord& b) { return a.device < b.device; });
    records_.swap(m);
    other.records_.clear();
    not_recorded_ += other.not_recorded_;
    other.not_recorded_ = 0;
    trim();
  }
  // Threads: `other` holds what the switches added during a window (unbounded); its records go
  // in at `at`, this log's size when the window began, which is where a one-thread run adds
  // them (the window runs before the rest's events in its span).
  void splice(size_t at, SpanLog& other) {
    at = std::min(at, records_.size());  // (a trim since may have shortened the log)
    records_.insert(records_.begin() + static_cast<std::ptrdiff_t>(at), other.records_.begin(),
                    other.records_.end());
    other.records_.clear();
    not_recorded_ += other.not_recorded_;
    other.not_recorded_ = 0;
    trim();
  }
  uint64_t not_recorded() const {
    trim();
    return not_recorded_;
  }
  // MPI: empties the log (an unbounded one, whose records another process takes).
  void clear() { records_.clear(); }
  uint64_t limit() const { return limit_; }

 private:
  // Keeps the first `limit` records in output order, counts the rest, and from then on takes
  // only a record before the last kept (a bounded buffer: trimmed each `slack` records more).
  void trim() const {
    if (records_.size() <= limit_) return;
    const auto keep = records_.begin() + static_cast<std::ptrdiff_t>(limit_);
    std::nth_element(records_.begin(), keep, records_.end(), before);
    not_recorded_ += records_.size() - limit_;
    records_.erase(keep, records_.end());
    last_ = *std::max_element(records_.begin(), records_.end(), before);
    full_ = true;
  }

  uint64_t limit_;
  uint64_t slack_;  // records held past the limit before a trim
  // (Mutable: records() trims, so that a reader sees the records kept.)
  mutable std::vector<SpanRecord> records_;
  mutable uint64_t not_recorded_ = 0;
  mutable bool full_ = false;  // trimmed once: last_ is the last record kept
  mutable SpanRecord last_{};
};

// Threads whose devices move between them (DeviceScheduler::set_stealing): each thread's own log,
// set once per thread (null: none).
inline thread_local SpanLog* t_thread_log = nullptr;

// Where a block reports: nowhere (the default, and for a block outside a fabric), a log for a
// device, or (by_thread) for a device that may run on any thread, the log of the thread it runs
// on (t_thread_log). The order of a log's records does not matter: flow_events.csv is sorted, and
// past its limit a log keeps the first records in that order (SpanLog::records).
struct SpanSink {
  SpanLog* log = nullptr;
  int device = 0;
  bool by_thread = false;
  void add(SpanKind k, int port, int cls, Time start, Time end) const {
    if (SpanLog* l = by_thread ? t_thread_log : log) l->add(k, device, port, cls, start, end);
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
