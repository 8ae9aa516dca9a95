// `fabricsim regress`: instruction counts (a case run once more under callgrind, on one thread,
// judged per delivered packet against its golden).
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

namespace fabricsim::regress::detail {

// ---- instruction counts -------------------------------------------------------------------------

// Overrides of a callgrind run: one thread. The helper threads' hand-over loops spin or sleep by
// how the threads happen to interleave, which would add a count that varies from run to run;
// results are the same either way (both are speed settings).
extern const std::vector<std::string> kOneThread;
const std::vector<std::string> kOneThread = {"sim.traffic_thread=false", "sim.threads=1"};

// The build that counts: a figure depends on the compiler and its optimisation, so the golden
// records both (an unoptimised build is refused, a different compiler noted).
#ifdef __OPTIMIZE__
constexpr bool kOptimized = true;
#else
constexpr bool kOptimized = false;
#endif
#if defined(__clang__)
constexpr const char* kCompiler = "clang " __clang_version__;
#elif defined(__GNUC__)
constexpr const char* kCompiler = "gcc " __VERSION__;
#else
constexpr const char* kCompiler = __VERSION__;
#endif

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "");
  for (std::string dir; std::getline(in, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// The valgrind that counts the selected cases' instructions, or an InputError (exit 2) naming
// them when there is none: a missing tool is a setup problem, not a regression.
std::string valgrind_for(const std::vector<const Case*>& cases, const Hooks& hooks) {
  std::string names;
  for (const Case* c : cases)
    if (c->instructions) names += (names.empty() ? "'" : ", '") + c->name + "'";
  if (names.empty()) return "";
  const std::string v = hooks.valgrind.empty() ? find_on_path("valgrind") : hooks.valgrind;
  std::error_code ec;
  if (v.empty() || !fs::is_regular_file(v, ec))
    throw InputError("case " + names +
                     " counts instructions (instructions:), which needs valgrind: " +
                     (v.empty() ? "not found on PATH" : v + " does not exist") +
                     " (Debian package valgrind; docs/regressions.md)");
  return v;
}

// The total callgrind wrote (its out file's "totals:" line, or "summary:"; the only event is Ir).
bool callgrind_total(const fs::path& file, uint64_t& total) {
  std::ifstream f(file);
  for (std::string line; std::getline(f, line);)
    for (const char* key : {"totals:", "summary:"})
      if (line.rfind(key, 0) == 0) {
        const std::string v = line.substr(line.find_first_not_of(' ', std::strlen(key)));
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), total);
        if (ec == std::errc() && p != v.data()) return true;
      }
  return false;
}

// After the callgrind run: its count and valgrind's version, or why there are none.
void finish_callgrind(CaseRun& cr) {
  RunResult& r = cr.callgrind;
  const std::string log = read_text(r.out / "run.log");
  const size_t at = log.find("Using Valgrind-");
  if (at != std::string::npos) {
    const size_t from = at + std::strlen("Using Valgrind-");
    cr.valgrind_version = log.substr(from, log.find_first_of(" \n", from) - from);
  }
  if (!r.error.empty()) {
    r.error = "the callgrind run: " + r.error;
    return;
  }
  if (!callgrind_total(r.out / "callgrind.out", cr.instructions))
    r.error =
        "the callgrind run wrote no instruction count (" + (r.out / "callgrind.out").string() + ")";
}

// Whether two summaries are the same but for the thread settings the callgrind run overrides:
// one thread gives the same results (they are speed settings), so what was counted is the run the
// figures come from.
bool same_but_threads(json a, json b) {
  for (json* s : {&a, &b})
    if (s->contains("config") && (*s)["config"].contains("sim"))
      for (const auto& set : kOneThread) {
        const std::string key = set.substr(4, set.find('=') - 4);  // "sim.traffic_thread=false"
        (*s)["config"]["sim"].erase(key);
      }
  return a == b;
}

// A case's instruction row: instructions per delivered packet of its callgrind run against the
// golden's, or (--update-goldens) recorded in `record`. `where` opens every message ("suite: case
// 'x': "). Per packet rather than the total, so that a change which moves the delivered count
// (also watched, exactly) does not read as a speed change by itself.
Row instruction_row(const CaseRun& cr, bool update, const std::string& where, json& record,
                    std::vector<std::string>& notes) {
  const Case& c = *cr.c;
  Row r;
  r.case_name = c.name;
  r.metric = kInstructionRow;
  r.time_s = cr.time_s;
  r.golden = r.now = r.delta = "-";
  const json* delivered = lookup(cr.callgrind.summary, "packets.delivered");
  const int64_t packets =
      delivered && delivered->is_number_integer() ? delivered->get<int64_t>() : 0;
  if (packets <= 0) {
    r.pass = false;
    r.type = "metric";
    r.verdict = "NO PACKETS";
    r.message =
        where + kInstructionRow +
        ": the callgrind run delivered no packets (packets.delivered): nothing to count per";
    return r;
  }
  const double per_packet = static_cast<double>(cr.instructions) / static_cast<double>(packets);
  record = {{"total", cr.instructions},        {"packets_delivered", packets},
            {"per_packet", per_packet},        {"set", kOneThread},
            {"valgrind", cr.valgrind_version}, {"compiler", kCompiler},
            {"optimized", kOptimized}};
  r.now = show(json(per_packet));
  const std::string scale =
      fmt::format("{:.1f} M for {} packets", static_cast<double>(cr.instructions) / 1e6, packets);
  if (update) {
    r.verdict = "written (" + scale + ")";
    return r;
  }
  const json* gi = cr.golden && cr.golden->contains("instructions") &&
                           (*cr.golden)["instructions"].contains("per_packet")
                       ? &(*cr.golden)["instructions"]
                       : nullptr;
  r.pass = false;
  if (!gi) {
    r.type = "missing_golden";
    r.verdict = "NO GOLDEN";
    r.message = where + kInstructionRow +
                ": missing golden: the golden of this case has no instruction count "
                "(--update-goldens)";
    return r;
  }
  r.golden = show((*gi)["per_packet"]);
  if (gi->value("optimized", kOptimized) != kOptimized) {
    r.type = "schema";
    r.verdict = "REFUSED";
    r.message = where + kInstructionRow + ": refusing to compare: the golden was counted on " +
                (kOptimized ? "an unoptimised" : "an optimised") + " build, this one is " +
                (kOptimized ? "optimised" : "not (build with -DCMAKE_BUILD_TYPE=Release)");
    return r;
  }
  const Comparison cmp = compare((*gi)["per_packet"], json(per_packet), c.instructions->tol);
  r.pass = cmp.pass;
  r.delta = cmp.delta;
  r.verdict =
      (cmp.pass ? "ok (" + c.instructions->tol.describe() + "; " : "MORE WORK (") + scale + ")";
  if (!cmp.pass) {
    r.type = "regression";
    r.message = where + fmt::format("{}: golden {}, now {} ({}), delta {}: {}", kInstructionRow,
                                    r.golden, r.now, scale, cmp.delta, cmp.detail);
  }
  // Where the count may move for reasons other than the model's code.
  if (gi->value("compiler", "") != kCompiler)
    notes.push_back("case '" + c.name + "': instructions counted by a build of " +
                    gi->value("compiler", "?") + ", this is " + kCompiler);
  if (gi->value("valgrind", "") != cr.valgrind_version)
    notes.push_back("case '" + c.name + "': instructions counted by valgrind " +
                    gi->value("valgrind", "?") + ", this is " + cr.valgrind_version);
  return r;
}

}  // namespace fabricsim::regress::detail
