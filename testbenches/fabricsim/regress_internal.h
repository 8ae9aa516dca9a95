// What the parts of `fabricsim regress` share (regress.cpp: the command; regress_runs.cpp: the
// `fabricsim run` processes; regress_instructions.cpp: callgrind counts): one case's runs and the
// helpers that read and write their files. Internal to testbenches/fabricsim.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testbenches/fabricsim/regress.h"

namespace fabricsim::regress::detail {

namespace fs = std::filesystem;
using nlohmann::json;

// One `fabricsim run` process.
struct RunResult {
  fs::path out;
  int rc = -1;
  double process_wall_s = 0, cpu_s = 0;
  MachineRef ref;  // the machine reference around the run (speed runs): mean of before and after
  json summary, perf;
  std::string error;  // why there are no figures
};

struct Spawned {
  pid_t pid = -1;
  std::chrono::steady_clock::time_point start;
};

struct CaseRun {
  const Case* c = nullptr;
  std::vector<std::string> sets;  // the case's, then the command line's
  std::string resolved;           // resolved configuration (YAML), empty if it does not resolve
  std::string config_error;
  const json* golden = nullptr;  // the golden entry, if any
  std::vector<RunResult> runs;   // one, or one per speed repeat
  RunResult callgrind;           // the run under callgrind (cases with instructions)
  uint64_t instructions = 0;     // what it counted
  std::string valgrind_version;  // "3.19.0", from its log
  double time_s = 0;
};

struct SpeedFigures {
  double wall_mref = 0, cpu_mref = 0;
};

// ---- files (regress_runs.cpp) ----
std::string json_problem(const json::exception& e);
json read_json(const fs::path& p);
json read_goldens(const std::string& path);
std::string json_text(const json& j);
std::string read_text(const fs::path& p);
void write_atomically(const fs::path& p, const std::string& text);
double median(std::vector<double> v);
std::vector<std::string> lines_of(const std::string& text);
std::string join_lines(const json& lines);

// ---- runs (regress_runs.cpp) ----
Spawned spawn_run(const Hooks& hooks, const std::vector<std::string>& args, const fs::path& out,
                  const std::vector<std::string>& prefix = {});
void finish_run(RunResult& r, int status, const rusage& ru, const Spawned& s);
pid_t reap(pid_t pid, int& status, rusage& ru);
std::vector<std::string> case_sets(const Case& c, const Options& opt);
std::string resolve_case(const Hooks& hooks, const Case& c, std::vector<std::string> sets);
std::vector<std::string> run_args(const CaseRun& cr);
int summary_schema(const json& summary);
int perf_schema(const json& perf);
SpeedFigures speed_of(const std::vector<RunResult>& runs);
std::string host_model();
void run_cases(std::vector<CaseRun>& runs, const Options& opt, const Hooks& hooks,
               const fs::path& work, const std::string& valgrind);

// ---- instruction counts (regress_instructions.cpp) ----
inline constexpr const char* kInstructionRow = "instructions per packet";
extern const std::vector<std::string> kOneThread;
std::string valgrind_for(const std::vector<const Case*>& cases, const Hooks& hooks);
void finish_callgrind(CaseRun& cr);
bool same_but_threads(json a, json b);
Row instruction_row(const CaseRun& cr, bool update, const std::string& where, json& record,
                    std::vector<std::string>& notes);

}  // namespace fabricsim::regress::detail
