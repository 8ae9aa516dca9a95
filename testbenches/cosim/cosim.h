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
#include <utility>
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

// The inputs a bench applied in one cycle (for the mismatch report), and the report's contents.
struct InputCycle {
  uint64_t cycle = 0;
  std::vector<std::pair<std::string, uint64_t>> values;
};

// Collects mismatches instead of stopping at the first: keeps the first kKeep verbatim, counts all.
// Benches log each cycle's inputs (input(), before their checks) into a ring of the last kHistory
// cycles; the first mismatch snapshots it, so the report gives every input of that cycle and of
// the kHistory - 1 before. Signals named by ignore() (outputs a user's block does not have) are
// never counted as mismatches.
class Checker {
 public:
  static constexpr size_t kKeep = 20;
  static constexpr size_t kHistory = 5;
  explicit Checker(uint64_t seed) : seed_(seed) {
    for (auto& slot : ring_) slot.values.reserve(64);  // no allocation per cycle after this
  }

  // Compares one signal (index >= 0: element of an array signal); returns expected == got.
  bool check(uint64_t cycle, const char* signal, int index, uint64_t expected, uint64_t got) {
    if (expected == got || ignored(signal)) return true;
    record(cycle, signal, index, expected, got);
    return false;
  }
  // Logs one input of `cycle` (names must outlive the Checker: string literals).
  void input(uint64_t cycle, const char* name, uint64_t value) {
    Slot& s = ring_[head_];
    if (s.cycle != cycle || !s.used) {
      head_ = (head_ + 1) % kHistory;
      Slot& n = ring_[head_];
      n.cycle = cycle;
      n.used = true;
      n.values.clear();
      n.values.emplace_back(name, value);
      return;
    }
    s.values.emplace_back(name, value);
  }
  void ignore(std::string signal) { ignored_.push_back(std::move(signal)); }
  const std::vector<std::string>& ignored_signals() const { return ignored_; }

  uint64_t count() const { return count_; }
  uint64_t first_cycle() const { return first_cycle_; }
  uint64_t seed() const { return seed_; }
  const std::vector<Mismatch>& kept() const { return kept_; }
  // Inputs of the first mismatch's cycle and the ones before it, oldest first.
  const std::vector<InputCycle>& first_inputs() const { return first_inputs_; }

 private:
  struct Slot {
    uint64_t cycle = 0;
    bool used = false;
    std::vector<std::pair<const char*, uint64_t>> values;
  };
  bool ignored(const char* signal) const {
    for (const auto& s : ignored_)
      if (s == signal) return true;
    return false;
  }
  void record(uint64_t cycle, const char* signal, int index, uint64_t expected, uint64_t got);
  uint64_t seed_;
  uint64_t count_ = 0;
  uint64_t first_cycle_ = 0;
  std::vector<Mismatch> kept_;
  Slot ring_[kHistory];
  size_t head_ = 0;
  std::vector<InputCycle> first_inputs_;
  std::vector<std::string> ignored_;
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
  std::string window_gtkw;   // its GTKWave save file
  std::string report;        // mismatch_report() of the first mismatch ("" if none)
  std::string verdict;
};

// Runs `block` (one of blocks()), printing mismatches, coverage and the verdict line to `out`.
// Throws std::invalid_argument for an unknown block or a mutant variant it does not have.
Result run_cosim(const std::string& block, const Options& opt, std::ostream& out);
// The same for a block built elsewhere (a user's RTL: testbenches/cosim/byo.h). `setup` is called
// on each run's Checker first (to ignore signals).
Result run_cosim(const Block& block, const Options& opt, std::ostream& out,
                 const std::function<void(Checker&)>& setup = {});

// The first mismatch as a report: its cycle, the outputs that differ there (expected vs got) and
// every input of that cycle and the few before it, one row per input.
std::string mismatch_report(const Checker& ck);

// Writes a GTKWave save file for `fst`: the top's signals (each output beside its exp_*), the
// view from `from` to `to` (cycles) and the primary marker and marker A at cycle `mark`.
void write_gtkw(const std::string& gtkw, const std::string& fst, uint64_t from, uint64_t to,
                uint64_t mark);

}  // namespace fabricsim::cosim
