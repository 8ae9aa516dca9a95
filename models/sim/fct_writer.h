// fct.csv: one row per message the NICs were given, in id order, with its flow completion time
// and its slowdown (its FCT over its FCT alone on the idle fabric: idle_fabric.h), and the
// figures summary.json gives of them (the FCTs' histogram, the slowdowns).
//
// Not hardware: a results writer. Given a path, the rows go to that file through a 1 MiB buffer
// as they are made: while the run goes (NicArray::stream_fct, at the kernel's steps) and then the
// rest at its end (NicArray::for_each_fct). A run of 33.5 M messages made 4.2 GB of text, which
// the process needs no copy of. Without a path, into a string (tests, a run without an output
// folder).
//
// Plain C++, driven with the NICs' rows.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/nic/nic_array.h"
#include "models/sim/idle_fabric.h"

namespace fabricsim::sim {

class FctWriter {
 public:
  // `idle`: the slowdowns' denominators; `path`: fct.csv ("": text()). Writes the header; a
  // file that cannot be written is a std::runtime_error naming it, here or at a later row.
  FctWriter(std::unique_ptr<IdleFabric> idle, const std::string& path);
  ~FctWriter();
  FctWriter(const FctWriter&) = delete;
  FctWriter& operator=(const FctWriter&) = delete;

  // The next row (rows come in id order).
  void row(const nic::NicArray::Fct& r);
  // After the last row: the file written and closed.
  void finish();

  bool to_file() const { return !path_.empty(); }
  // The rows (no path), from the header on.
  std::string& text() { return text_; }
  // Completed messages: their FCTs (fs), and their slowdowns in row order.
  const stats::Histogram& fct() const { return fct_; }
  std::vector<double>& slowdowns() { return slowdowns_; }
  const IdleFabric& idle() const { return *idle_; }

 private:
  void flush(bool last);
  [[noreturn]] void fail(int err) const;

  std::unique_ptr<IdleFabric> idle_;
  std::string path_, text_;  // text_: the rows, or the file's buffer
  std::FILE* f_ = nullptr;
  stats::Histogram fct_{10};
  std::vector<double> slowdowns_;
};

}  // namespace fabricsim::sim
