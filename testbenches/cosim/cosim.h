// The RTL co-simulation harness: drives a C++ reference model and its Verilated RTL through the
// same interface with the same stimulus, cycle by cycle, and compares every output each cycle.
//
// Per block (cosim_<block>.cpp) a Bench owns the model, the RTL adapter and a seeded stimulus
// generator with directed, random and constrained-random phases; this file holds what every
// block shares: the options, the mismatch collector (Checker), the coverage bins and the driver
// (run_cosim) that runs the bench, re-runs the deterministic stimulus to dump a waveform window
// around the first mismatch, and prints the verdict. See docs/cosim.md.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim::cosim {

struct Options {
  uint64_t cycles = 1000000;
  uint64_t seed = 1;
  std::string trace;           // full-run FST waveform ("" = none)
  std::string mismatch_trace;  // FST around the first mismatch ("" = <block>-mismatch.fst)
  bool window_trace = true;    // dump the mismatch window at all
  uint64_t window = 50;        // cycles before and after the first mismatch
  bool mutant = false;         // co-simulate the block's mutant (checker self-test)
  int variant = 1;             // which mutant, 1 .. Block::mutants
};

struct Mismatch {
  uint64_t cycle;
  std::string signal;
  uint64_t expected;
  uint64_t got;
};

// Collects mismatches instead of stopping at the first: keeps the first kKeep verbatim, counts all.
class Checker {
 public:
  static constexpr size_t kKeep = 20;
  explicit Checker(uint64_t seed) : seed_(seed) {}

  // Compares one signal (index >= 0: element of an array signal); returns expected == got.
  bool check(uint64_t cycle, const char* signal, int index, uint64_t expected, uint64_t got) {
    if (expected == got) return true;
    record(cycle, signal, index, expected, got);
    return false;
  }
  uint64_t count() const { return count_; }
  uint64_t first_cycle() const { return first_cycle_; }
  uint64_t seed() const { return seed_; }
  const std::vector<Mismatch>& kept() const { return kept_; }

 private:
  void record(uint64_t cycle, const char* signal, int index, uint64_t expected, uint64_t got);
  uint64_t seed_;
  uint64_t count_ = 0;
  uint64_t first_cycle_ = 0;
  std::vector<Mismatch> kept_;
};

// Named functional-coverage bins (hit counters).
class Coverage {
 public:
  // Returns the bin's index; hit(index) counts it.
  int add(std::string name) {
    bins_.push_back({std::move(name), 0});
    return static_cast<int>(bins_.size()) - 1;
  }
  void hit(int bin, uint64_t n = 1) { bins_[static_cast<size_t>(bin)].count += n; }
  struct Bin {
    std::string name;
    uint64_t count;
  };
  const std::vector<Bin>& bins() const { return bins_; }
  int missed() const {
    int m = 0;
    for (const auto& b : bins_) m += b.count == 0;
    return m;
  }

 private:
  std::vector<Bin> bins_;
};

// What a bench reports after a run.
struct RunStats {
  uint64_t cycles = 0;
  uint64_t transactions = 0;
};

// One block's bench, as the driver sees it. `trace`: when non-empty, dump the RTL (with the
// model's exp_* values) to this FST for cycles [trace_from, trace_to).
struct TraceSpec {
  std::string path;
  uint64_t from = 0;
  uint64_t to = UINT64_MAX;
};
using BenchFn = std::function<RunStats(const Options&, const TraceSpec&, Checker&, Coverage&)>;

struct Block {
  std::string name;
  std::string description;
  BenchFn run;
  int mutants = 1;  // mutant RTL variants (--mutant --variant 1..mutants)
};
const std::vector<Block>& blocks();

struct Result {
  RunStats stats;
  uint64_t mismatches = 0;
  uint64_t first_mismatch = 0;
  int coverage_missed = 0;
  std::string window_trace;  // written FST, if any
  std::string verdict;
};

// Runs `block` (one of blocks()), printing mismatches, coverage and the verdict line to `out`.
// Throws std::invalid_argument for an unknown block or a mutant variant it does not have.
Result run_cosim(const std::string& block, const Options& opt, std::ostream& out);

}  // namespace fabricsim::cosim
