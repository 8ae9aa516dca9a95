// `fabricsim regress` (regress.h): the command: check the configurations, run the cases, compare
// or record their figures, report. The suite file, the comparison, the runs and the instruction
// counts are in regress_suite.cpp, regress_compare.cpp, regress_runs.cpp and
// regress_instructions.cpp.
#include "testbenches/fabricsim/regress.h"
#include "testbenches/fabricsim/regress_internal.h"

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

namespace fabricsim::regress {

using namespace detail;  // NOLINT: the command is the internals' only user

// A golden's record of the configuration it was written from: the case's file, overrides and
// seed, and the resolved configuration (its lines and fingerprint).
json config_record(const Case& c, const std::vector<std::string>& sets,
                   const std::string& resolved) {
  return {{"file", c.config},
          {"set", sets},
          {"seed", c.seed ? json(*c.seed) : json(nullptr)},
          {"fnv1a64", fnv1a64(resolved)},
          {"resolved", lines_of(resolved)}};
}

int check_configs(const Options& opt, const Hooks& hooks) {
  const Suite suite = load_suite(opt.suite);
  json goldens;
  std::error_code ec;
  if (!fs::exists(suite.goldens_path, ec)) {
    std::cerr << "fabricsim regress: " << suite.path << ": no goldens file " << suite.goldens_path
              << " (write it with --update-goldens)\n";
    return 1;
  }
  goldens = read_goldens(suite.goldens_path);
  int changed = 0, rewritten = 0;
  for (const Case& c : suite.cases) {
    if (!opt.cases.empty() &&
        std::find(opt.cases.begin(), opt.cases.end(), c.name) == opt.cases.end())
      continue;
    const std::string where = suite.path + ": case '" + c.name + "': ";
    std::string resolved;
    try {
      resolved = resolve_case(hooks, c, case_sets(c, opt));
    } catch (const InputError& e) {
      std::cerr << where << "configuration no longer resolves: " << e.what() << "\n";
      ++changed;
      continue;
    }
    json* g = goldens.contains("cases") && goldens["cases"].contains(c.name)
                  ? &goldens["cases"][c.name]
                  : nullptr;
    if (!g) {
      std::cerr << where << "missing golden (write it with --update-goldens)\n";
      ++changed;
      continue;
    }
    if ((*g)["config"].value("fnv1a64", "") == fnv1a64(resolved)) continue;
    std::ostream& out = opt.update_configs ? std::cout : std::cerr;
    out << where
        << (opt.update_configs ? "configuration record rewritten, figures kept:"
                               : "the resolved configuration differs from the golden's (a "
                                 "default changed: update the goldens in the same commit):");
    for (const auto& l :
         config_diff(join_lines((*g)["config"].value("resolved", json())), resolved))
      out << "\n    " << l;
    out << "\n";
    if (!opt.update_configs) {
      ++changed;
      continue;
    }
    (*g)["config"] = config_record(c, case_sets(c, opt), resolved);
    ++rewritten;
  }
  if (rewritten) write_atomically(suite.goldens_path, json_text(goldens));
  std::cout << suite.name << ": " << suite.cases.size() - static_cast<size_t>(changed) << " of "
            << suite.cases.size() << " cases' configurations match their goldens"
            << (rewritten ? fmt::format(" ({} records rewritten)", rewritten) : "") << "\n";
  return changed ? 1 : 0;
}

// --json: every row, and per run its times and machine reference (for trend plots).
void write_json_report(const std::string& path, const Suite& suite, const std::vector<Row>& rows,
                       const std::vector<CaseRun>& runs, bool passed) {
  json j = {
      {"suite", suite.path}, {"passed", passed}, {"rows", json::array()}, {"runs", json::object()}};
  for (const auto& r : rows)
    j["rows"].push_back({{"case", r.case_name},
                         {"metric", r.metric},
                         {"golden", r.golden},
                         {"now", r.now},
                         {"delta", r.delta},
                         {"verdict", r.verdict},
                         {"pass", r.pass},
                         {"type", r.type},
                         {"message", r.message}});
  for (const auto& cr : runs) {
    json list = json::array();
    for (const auto& r : cr.runs)
      list.push_back({{"wall_s", r.perf.is_null() ? 0.0 : r.perf.value("wall_s", 0.0)},
                      {"process_wall_s", r.process_wall_s},
                      {"cpu_s", r.cpu_s},
                      {"machine_ref_wall_ns", r.ref.wall_ns},
                      {"machine_ref_cpu_ns", r.ref.cpu_ns},
                      {"exit_code", r.rc}});
    j["runs"][cr.c->name] = list;
    if (cr.c->instructions && !cr.callgrind.out.empty() && cr.callgrind.error.empty())
      j["instructions"][cr.c->name] = {{"instructions", cr.instructions},
                                       {"process_wall_s", cr.callgrind.process_wall_s},
                                       {"cpu_s", cr.callgrind.cpu_s}};
  }
  write_atomically(path, json_text(j));  // (non-UTF-8 bytes replaced, not thrown)
}

// Why a case's run cannot be compared with its golden: {problem, failure type}, both empty when
// it can. Differences that are not failures by themselves (the resolved configuration, the
// fabricsim version) become notes: the figures decide.
std::pair<std::string, std::string> golden_problem(const CaseRun& cr,
                                                   const std::string& goldens_error,
                                                   const std::string& goldens_path,
                                                   const fs::path& work, const Hooks& hooks,
                                                   std::vector<std::string>& notes) {
  const Case& c = *cr.c;
  const json* g = cr.golden;
  if (!goldens_error.empty())
    return {goldens_error, goldens_error.rfind("missing", 0) == 0 ? "missing_golden" : "schema"};
  if (!g)
    return {"missing golden: " + goldens_path +
                " has no entry for this case (write it with --update-goldens)",
            "missing_golden"};
  const std::string recorded = join_lines((*g)["config"].value("resolved", json()));
  if (recorded.empty())
    return {"the golden records no resolved configuration; review, then --update-goldens",
            "config"};
  const fs::path p = work / c.name / "golden-config.yaml";
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  write_atomically(p, recorded);
  try {
    hooks.resolve(p.string(), {});
  } catch (const InputError& e) {
    std::string msg = e.what();
    // The loader names the temporary file; the golden is what the reader must look at.
    for (size_t at; (at = msg.find(p.string())) != std::string::npos;)
      msg.replace(at, p.string().size(), "(golden config)");
    return {
        "the golden's configuration no longer resolves (a key renamed or removed since it "
        "was written?): " +
            msg + "; review, then --update-goldens",
        "config"};
  }
  if (fnv1a64(cr.resolved) != (*g)["config"].value("fnv1a64", "")) {
    std::string d;
    for (const auto& l : config_diff(recorded, cr.resolved)) d += "\n    " + l;
    notes.push_back("case '" + c.name +
                    "': the resolved configuration differs from the golden's:" + d);
  }
  const std::string gv = g->value("fabricsim_version", "");
  if (gv != hooks.version)
    notes.push_back("case '" + c.name + "': golden from fabricsim " + gv + ", this is " +
                    hooks.version);
  const int gs = g->value("summary_schema_version", 0);
  const int ns = summary_schema(cr.runs.front().summary);
  if (gs != ns)
    return {fmt::format(
                "refusing to compare: the golden was written from summary.json schema_version {}, "
                "this build writes {} (the version changes when a documented key changes meaning: "
                "docs/results.md); review the change, then --update-goldens",
                gs, ns),
            "schema"};
  return {"", ""};
}

// Why a case's runs give no figures to compare: a failed run, speed repeats that differ, or a
// callgrind run that is not the case's own run. Empty when the runs are sound.
std::string run_error_of(const CaseRun& cr) {
  for (const auto& r : cr.runs)
    if (!r.error.empty()) return r.error;
  if (cr.runs.size() > 1) {
    // Speed repeats are the same run: their summaries must be the same bytes.
    const std::string a = read_text(cr.runs[0].out / "summary.json");
    for (size_t k = 1; k < cr.runs.size(); ++k)
      if (read_text(cr.runs[k].out / "summary.json") != a)
        return fmt::format(
            "repeat {} gave a different summary.json than repeat 0 (a run that is not "
            "deterministic)",
            k);
  }
  if (cr.c->instructions && cr.config_error.empty()) {
    if (!cr.callgrind.error.empty()) return cr.callgrind.error;
    if (!same_but_threads(cr.callgrind.summary, cr.runs[0].summary))
      return "the callgrind run (one thread) gave a different summary.json than the case's run";
  }
  return "";
}

// A speed case's row: the median of its repeats against the golden's, as a ratio (or, with
// --update-goldens, recorded in `record`). `problem` makes a message naming suite and case.
Row speed_row(const CaseRun& cr, bool update,
              const std::function<std::string(std::string)>& problem, json& record) {
  const Case& c = *cr.c;
  const json* g = cr.golden;
  const RunResult* first = &cr.runs.front();
  Row r;
  r.case_name = c.name;
  r.time_s = cr.time_s;
  const SpeedFigures now = speed_of(cr.runs);
  const bool cpu = c.speed.judge == "cpu";
  const char* key = cpu ? "cpu_mref" : "wall_mref";
  const char* other_key = cpu ? "wall_mref" : "cpu_mref";
  const char* other_name = cpu ? "wall" : "cpu";
  r.metric = cpu ? "speed (cpu)" : "speed (wall)";
  r.now = fmt::format("{:.1f} Mref", cpu ? now.cpu_mref : now.wall_mref);
  const json* gs = g && g->contains("speed") ? &(*g)["speed"] : nullptr;
  r.golden = gs ? fmt::format("{:.1f} Mref", gs->value(key, 0.0)) : "-";
  r.delta = "-";
  record = {{"repeats", c.speed.repeats},
            {"wall_mref", now.wall_mref},
            {"cpu_mref", now.cpu_mref},
            {"perf_schema_version", perf_schema(first->perf)},
            {"host", host_model()}};
  if (update) {
    r.verdict = "written";
  } else if (!gs) {
    r.pass = false;
    r.type = "missing_golden";
    r.verdict = "NO GOLDEN";
    r.message = problem(
        "speed: missing golden: the golden of this case has no speed figure (--update-goldens)");
  } else if (gs->value("perf_schema_version", -1) != perf_schema(first->perf)) {
    r.pass = false;
    r.type = "schema";
    r.verdict = "REFUSED";
    r.message =
        problem(fmt::format("speed: refusing to compare: the golden was written from "
                            "perf.json schema_version {}, this build writes {}; review, then "
                            "--update-goldens",
                            gs->value("perf_schema_version", -1), perf_schema(first->perf)));
  } else {
    const double ratio = (cpu ? now.cpu_mref : now.wall_mref) / gs->value(key, 0.0);
    const double other = (cpu ? now.wall_mref : now.cpu_mref) / gs->value(other_key, 0.0);
    r.delta = fmt::format("x{:.3f}", ratio);
    r.pass = ratio <= c.speed.max_ratio;  // false for NaN
    r.verdict = fmt::format("{} (x{:.3f} {} x{:.2f}; {} x{:.3f}; median of {})",
                            r.pass ? "ok" : "SLOWER", ratio, r.pass ? "<=" : ">", c.speed.max_ratio,
                            other_name, other, c.speed.repeats);
    if (!r.pass) {
      r.type = "regression";
      r.message =
          problem(fmt::format("{}: x{:.3f} the golden's {} time per machine-reference step "
                              "(median of {}), above the threshold x{:.2f}; {} x{:.3f}",
                              r.metric, ratio, cpu ? "CPU" : "wall", c.speed.repeats,
                              c.speed.max_ratio, other_name, other));
    }
  }
  return r;
}

namespace {

// The suite's cases that --case selects (all without it); InputError naming an unknown one.
std::vector<const Case*> select_cases(const Suite& suite, const Options& opt) {
  std::vector<std::string> names;
  for (const auto& c : suite.cases) names.push_back(c.name);
  for (const auto& want : opt.cases)
    if (std::find(names.begin(), names.end(), want) == names.end()) {
      const std::string hint = config::closest_name(want, names);
      throw InputError("--case: " + suite.path + " has no case '" + want + "'" +
                       (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
    }
  std::vector<const Case*> selected;
  for (const auto& c : suite.cases)
    if (opt.cases.empty() ||
        std::find(opt.cases.begin(), opt.cases.end(), c.name) != opt.cases.end())
      selected.push_back(&c);
  return selected;
}

// The goldens file, or why no case can be compared with it (`error`).
struct Goldens {
  json doc;
  std::string error;
  const json& cases() const {
    static const json kNone = json::object();
    return error.empty() && doc.contains("cases") && doc["cases"].is_object() ? doc["cases"]
                                                                              : kNone;
  }
};

Goldens load_goldens(const Suite& suite) {
  Goldens g;
  std::error_code ec;
  if (fs::exists(suite.goldens_path, ec)) {
    g.doc = read_goldens(suite.goldens_path);
    const int format = g.doc.value("format", 0);
    if (format != kGoldensFormat)
      g.error = fmt::format(
          "refusing to compare: {} has goldens format {}, this fabricsim reads format {}",
          suite.goldens_path, format, kGoldensFormat);
  } else {
    g.error = "missing golden: no goldens file " + suite.goldens_path +
              " (write it with --update-goldens)";
  }
  return g;
}

// --work, or a temporary directory (`temp`: removed when every check passed).
fs::path work_dir(const Options& opt, bool& temp) {
  temp = opt.work.empty();
  if (temp) {
    std::string tmpl = (fs::temp_directory_path() / "fabricsim-regress-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
    return tmpl;
  }
  std::error_code ec;
  fs::create_directories(opt.work, ec);
  if (ec) throw InputError("--work: cannot create " + opt.work + ": " + ec.message());
  return opt.work;
}

// Every case's configuration resolved before anything runs: a case that no longer resolves is
// reported, not run.
std::vector<CaseRun> resolve_cases(const std::vector<const Case*>& selected, const Options& opt,
                                   const Hooks& hooks, const json& golden_cases) {
  std::vector<CaseRun> runs;
  for (const Case* c : selected) {
    CaseRun cr;
    cr.c = c;
    cr.sets = case_sets(*c, opt);
    try {
      cr.resolved = resolve_case(hooks, *c, cr.sets);
    } catch (const InputError& e) {
      cr.config_error = std::string("configuration no longer resolves: ") + e.what();
    }
    if (const auto it = golden_cases.find(c->name); it != golden_cases.end()) cr.golden = &*it;
    runs.push_back(std::move(cr));
  }
  return runs;
}

// What a case's rows are checked for: its summary.json paths, its speed, its instruction count.
std::vector<std::string> row_names(const Case& c) {
  std::vector<std::string> names;
  for (const auto& m : c.metrics) names.push_back(m.path);
  if (c.speed.repeats) names.push_back(c.speed.judge == "cpu" ? "speed (cpu)" : "speed (wall)");
  if (c.instructions) names.push_back(kInstructionRow);
  return names;
}

// A case-wide problem fails every row of the case with the same message (and the figures there
// are, for the reader).
void failed_rows(const CaseRun& cr, const std::string& problem, const std::string& type,
                 const std::string& where, std::vector<Row>& rows) {
  const Case& c = *cr.c;
  const json* g = cr.golden;
  const RunResult* first = cr.runs.empty() ? nullptr : &cr.runs.front();
  for (const auto& name : row_names(c)) {
    Row r;
    r.case_name = c.name;
    r.metric = name;
    r.time_s = cr.time_s;
    r.golden = r.now = r.delta = "-";
    if (g && name.rfind("speed", 0) != 0 && (*g).contains("metrics") &&
        (*g)["metrics"].contains(name))
      r.golden = show((*g)["metrics"][name]);
    if (first && !first->summary.is_null() && name.rfind("speed", 0) != 0)
      if (const json* v = lookup(first->summary, name)) r.now = show(*v);
    r.pass = false;
    r.type = type;
    r.verdict = type == "missing_golden" ? "NO GOLDEN"
                : type == "schema"       ? "REFUSED"
                : type == "config"       ? "CONFIG"
                                         : "RUN FAILED";
    r.message = where + name + ": " + problem;
    rows.push_back(std::move(r));
  }
}

// A summary.json figure's row: compared with the golden's, or (--update-goldens) recorded in
// `metrics`.
Row metric_row(const CaseRun& cr, const Metric& m, bool update, const std::string& where,
               json& metrics) {
  const json* g = cr.golden;
  Row r;
  r.case_name = cr.c->name;
  r.metric = m.path;
  r.time_s = cr.time_s;
  const json* now = lookup(cr.runs.front().summary, m.path);
  const json* old = g && g->contains("metrics") && (*g)["metrics"].contains(m.path)
                        ? &(*g)["metrics"][m.path]
                        : nullptr;
  r.golden = old ? show(*old) : "-";
  r.now = now ? show(*now) : "-";
  r.delta =
      old && now && old->is_number() && now->is_number() ? compare(*old, *now, m.tol).delta : "-";
  if (!now) {
    r.pass = false;
    r.type = "metric";
    r.verdict = "NO SUCH METRIC";
    r.message = where + m.path + ": not in summary.json (see docs/results.md for its keys)";
  } else if (update) {
    metrics[m.path] = *now;
    r.verdict = "written";
  } else if (!old) {
    r.pass = false;
    r.type = "missing_golden";
    r.verdict = "NO GOLDEN";
    r.message = where + m.path +
                ": missing golden: the golden of this case has no value for this metric "
                "(--update-goldens)";
  } else {
    const Comparison cmp = compare(*old, *now, m.tol);
    r.pass = cmp.pass;
    r.verdict = cmp.pass ? "ok (" + m.tol.describe() + ")" : "REGRESSION";
    if (!cmp.pass) {
      r.type = "regression";
      r.message = where + m.path + ": golden " + r.golden + ", now " + r.now + ", delta " +
                  cmp.delta + ": " + cmp.detail;
    }
  }
  return r;
}

// The goldens entry of a case that ran cleanly (--update-goldens).
json golden_entry(const CaseRun& cr, const Hooks& hooks, const json& metrics, const json& speed,
                  const json& instructions) {
  const Case& c = *cr.c;
  json entry = {{"fabricsim_version", hooks.version},
                {"summary_schema_version", summary_schema(cr.runs.front().summary)},
                {"config", config_record(c, cr.sets, cr.resolved)},
                {"metrics", metrics}};
  if (!speed.is_null()) entry["speed"] = speed;
  if (!instructions.is_null()) entry["instructions"] = instructions;
  return entry;
}

// One case's rows: compared (or written), and with --update-goldens its new goldens entry.
void case_rows(CaseRun& cr, const Suite& suite, const Options& opt, const Hooks& hooks,
               const Goldens& goldens, const fs::path& work, std::vector<Row>& rows,
               json& new_cases, std::vector<std::string>& notes) {
  const Case& c = *cr.c;
  const std::string where = suite.path + ": case '" + c.name + "': ";
  std::string problem, type;
  if (!cr.config_error.empty()) {
    problem = cr.config_error;
    type = "config";
  } else if (const std::string run_error = run_error_of(cr); !run_error.empty()) {
    problem = run_error;
    type = "run";
  }
  if (!opt.update && problem.empty())
    std::tie(problem, type) =
        golden_problem(cr, goldens.error, suite.goldens_path, work, hooks, notes);
  if (!problem.empty()) {
    failed_rows(cr, problem, type, where, rows);
    return;
  }
  json metrics = json::object();
  bool case_ok = true;
  for (const auto& m : c.metrics) {
    rows.push_back(metric_row(cr, m, opt.update, where, metrics));
    case_ok = case_ok && rows.back().pass;
  }
  json speed_record;
  if (c.speed.repeats)
    rows.push_back(speed_row(
        cr, opt.update, [&](const std::string& what) { return where + what; }, speed_record));
  json instruction_record;
  if (c.instructions) {
    rows.push_back(instruction_row(cr, opt.update, where, instruction_record, notes));
    case_ok = case_ok && rows.back().pass;
  }
  if (opt.update && case_ok)
    new_cases[c.name] = golden_entry(cr, hooks, metrics, speed_record, instruction_record);
}

// --update-goldens: the suite's goldens file with the cases that ran cleanly rewritten. Cases not
// run this time keep their goldens; goldens of cases gone from the suite go.
void write_goldens(const Suite& suite, const Goldens& goldens, const json& new_cases,
                   std::vector<std::string>& notes) {
  json cases = json::object();
  if (goldens.error.empty() || goldens.error.rfind("missing", 0) != 0)
    for (const auto& [name, entry] : goldens.cases().items()) {
      const bool in_suite = std::any_of(suite.cases.begin(), suite.cases.end(),
                                        [&](const Case& c) { return c.name == name; });
      if (in_suite)
        cases[name] = entry;
      else
        notes.push_back("dropped the golden of case '" + name + "' (no longer in the suite)");
    }
  for (const auto& [name, entry] : new_cases.items()) cases[name] = entry;
  const json out = {{"format", kGoldensFormat},
                    {"suite", fs::path(suite.path).filename().string()},
                    {"written_by", "fabricsim regress --update-goldens (docs/regressions.md)"},
                    {"cases", cases}};
  write_atomically(suite.goldens_path, json_text(out));
}

// The table, the notes, the failures on standard error, the counts; returns how many failed.
size_t report(const Suite& suite, const Options& opt, size_t cases, const std::vector<Row>& rows,
              const std::vector<std::string>& notes, double total_s) {
  size_t failed = 0;
  for (const auto& r : rows) failed += r.pass ? 0 : 1;
  std::cout << "fabricsim regress " << suite.path << ": " << cases << " case"
            << (cases == 1 ? "" : "s") << ", goldens " << suite.goldens_path
            << (opt.update ? " (updating)" : "") << "\n"
            << format_table(rows);
  for (const auto& n : notes) std::cout << "note: " << n << "\n";
  for (const auto& r : rows)
    if (!r.pass) std::cerr << "fabricsim regress: " << r.message << "\n";
  std::cout << fmt::format("{}: {} of {} checks passed, {} failed ({:.1f} s)\n", suite.name,
                           rows.size() - failed, rows.size(), failed, total_s);
  if (opt.update)
    std::cout << (failed ? "goldens written for the cases that ran cleanly: " : "goldens written: ")
              << suite.goldens_path << "\n";
  return failed;
}

}  // namespace

int run(const Options& opt, const Hooks& hooks) {
  if (opt.update_configs && (opt.update || opt.check_configs))
    throw InputError(
        "--update-configs: give it alone, not with --update-goldens or "
        "--check-configs");
  if (opt.check_configs || opt.update_configs) return check_configs(opt, hooks);
  const Suite suite = load_suite(opt.suite);
  if (opt.jobs < 1) throw InputError("--jobs: expected at least 1");
  const std::vector<const Case*> selected = select_cases(suite, opt);
  const std::string valgrind = valgrind_for(selected, hooks);  // before anything runs
  const Goldens goldens = load_goldens(suite);
  bool temp_work = false;
  const fs::path work = work_dir(opt, temp_work);
  std::vector<CaseRun> runs = resolve_cases(selected, opt, hooks, goldens.cases());

  const auto t_start = std::chrono::steady_clock::now();
  run_cases(runs, opt, hooks, work, valgrind);
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();

  std::vector<Row> rows;
  std::vector<std::string> notes;
  json new_cases = json::object();
  for (auto& cr : runs) case_rows(cr, suite, opt, hooks, goldens, work, rows, new_cases, notes);
  if (opt.update) {
    write_goldens(suite, goldens, new_cases, notes);
  } else {
    for (const auto& [name, entry] : goldens.cases().items()) {
      (void)entry;
      if (std::none_of(suite.cases.begin(), suite.cases.end(),
                       [&](const Case& c) { return c.name == name; }))
        notes.push_back("the goldens hold case '" + name + "', which the suite no longer has");
    }
  }

  const size_t failed = report(suite, opt, selected.size(), rows, notes, total_s);
  if (!opt.junit.empty()) write_atomically(opt.junit, junit_xml(suite.name, rows, total_s, notes));
  if (!opt.json.empty()) write_json_report(opt.json, suite, rows, runs, failed == 0);
  if (temp_work) {
    if (failed) {
      std::cout << "runs kept in " << work.string() << "\n";
    } else {
      std::error_code ec;
      fs::remove_all(work, ec);
    }
  }
  return failed ? 1 : 0;
}

}  // namespace fabricsim::regress
