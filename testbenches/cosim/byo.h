// Bring your own RTL: `fabricsim cosim --rtl FILE.sv --top NAME --bind BLOCK --ports MAP.yaml`
// co-simulates a user's block against one of the model blocks, with no CMake or C++ to write.
//
// The flow (docs/cosim.md "Your own RTL"): the port map (model signal -> the user's port) is
// checked against the ports Verilator finds in the user's top (names, directions, widths; bad
// input is an InputError naming the file and key); a generated SystemVerilog wrapper gives the
// block the model's port names plus exp_* / mismatch inputs for the waveform, and a generated
// driver main() serves it over a pipe. Verilator builds both into an executable in a cache
// directory keyed by a hash of the sources, the port map, the block and Verilator's version, and
// the block's own bench (the same stimulus, checks and coverage as `fabricsim cosim BLOCK`) runs
// against it in lockstep. Why a separate process and not a dlopen'ed object: the user's model
// carries its own copy of the Verilator runtime (global state, symbols that would interpose on
// the copy fabricsim_rtl links), a crash or $fatal in user RTL ends only that process, and
// Verilator's own --exe --build flow needs no compiler flags from this build.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "testbenches/cosim/cosim.h"

namespace fabricsim::cosim {

struct ByoOptions {
  std::vector<std::string> rtl;  // the user's SystemVerilog files
  std::string top;               // their top module
  std::string bind;              // the model block: crc32 or dcqcn
  std::string ports;             // the port map (YAML)
  std::string out;               // report, mismatch.fst, mismatch.gtkw ("" = cosim-out/TOP-seedS)
  std::string cache;             // build cache ("" = $FABRICSIM_COSIM_CACHE or ~/.cache/...)
  Options base;                  // cycles, seed, window
};

// One signal of a bindable block's interface, as the generated wrapper names it.
struct ByoSignal {
  std::string name;
  int width = 1;
  bool output = false;
  bool required = true;  // outputs only: optional ones, if unmapped, are not compared
};

// The block names --bind takes.
std::vector<std::string> byo_blocks();

// Builds (or reuses) the user's RTL and co-simulates it; prints to `out`. Returns the exit code
// (0 matched, 1 mismatch); throws InputError (exit 2) for bad input, std::runtime_error when
// Verilator or the compiler fail on input that passed the checks.
int run_byo(const ByoOptions& opt, std::ostream& out);

// --- internals shared by byo_build.cpp and byo_run.cpp ---

// A built block: the executable and the interface it serves (model order: inputs, then outputs).
struct ByoBuild {
  std::string exe;
  std::string dir;  // its cache directory
  bool reused = false;
  double build_seconds = 0;
  std::vector<ByoSignal> inputs, outputs;
  std::vector<std::string> unmapped;  // optional outputs the user's block does not drive
  int crc_bytes = 0;                  // crc32: W, from the width of the port in_data maps to
};

// Checks the port map against the user's top and builds (or finds) the executable.
ByoBuild byo_build(const ByoOptions& opt, std::ostream& out);

// The generated driver's source (byo_driver.cpp): main() serving the wrapper over a pipe.
std::string driver_cpp(const ByoBuild& b);

}  // namespace fabricsim::cosim
