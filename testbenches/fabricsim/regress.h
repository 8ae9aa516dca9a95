// `fabricsim regress`: regression suites of simulation results against goldens kept in the
// repository (docs/regressions.md).
//
// A suite (YAML, testbenches/regress/*.yaml) lists cases: a configuration, overrides, a seed, the
// summary.json figures to watch with their tolerances (exact, absolute, relative), and optionally a
// speed check. Each case runs as its own `fabricsim run` process (SystemC elaborates one design per
// process); the figures are compared with the suite's goldens file, written by --update-goldens
// with a record of the resolved configuration, the model version and the result schema versions.
// Speed is judged as a ratio: the run's wall time over a machine reference measured just before it,
// against the same quotient in the golden, so a loaded or slower machine does not read as a
// regression. An instruction count (callgrind, one thread) is the speed figure that does not move
// with the machine's load, so it is held to a tight band instead.
//
// Plain C++ (no SystemC): the configuration is resolved through a callback, so the comparison,
// the suite parser and the reports are unit-tested on their own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim::regress {

// The goldens file's own layout version: bumped when a key of it changes meaning.
constexpr int kGoldensFormat = 1;

// How far a figure may move from its golden: `exact` (the same JSON value: deterministic counters,
// and any figure of a deterministic run), or a band |now - golden| <= max(abs, rel * |golden|).
struct Tolerance {
  bool exact = true;
  double abs = 0;  // absolute allowance, in the figure's own unit
  double rel = 0;  // relative allowance, a fraction of |golden|
  std::string describe() const;
};

struct Metric {
  std::string path;  // a path into summary.json: "latency_ns.mean", "switches[0].packets.dropped"
  Tolerance tol;
};

// A speed check: `repeats` runs, each timed against the machine reference probed around it; fails
// when the median quotient exceeds the golden's by more than `max_ratio`. `judge` picks the clock:
// wall (perf.json's wall_s over the reference's wall step) or cpu (the process's user + system
// time over the reference's CPU step: steadier when other tenants take turns on the cores).
struct SpeedSpec {
  int repeats = 0;  // 0: no speed check
  double max_ratio = 0;
  std::string judge = "wall";
};

// An instruction count: the case run once more under `valgrind --tool=callgrind`, on one thread
// (sim.traffic_thread=false, sim.threads=1: helper threads' wait loops would add a count that
// varies), judged as instructions per delivered packet against the golden's. Deterministic for a
// given binary and input, so the band can be tight: a compiler or library update moves it a
// little, a slower code path more.
struct InstructionSpec {
  Tolerance tol;
};

struct Case {
  std::string name;
  std::string config;       // as written in the suite (relative to the suite's root)
  std::string config_path;  // the file to load
  std::vector<std::string> sets;
  std::optional<int64_t> seed;
  std::vector<Metric> metrics;
  SpeedSpec speed;
  std::optional<InstructionSpec> instructions;
  int line = 0;  // where the case starts in the suite file (1-based)
};

struct Suite {
  std::string path;  // the suite file as given
  std::string name;  // its stem: "nightly"
  std::string description;
  std::string goldens_path;  // default: <suite dir>/<stem>.goldens.json
  std::vector<Case> cases;
};

// Parses and checks a suite file. Throws InputError naming the file, line and key on any problem:
// unknown keys, missing or ill-typed values, duplicate case names, bad tolerances.
Suite load_suite(const std::string& path);

// The value at `path` in `doc`, or nullptr. Parts are separated by '.', "[N]" indexes an array;
// at an object the longest run of parts that is a key wins, so counters whose names hold dots
// ("counters.leaf3.port12.pause_frames_sent") resolve too.
const nlohmann::json* lookup(const nlohmann::json& doc, const std::string& path);

// One comparison of a figure with its golden.
struct Comparison {
  bool pass = false;
  std::string delta;   // "+1.2 (+0.28%)", "0", "differs"
  std::string detail;  // why it failed: "|delta| 1.2 > 0.43 (rel 0.1%)"
};
Comparison compare(const nlohmann::json& golden, const nlohmann::json& now, const Tolerance& t);

// The short text of a figure in the table (integers as they are, other numbers to 7 digits).
std::string show(const nlohmann::json& v);

// 64-bit FNV-1a of a text, in hex: the fingerprint of a resolved configuration.
std::string fnv1a64(const std::string& text);

// The keys whose values differ between two resolved configurations (YAML text), as
// "key: old -> new" lines (at most `limit`, then "... and N more").
std::vector<std::string> config_diff(const std::string& before, const std::string& after,
                                     size_t limit = 8);

// One line of the report: a case's metric (or "speed", or "config"/"run" when the case could not
// be compared at all). A row that did not pass has a failure type and a message.
struct Row {
  std::string case_name, metric, golden, now, delta, verdict;
  bool pass = true;
  std::string type;     // regression, missing_golden, config, schema, run, metric (failures)
  std::string message;  // the full problem, naming suite, case and metric
  double time_s = 0;    // the case's run time (JUnit's testcase time)
};

std::string format_table(const std::vector<Row>& rows);
// JUnit XML as CI systems read it: one <testsuite> for the suite, one <testcase> per row
// (classname "regress.<suite>.<case>", name the metric), <failure> for each row that did not pass.
std::string junit_xml(const std::string& suite_name, const std::vector<Row>& rows, double time_s,
                      const std::vector<std::string>& notes);

// What the command needs from the simulator, injected so that this library stays plain C++.
struct Hooks {
  // The resolved configuration (YAML text) of a config file with overrides; throws InputError
  // with the loader's message when it does not resolve.
  std::function<std::string(const std::string& path, const std::vector<std::string>& sets)> resolve;
  // Throws InputError when the file or the overrides give a key that cannot act in the resolved
  // configuration (fabricsim check --strict); a case is held to it, a golden's record is not
  // (every key of a resolved configuration is given). Null: not checked.
  std::function<void(const std::string& path, const std::vector<std::string>& sets)> strict;
  std::string fabricsim;  // the executable that runs a case (`fabricsim run ...`)
  std::string version;    // FABRICSIM_VERSION
  // valgrind, for the cases that count instructions; empty: looked up on PATH when needed.
  std::string valgrind;
};

struct Options {
  std::string suite;
  std::vector<std::string> cases;  // only these (by name); empty: all
  std::vector<std::string> sets;   // extra overrides for every case, after the case's own
  bool update = false;             // --update-goldens
  bool check_configs = false;      // --check-configs: resolve and compare configs, run nothing
  bool update_configs = false;     // --update-configs: rewrite the configuration records only
  std::string junit;               // --junit FILE
  std::string json;                // --json FILE: every row and raw speed figure
  std::string work;                // --work DIR: keep the runs there (default: a temporary dir)
  int jobs = 1;  // runs side by side (speed cases always run alone; callgrind runs join the pool)
};

// Every selected case's resolved configuration against its golden's record, nothing run: 0 when
// all match, 1 (each difference printed to stderr) when a case's configuration changed, no
// longer resolves or has no golden. CI runs it, so that a change of defaults updates the goldens
// in the same commit. With --update-configs the records that differ are rewritten instead (the
// golden's figures, speed references and instruction counts kept: the next run still compares
// the figures, so a default that moves a result shows there).
int check_configs(const Options& opt, const Hooks& hooks);
// Runs a suite; returns the exit code: 0 all passed (or goldens written), 1 a regression, missing
// golden, configuration that no longer resolves, refused comparison or failed run. Throws
// InputError (exit 2) for a bad suite file or option.
int run(const Options& opt, const Hooks& hooks);

// The machine reference: the parallel-chains step (testbenches/bench/machine_ref.h) run on every
// usable CPU at once, in ns per step (the mean over CPUs), by the wall clock and by the threads'
// CPU clocks (the second leaves out the time other tenants' processes held the cores).
struct MachineRef {
  double wall_ns = 0, cpu_ns = 0;
};
MachineRef machine_reference();

}  // namespace fabricsim::regress
