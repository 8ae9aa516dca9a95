// `fabricsim regress`: the cases' `fabricsim run` processes (spawned, reaped, their figures
// read) and the files the command reads and writes.
#include "testbenches/fabricsim/regress_internal.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/common/error.h"
#include "models/config/config.h"

extern char** environ;

namespace fabricsim::regress::detail {

// A JSON library error as one line of ours: without its "[json.exception.parse_error.101] "
// tag, what it quotes of the file clipped and escaped.
std::string json_problem(const json::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
    what = what.substr(what.find("] ") + 2);
  constexpr size_t kMax = 160;
  std::string out;
  for (size_t i = 0; i < what.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(what[i]);
    out += c >= 0x20 && c < 0x7f ? std::string(1, what[i]) : fmt::format("\\x{:02x}", c);
  }
  return what.size() > kMax ? out + "..." : out;
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    throw std::runtime_error(p.string() + ": not valid JSON: " + json_problem(e));
  }
}

// The goldens file's shape, checked once as it is read, so that what reads it later cannot meet a
// value of another type (the JSON library's type_error, which names no file): InputError naming
// the file and the value.
void check_goldens_shape(const json& j, const std::string& path) {
  auto bad = [&](const std::string& what, const char* want) {
    throw InputError(fmt::format("{}: {} is not {} (goldens are written by --update-goldens)", path,
                                 what, want));
  };
  if (!j.is_object()) bad("the document", "a JSON object");
  if (j.contains("format") && !j["format"].is_number_integer()) bad("\"format\"", "an integer");
  if (!j.contains("cases")) return;
  if (!j["cases"].is_object()) bad("\"cases\"", "an object");
  for (const auto& [name, c] : j["cases"].items()) {
    const std::string at = "case '" + name.substr(0, 64) + "'";
    if (!c.is_object()) bad(at, "an object");
    if (!c.contains("config") || !c["config"].is_object()) bad(at + ": \"config\"", "an object");
    const json& cfg = c["config"];
    if (cfg.contains("fnv1a64") && !cfg["fnv1a64"].is_string())
      bad(at + ": config \"fnv1a64\"", "a string");
    if (cfg.contains("resolved") && !cfg["resolved"].is_array())
      bad(at + ": config \"resolved\"", "an array of lines");
    if (c.contains("metrics") && !c["metrics"].is_object()) bad(at + ": \"metrics\"", "an object");
    if (c.contains("summary_schema_version") && !c["summary_schema_version"].is_number_integer())
      bad(at + ": \"summary_schema_version\"", "an integer");
    if (c.contains("fabricsim_version") && !c["fabricsim_version"].is_string())
      bad(at + ": \"fabricsim_version\"", "a string");
    if (!c.contains("speed")) continue;
    if (!c["speed"].is_object()) bad(at + ": \"speed\"", "an object");
    for (const char* k : {"wall_mref", "cpu_mref", "perf_schema_version"})
      if (c["speed"].contains(k) && !c["speed"][k].is_number())
        bad(at + ": speed \"" + k + "\"", "a number");
  }
}

json read_goldens(const std::string& path) {
  json j;
  try {
    j = read_json(path);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  check_goldens_shape(j, path);
  return j;
}

// JSON text of `j`: a string that is not UTF-8 (a suite's `set:` entry, a case's name) written with
// U+FFFD in place of its bad bytes, rather than the library's type_error.316.
std::string json_text(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_atomically(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".part";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + p.string());
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw std::runtime_error("cannot write " + p.string() + ": " + ec.message());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string join_lines(const json& lines) {
  std::string s;
  if (lines.is_array())
    for (const auto& l : lines)
      if (l.is_string()) s += l.get<std::string>() + "\n";
  return s;
}

// `fabricsim run ARGS --out OUT`, behind `prefix` when one is given (valgrind and its options).
Spawned spawn_run(const Hooks& hooks, const std::vector<std::string>& args, const fs::path& out,
                  const std::vector<std::string>& prefix) {
  std::error_code ec;
  fs::remove_all(out, ec);  // a rerun into --work starts clean
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error("cannot create " + out.string() + ": " + ec.message());
  std::vector<std::string> argv = prefix;
  argv.push_back(hooks.fabricsim);
  argv.push_back("run");
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--out");
  argv.push_back(out.string());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = (out / "run.log").string();
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  Spawned s;
  s.start = std::chrono::steady_clock::now();
  const int err = posix_spawn(&s.pid, argv.front().c_str(), &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0)
    throw std::runtime_error("cannot start " + argv.front() + ": " + std::strerror(err));
  return s;
}

void finish_run(RunResult& r, int status, const rusage& ru, const Spawned& s) {
  r.process_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
  r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto tail = [&] {  // the run's last words, for the message
    std::string log = read_text(r.out / "run.log");
    while (!log.empty() && log.back() == '\n') log.pop_back();
    const size_t cut = log.size() > 400 ? log.rfind('\n', log.size() - 400) : std::string::npos;
    return cut == std::string::npos ? log : log.substr(cut + 1);
  };
  if (!WIFEXITED(status)) {
    r.error = fmt::format("the run was killed by signal {} ({})", WTERMSIG(status),
                          strsignal(WTERMSIG(status)));
    return;
  }
  if (r.rc != 0 && r.rc != 3) {
    r.error = fmt::format("the run exited {}: {}", r.rc, tail());
    return;
  }
  try {
    r.summary = read_json(r.out / "summary.json");
    r.perf = read_json(r.out / "perf.json");
  } catch (const std::exception& e) {
    r.error = e.what();
    return;
  }
  if (r.rc == 3) r.error = "conservation invariants violated: " + r.summary["invariants"].dump();
}

// Waits for the given process (or any of ours, pid -1); returns the pid reaped.
pid_t reap(pid_t pid, int& status, rusage& ru) {
  for (;;) {
    const pid_t got = wait4(pid, &status, 0, &ru);
    if (got >= 0 || errno != EINTR) return got;
  }
}

// A case's overrides: its own, then the command's --set (its seed goes apart: run_args).
std::vector<std::string> case_sets(const Case& c, const Options& opt) {
  std::vector<std::string> sets = c.sets;
  sets.insert(sets.end(), opt.sets.begin(), opt.sets.end());
  return sets;
}

// The case's resolved configuration, as its run resolves it (its seed last); throws InputError
// when it no longer resolves, or gives a key that cannot act in it (Hooks::strict).
std::string resolve_case(const Hooks& hooks, const Case& c, std::vector<std::string> sets) {
  if (c.seed) sets.push_back("sim.seed=" + std::to_string(*c.seed));
  std::string resolved = hooks.resolve(c.config_path, sets);
  if (hooks.strict) hooks.strict(c.config_path, sets);
  return resolved;
}

std::vector<std::string> run_args(const CaseRun& cr) {
  std::vector<std::string> a = {cr.c->config_path};
  for (const auto& s : cr.sets) {
    a.push_back("--set");
    a.push_back(s);
  }
  if (cr.c->seed) {
    a.push_back("--seed");
    a.push_back(std::to_string(*cr.c->seed));
  }
  return a;
}

int summary_schema(const json& summary) {
  const auto it = summary.find("schema_version");
  return it != summary.end() && it->is_number_integer() ? it->get<int>() : 1;  // 1: had no key
}

int perf_schema(const json& perf) {
  const auto it = perf.find("schema_version");
  return it != perf.end() && it->is_number_integer() ? it->get<int>() : 0;
}

// The speed figure of a run: its wall time (perf.json's wall_s) and CPU time (user + system of
// the process) in millions of machine-reference steps.
double mref(double seconds, double ref_ns) {
  return seconds * 1e3 / ref_ns;
}

SpeedFigures speed_of(const std::vector<RunResult>& runs) {
  std::vector<double> w, c;
  for (const auto& r : runs) {
    w.push_back(mref(r.perf.value("wall_s", 0.0), r.ref.wall_ns));
    c.push_back(mref(r.cpu_s, r.ref.cpu_ns));
  }
  return {median(w), median(c)};
}

std::string host_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

// Runs every case: the ordinary runs and the callgrind runs side by side (--jobs: a count does not
// depend on the load, so it may share the CPUs), then each speed case alone, its repeats in turn.
void run_cases(std::vector<CaseRun>& runs, const Options& opt, const Hooks& hooks,
               const fs::path& work, const std::string& valgrind) {
  struct Job {
    CaseRun* cr;
    bool callgrind;
  };
  std::vector<Job> queue;  // the callgrind runs first: the longest
  for (auto& cr : runs)
    if (cr.config_error.empty() && cr.c->instructions) queue.push_back({&cr, true});
  for (auto& cr : runs)
    if (cr.config_error.empty() && cr.c->speed.repeats == 0) queue.push_back({&cr, false});
  std::map<pid_t, std::pair<Job, Spawned>> live;
  size_t next = 0;
  while (next < queue.size() || !live.empty()) {
    while (next < queue.size() && live.size() < static_cast<size_t>(opt.jobs)) {
      const Job job = queue[next++];
      CaseRun& cr = *job.cr;
      Spawned s;
      if (job.callgrind) {
        // '@' is no case name's: this directory cannot be another case's.
        cr.callgrind.out = work / (cr.c->name + "@callgrind");
        std::vector<std::string> args = run_args(cr);
        for (const auto& set : kOneThread) args.insert(args.end(), {"--set", set});
        s = spawn_run(hooks, args, cr.callgrind.out,
                      {valgrind, "--tool=callgrind",
                       "--callgrind-out-file=" + (cr.callgrind.out / "callgrind.out").string()});
      } else {
        cr.runs.resize(1);
        cr.runs[0].out = work / cr.c->name;
        s = spawn_run(hooks, run_args(cr), cr.runs[0].out);
      }
      live[s.pid] = {job, s};
    }
    int status = 0;
    rusage ru{};
    const pid_t pid = reap(-1, status, ru);
    if (pid < 0) throw std::runtime_error(std::string("wait: ") + std::strerror(errno));
    const auto it = live.find(pid);
    if (it == live.end()) continue;
    auto [job, s] = it->second;
    live.erase(it);
    RunResult& r = job.callgrind ? job.cr->callgrind : job.cr->runs[0];
    finish_run(r, status, ru, s);
    job.cr->time_s += r.process_wall_s;
    if (job.callgrind) finish_callgrind(*job.cr);
  }
  for (auto& cr : runs) {
    if (!cr.config_error.empty() || cr.c->speed.repeats == 0) continue;
    cr.runs.resize(static_cast<size_t>(cr.c->speed.repeats));
    for (size_t k = 0; k < cr.runs.size(); ++k) {
      RunResult& r = cr.runs[k];
      r.out = work / cr.c->name / ("r" + std::to_string(k));
      // The reference on both sides of the run: the load of other tenants drifts over a run.
      const MachineRef before = machine_reference();
      const Spawned s = spawn_run(hooks, run_args(cr), r.out);
      int status = 0;
      rusage ru{};
      if (reap(s.pid, status, ru) != s.pid)
        throw std::runtime_error(std::string("wait: ") + std::strerror(errno));
      finish_run(r, status, ru, s);
      const MachineRef after = machine_reference();
      r.ref.wall_ns = (before.wall_ns + after.wall_ns) / 2;
      r.ref.cpu_ns = (before.cpu_ns + after.cpu_ns) / 2;
      cr.time_s += r.process_wall_s;
      if (!r.error.empty()) break;
    }
  }
}

}  // namespace fabricsim::regress::detail
