#include "testbenches/fabricsim/regress.h"

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

namespace fabricsim::regress {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- the suite file -----------------------------------------------------------------------------

namespace {

std::string line_of(const std::string& file, const YAML::Node& n) {
  return file + ":" + std::to_string(n.Mark().line + 1);
}

// Reports keys of `map` not in `allowed` (all of them, like the configuration loader), naming the
// file, line and dotted key, with the closest known key when one is near.
void check_keys(const std::string& file, const YAML::Node& map, const std::string& where,
                const std::vector<std::string>& allowed) {
  std::string msg;
  std::set<std::string> seen;
  for (const auto& kv : map) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    const std::string full = where.empty() ? k : where + "." + k;
    if (!seen.insert(k).second) {
      msg += (msg.empty() ? "" : "\n") + line_of(file, kv.first) + ": duplicate key '" + full + "'";
      continue;
    }
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::string m = line_of(file, kv.first) + ": unknown key '" + full + "'";
    const std::string hint = config::closest_name(k, allowed);
    if (!hint.empty()) m += "; did you mean '" + (where.empty() ? hint : where + "." + hint) + "'?";
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    m += " (expected " + list + ")";
    msg += (msg.empty() ? "" : "\n") + m;
  }
  if (!msg.empty()) throw InputError(msg);
}

struct SuiteParser {
  std::string file;

  [[noreturn]] void fail(const YAML::Node& n, const std::string& key, const std::string& what) {
    throw InputError(line_of(file, n) + ": " + key + ": " + what);
  }

  std::string text(const YAML::Node& n, const std::string& key) {
    if (!n.IsScalar() || n.Scalar().empty()) fail(n, key, "expected a non-empty text");
    return n.Scalar();
  }

  int64_t whole(const YAML::Node& n, const std::string& key, int64_t lo, int64_t hi) {
    const std::string s = n.IsScalar() ? n.Scalar() : "";
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi)
      fail(n, key,
           "expected a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
               "], got '" + s + "'");
    return v;
  }

  double number(const YAML::Node& n, const std::string& key, double lo, bool lo_open) {
    const std::string s = n.IsScalar() ? n.Scalar() : "";
    char* end = nullptr;
    const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
    const bool ok = !s.empty() && end == s.c_str() + s.size() && std::isfinite(v) &&
                    (lo_open ? v > lo : v >= lo);
    if (!ok)
      fail(n, key, fmt::format("expected a number {} {}, got '{}'", lo_open ? ">" : ">=", lo, s));
    return v;
  }

  std::vector<std::string> sets(const YAML::Node& n, const std::string& key) {
    std::vector<std::string> out;
    if (n.IsScalar()) {
      out.push_back(n.Scalar());
    } else if (n.IsSequence()) {
      for (size_t i = 0; i < n.size(); ++i)
        out.push_back(text(n[i], fmt::format("{}[{}]", key, i)));
    } else {
      fail(n, key, "expected a list of KEY=VALUE overrides");
    }
    for (const auto& s : out)
      if (s.find('=') == std::string::npos || s.front() == '=')
        fail(n, key, "'" + s + "' is not KEY=VALUE");
    return out;
  }

  Tolerance tolerance(const YAML::Node& n, const std::string& key) {
    Tolerance t;
    if (n.IsScalar()) {
      if (n.Scalar() != "exact")
        fail(n, key, "expected 'exact' or a mapping {abs: X} / {rel: X}, got '" + n.Scalar() + "'");
      return t;
    }
    if (!n.IsMap() || n.size() == 0)
      fail(n, key, "expected 'exact' or a mapping {abs: X} / {rel: X}");
    check_keys(file, n, key, {"abs", "rel", "exact"});
    if (n["exact"]) {
      if (n.size() != 1 || !n["exact"].IsScalar() || n["exact"].Scalar() != "true")
        fail(n, key, "'exact: true' stands alone (no abs or rel beside it)");
      return t;
    }
    t.exact = false;
    if (n["abs"]) t.abs = number(n["abs"], key + ".abs", 0, false);
    if (n["rel"]) t.rel = number(n["rel"], key + ".rel", 0, false);
    return t;
  }

  std::vector<Metric> metrics(const YAML::Node& n, const std::string& key) {
    if (!n.IsMap()) fail(n, key, "expected a mapping of summary.json paths to tolerances");
    std::vector<Metric> out;
    std::set<std::string> seen;
    for (const auto& kv : n) {
      const std::string path = text(kv.first, key);
      if (!seen.insert(path).second) fail(kv.first, key, "'" + path + "' is listed twice");
      out.push_back({path, tolerance(kv.second, key + "['" + path + "']")});
    }
    return out;
  }

  SpeedSpec speed(const YAML::Node& n, const std::string& key) {
    if (!n.IsMap()) fail(n, key, "expected a mapping {repeats: N, max_ratio: X}");
    check_keys(file, n, key, {"repeats", "max_ratio", "judge"});
    SpeedSpec s;
    if (!n["repeats"] || !n["max_ratio"]) fail(n, key, "needs both repeats and max_ratio");
    s.repeats = static_cast<int>(whole(n["repeats"], key + ".repeats", 1, 99));
    s.max_ratio = number(n["max_ratio"], key + ".max_ratio", 0, true);
    if (n["judge"]) {
      s.judge = text(n["judge"], key + ".judge");
      if (s.judge != "wall" && s.judge != "cpu")
        fail(n["judge"], key + ".judge", "expected wall or cpu, got '" + s.judge + "'");
    }
    return s;
  }
};

bool valid_case_name(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

}  // namespace

Suite load_suite(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": cannot open suite: is a directory");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open suite: " + std::strerror(errno));
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::ParserException& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) +
                     ": YAML syntax error: " + e.msg);
  }
  SuiteParser p{path};
  if (!root.IsMap()) throw InputError(path + ": a suite is a mapping with a 'cases' list");
  check_keys(path, root, "", {"description", "root", "goldens", "defaults", "cases"});

  Suite s;
  s.path = path;
  s.name = fs::path(path).stem().string();
  const fs::path dir = fs::path(path).parent_path();
  if (root["description"]) s.description = p.text(root["description"], "description");
  fs::path base = dir;
  if (root["root"]) base = dir / p.text(root["root"], "root");
  s.goldens_path = (dir / (s.name + ".goldens.json")).string();
  if (root["goldens"]) s.goldens_path = (dir / p.text(root["goldens"], "goldens")).string();

  std::vector<std::string> default_sets;
  std::optional<int64_t> default_seed;
  std::vector<Metric> default_metrics;
  if (const auto d = root["defaults"]) {
    if (!d.IsMap()) p.fail(d, "defaults", "expected a mapping (set, seed, metrics)");
    check_keys(path, d, "defaults", {"set", "seed", "metrics"});
    if (d["set"]) default_sets = p.sets(d["set"], "defaults.set");
    if (d["seed"]) default_seed = p.whole(d["seed"], "defaults.seed", 0, INT64_MAX);
    if (d["metrics"]) default_metrics = p.metrics(d["metrics"], "defaults.metrics");
  }

  const auto cases = root["cases"];
  if (!cases || !cases.IsSequence() || cases.size() == 0)
    throw InputError(path + ": cases: expected a non-empty list of cases");
  std::set<std::string> names;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto n = cases[i];
    const std::string key = fmt::format("cases[{}]", i);
    if (!n.IsMap())
      p.fail(n, key, "expected a mapping (name, config, set, seed, metrics, speed, instructions)");
    check_keys(
        path, n, key,
        {"name", "config", "set", "seed", "metrics", "speed", "instructions", "description"});
    Case c;
    c.line = n.Mark().line + 1;
    if (!n["name"]) p.fail(n, key, "needs a name");
    c.name = p.text(n["name"], key + ".name");
    if (!valid_case_name(c.name))
      p.fail(n["name"], key + ".name", "'" + c.name + "': use letters, digits, '_', '-' and '.'");
    if (!names.insert(c.name).second)
      p.fail(n["name"], key + ".name", "case '" + c.name + "' is defined twice");
    if (!n["config"]) p.fail(n, key, "case '" + c.name + "' needs a config");
    c.config = p.text(n["config"], key + ".config");
    c.config_path = fs::path(c.config).is_absolute() ? c.config : (base / c.config).string();
    c.sets = default_sets;
    if (n["set"])
      for (auto& x : p.sets(n["set"], key + ".set")) c.sets.push_back(std::move(x));
    c.seed = default_seed;
    if (n["seed"]) c.seed = p.whole(n["seed"], key + ".seed", 0, INT64_MAX);
    c.metrics = default_metrics;
    if (n["metrics"])
      for (auto& m : p.metrics(n["metrics"], key + ".metrics")) {
        auto it = std::find_if(c.metrics.begin(), c.metrics.end(),
                               [&](const Metric& x) { return x.path == m.path; });
        if (it != c.metrics.end())
          *it = m;  // the case's own tolerance wins over the default's
        else
          c.metrics.push_back(m);
      }
    if (n["speed"]) c.speed = p.speed(n["speed"], key + ".speed");
    if (n["instructions"])
      c.instructions = InstructionSpec{p.tolerance(n["instructions"], key + ".instructions")};
    if (c.metrics.empty() && c.speed.repeats == 0 && !c.instructions)
      p.fail(n, key, "case '" + c.name + "' watches nothing: give metrics, speed or instructions");
    s.cases.push_back(std::move(c));
  }
  return s;
}

// ---- figures ------------------------------------------------------------------------------------

namespace {

struct PathPart {
  std::string name;
  long index = -1;
};

bool split_path(const std::string& path, std::vector<PathPart>& parts) {
  parts.clear();
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos || close == i + 1) return false;
      long v = 0;
      const auto [p, ec] = std::from_chars(path.data() + i + 1, path.data() + close, v);
      if (ec != std::errc() || p != path.data() + close || v < 0) return false;
      parts.push_back({"", v});
      i = close + 1;
      if (i < path.size() && path[i] == '.') ++i;
      continue;
    }
    const size_t end = path.find_first_of(".[", i);
    const size_t stop = end == std::string::npos ? path.size() : end;
    if (stop == i) return false;
    parts.push_back({path.substr(i, stop - i), -1});
    i = stop;
    if (i < path.size() && path[i] == '.') ++i;
  }
  return !parts.empty();
}

const json* walk(const json* cur, const std::vector<PathPart>& parts, size_t i) {
  if (i == parts.size()) return cur;
  if (parts[i].index >= 0) {
    if (!cur->is_array() || static_cast<size_t>(parts[i].index) >= cur->size()) return nullptr;
    return walk(&(*cur)[static_cast<size_t>(parts[i].index)], parts, i + 1);
  }
  if (!cur->is_object()) return nullptr;
  size_t last = i;  // the run of names from i
  while (last + 1 < parts.size() && parts[last + 1].index < 0) ++last;
  for (size_t j = last + 1; j-- > i;) {  // longest key first
    std::string key = parts[i].name;
    for (size_t k = i + 1; k <= j; ++k) key += "." + parts[k].name;
    const auto it = cur->find(key);
    if (it == cur->end()) continue;
    if (const json* r = walk(&*it, parts, j + 1)) return r;
  }
  return nullptr;
}

bool is_int(const json& v) {
  return v.is_number_integer();
}

}  // namespace

const json* lookup(const json& doc, const std::string& path) {
  std::vector<PathPart> parts;
  if (!split_path(path, parts)) return nullptr;
  return walk(&doc, parts, 0);
}

std::string Tolerance::describe() const {
  if (exact) return "exact";
  if (abs > 0 && rel > 0) return fmt::format("abs {:g} or rel {:g}%", abs, rel * 100);
  if (rel > 0) return fmt::format("rel {:g}%", rel * 100);
  return fmt::format("abs {:g}", abs);
}

std::string show(const json& v) {
  if (v.is_number_float()) return fmt::format("{:.7g}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

namespace {

std::string numeric_delta(const json& golden, const json& now) {
  if (is_int(golden) && is_int(now)) {
    // Counters fit in int64 comfortably; go through long double to keep unsigned values exact.
    const long double d = now.get<long double>() - golden.get<long double>();
    return d == 0 ? "0" : fmt::format("{:+.0f}", static_cast<double>(d));
  }
  const double g = golden.get<double>(), n = now.get<double>(), d = n - g;
  if (d == 0) return "0";
  if (g == 0) return fmt::format("{:+.4g}", d);
  return fmt::format("{:+.4g} ({:+.3g}%)", d, 100 * d / std::fabs(g));
}

}  // namespace

Comparison compare(const json& golden, const json& now, const Tolerance& t) {
  Comparison c;
  const bool numbers = golden.is_number() && now.is_number();
  if (t.exact) {
    // JSON values: numbers by value (the golden was read back from the same shortest round-trip
    // text the summary uses, so a deterministic figure is equal to the last bit), others by type
    // and content.
    c.pass = numbers ? golden.get<double>() == now.get<double>() &&
                           (!is_int(golden) || !is_int(now) ||
                            golden.get<long double>() == now.get<long double>())
                     : golden == now;
    c.delta = numbers ? numeric_delta(golden, now) : (c.pass ? "0" : "differs");
    if (!c.pass) c.detail = "differs (exact)";
    return c;
  }
  if (!numbers) {
    c.pass = false;
    c.delta = golden == now ? "0" : "differs";
    c.detail = "a tolerance band needs numbers (golden " + golden.dump() + ", now " + now.dump() +
               "); use exact";
    return c;
  }
  const double g = golden.get<double>(), n = now.get<double>();
  const double allowed = std::max(t.abs, t.rel * std::fabs(g));
  c.delta = numeric_delta(golden, now);
  // The edge belongs to the band; a few ulps of slack keep it there through the subtraction's
  // rounding (0.501 - 0.5 is 0.0010000000000000009 in doubles).
  const double slack =
      8 * std::numeric_limits<double>::epsilon() * std::max(std::fabs(g), std::fabs(n));
  c.pass = std::fabs(n - g) <= allowed + slack;  // false for NaN
  if (!c.pass)
    c.detail = fmt::format("|delta| {:.4g} > {:.4g} allowed ({})", std::fabs(n - g), allowed,
                           t.describe());
  return c;
}

std::string fnv1a64(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

namespace {

void flatten(const YAML::Node& n, const std::string& key, std::map<std::string, std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n)
      flatten(kv.second, key.empty() ? kv.first.Scalar() : key + "." + kv.first.Scalar(), out);
  } else if (n.IsSequence()) {
    bool scalars = true;
    for (const auto& e : n) scalars = scalars && (e.IsScalar() || e.IsNull());
    if (scalars) {  // a list of values reads best whole: [1, 2, 3]
      std::string s = "[";
      for (size_t i = 0; i < n.size(); ++i)
        s += (i ? ", " : "") + (n[i].IsNull() ? "~" : n[i].Scalar());
      out[key] = s + "]";
    } else {
      for (size_t i = 0; i < n.size(); ++i) flatten(n[i], fmt::format("{}[{}]", key, i), out);
    }
  } else {
    out[key] = n.IsScalar() ? n.Scalar() : "~";
  }
}

std::map<std::string, std::string> flat_yaml(const std::string& text) {
  std::map<std::string, std::string> out;
  try {
    flatten(YAML::Load(text), "", out);
  } catch (const YAML::Exception&) {
    out["(unreadable)"] = text.substr(0, 60);
  }
  return out;
}

}  // namespace

std::vector<std::string> config_diff(const std::string& before, const std::string& after,
                                     size_t limit) {
  const auto a = flat_yaml(before), b = flat_yaml(after);
  std::vector<std::string> out;
  size_t total = 0;
  auto add = [&](const std::string& line) {
    if (++total <= limit) out.push_back(line);
  };
  for (const auto& [k, v] : a) {
    const auto it = b.find(k);
    if (it == b.end())
      add(k + ": " + v + " -> (gone)");
    else if (it->second != v)
      add(k + ": " + v + " -> " + it->second);
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) add(k + ": (new) -> " + v);
  if (total > limit) out.push_back(fmt::format("... and {} more", total - limit));
  return out;
}

// ---- running a suite ----------------------------------------------------------------------------

namespace {

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

// `fabricsim run ARGS --out OUT`, behind `prefix` when one is given (valgrind and its options).
Spawned spawn_run(const Hooks& hooks, const std::vector<std::string>& args, const fs::path& out,
                  const std::vector<std::string>& prefix = {}) {
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

struct SpeedFigures {
  double wall_mref = 0, cpu_mref = 0;
};

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

// ---- instruction counts -------------------------------------------------------------------------

// Overrides of a callgrind run: one thread. The helper threads' hand-over loops spin or sleep by
// how the threads happen to interleave, which would add a count that varies from run to run;
// results are the same either way (both are speed settings).
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

constexpr const char* kInstructionRow = "instructions per packet";

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

}  // namespace

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
  int changed = 0;
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
    const json* g = goldens.contains("cases") && goldens["cases"].contains(c.name)
                        ? &goldens["cases"][c.name]
                        : nullptr;
    if (!g) {
      std::cerr << where << "missing golden (write it with --update-goldens)\n";
      ++changed;
      continue;
    }
    if ((*g)["config"].value("fnv1a64", "") == fnv1a64(resolved)) continue;
    ++changed;
    std::cerr << where << "the resolved configuration differs from the golden's "
              << "(a default changed: update the goldens in the same commit):";
    for (const auto& l :
         config_diff(join_lines((*g)["config"].value("resolved", json())), resolved))
      std::cerr << "\n    " << l;
    std::cerr << "\n";
  }
  std::cout << suite.name << ": " << suite.cases.size() - static_cast<size_t>(changed) << " of "
            << suite.cases.size() << " cases' configurations match their goldens\n";
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

int run(const Options& opt, const Hooks& hooks) {
  if (opt.check_configs) return check_configs(opt, hooks);
  const Suite suite = load_suite(opt.suite);
  if (opt.jobs < 1) throw InputError("--jobs: expected at least 1");
  std::vector<const Case*> selected;
  {
    std::vector<std::string> names;
    for (const auto& c : suite.cases) names.push_back(c.name);
    for (const auto& want : opt.cases)
      if (std::find(names.begin(), names.end(), want) == names.end()) {
        const std::string hint = config::closest_name(want, names);
        throw InputError("--case: " + suite.path + " has no case '" + want + "'" +
                         (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
      }
    for (const auto& c : suite.cases)
      if (opt.cases.empty() ||
          std::find(opt.cases.begin(), opt.cases.end(), c.name) != opt.cases.end())
        selected.push_back(&c);
  }
  const std::string valgrind = valgrind_for(selected, hooks);  // before anything runs
  std::vector<std::string> notes;
  auto problem = [&](const std::string& case_name, const std::string& what) {
    return suite.path + ": case '" + case_name + "': " + what;
  };

  // The goldens.
  json goldens;
  std::string goldens_error;  // why no case can be compared
  std::error_code ec;
  if (fs::exists(suite.goldens_path, ec)) {
    goldens = read_goldens(suite.goldens_path);
    const int format = goldens.value("format", 0);
    if (format != kGoldensFormat)
      goldens_error = fmt::format(
          "refusing to compare: {} has goldens format {}, this fabricsim reads format {}",
          suite.goldens_path, format, kGoldensFormat);
  } else {
    goldens_error = "missing golden: no goldens file " + suite.goldens_path +
                    " (write it with --update-goldens)";
  }
  const json no_cases = json::object();
  const json& golden_cases =
      goldens_error.empty() && goldens.contains("cases") && goldens["cases"].is_object()
          ? goldens["cases"]
          : no_cases;

  // The work directory.
  const bool temp_work = opt.work.empty();
  fs::path work;
  if (temp_work) {
    std::string tmpl = (fs::temp_directory_path() / "fabricsim-regress-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
    work = tmpl;
  } else {
    work = opt.work;
    fs::create_directories(work, ec);
    if (ec) throw InputError("--work: cannot create " + work.string() + ": " + ec.message());
  }

  // Resolve every configuration first: a case that no longer resolves is reported, not run.
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

  const auto t_start = std::chrono::steady_clock::now();
  run_cases(runs, opt, hooks, work, valgrind);
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();

  // Compare (or write), row by row.
  std::vector<Row> rows;
  json new_cases = json::object();
  for (auto& cr : runs) {
    const Case& c = *cr.c;
    const json* g = cr.golden;
    const RunResult* first = cr.runs.empty() ? nullptr : &cr.runs.front();
    const std::string run_error = run_error_of(cr);

    // A case-wide problem fails every row of the case with the same message.
    std::string case_problem, case_type;
    if (!cr.config_error.empty()) {
      case_problem = cr.config_error;
      case_type = "config";
    } else if (!run_error.empty()) {
      case_problem = run_error;
      case_type = "run";
    }
    if (!opt.update && case_problem.empty())
      std::tie(case_problem, case_type) =
          golden_problem(cr, goldens_error, suite.goldens_path, work, hooks, notes);

    std::vector<std::string> row_names;
    for (const auto& m : c.metrics) row_names.push_back(m.path);
    if (c.speed.repeats)
      row_names.push_back(c.speed.judge == "cpu" ? "speed (cpu)" : "speed (wall)");
    if (c.instructions) row_names.push_back(kInstructionRow);

    if (!case_problem.empty()) {
      for (const auto& name : row_names) {
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
        r.type = case_type;
        r.verdict = case_type == "missing_golden" ? "NO GOLDEN"
                    : case_type == "schema"       ? "REFUSED"
                    : case_type == "config"       ? "CONFIG"
                                                  : "RUN FAILED";
        r.message = problem(c.name, name + ": " + case_problem);
        rows.push_back(std::move(r));
      }
      continue;
    }

    // Figures (compared, or recorded).
    json metrics = json::object();
    bool case_ok = true;
    for (const auto& m : c.metrics) {
      Row r;
      r.case_name = c.name;
      r.metric = m.path;
      r.time_s = cr.time_s;
      const json* now = lookup(first->summary, m.path);
      const json* old = g && g->contains("metrics") && (*g)["metrics"].contains(m.path)
                            ? &(*g)["metrics"][m.path]
                            : nullptr;
      r.golden = old ? show(*old) : "-";
      r.now = now ? show(*now) : "-";
      r.delta = old && now && old->is_number() && now->is_number()
                    ? compare(*old, *now, m.tol).delta
                    : "-";
      if (!now) {
        r.pass = case_ok = false;
        r.type = "metric";
        r.verdict = "NO SUCH METRIC";
        r.message = problem(c.name, m.path +
                                        ": not in summary.json (see docs/results.md for "
                                        "its keys)");
      } else if (opt.update) {
        metrics[m.path] = *now;
        r.verdict = "written";
      } else if (!old) {
        r.pass = false;
        r.type = "missing_golden";
        r.verdict = "NO GOLDEN";
        r.message = problem(c.name, m.path +
                                        ": missing golden: the golden of this case has no "
                                        "value for this metric (--update-goldens)");
      } else {
        const Comparison cmp = compare(*old, *now, m.tol);
        r.pass = cmp.pass;
        r.verdict = cmp.pass ? "ok (" + m.tol.describe() + ")" : "REGRESSION";
        if (!cmp.pass) {
          r.type = "regression";
          r.message = problem(c.name, m.path + ": golden " + r.golden + ", now " + r.now +
                                          ", delta " + cmp.delta + ": " + cmp.detail);
        }
      }
      rows.push_back(std::move(r));
    }

    json speed_record;
    if (c.speed.repeats)
      rows.push_back(speed_row(
          cr, opt.update, [&](const std::string& what) { return problem(c.name, what); },
          speed_record));

    json instruction_record;
    if (c.instructions) {
      rows.push_back(
          instruction_row(cr, opt.update, problem(c.name, ""), instruction_record, notes));
      case_ok = case_ok && rows.back().pass;
    }

    if (opt.update && case_ok) {
      json entry = {{"fabricsim_version", hooks.version},
                    {"summary_schema_version", summary_schema(first->summary)},
                    {"config",
                     {{"file", c.config},
                      {"set", cr.sets},
                      {"seed", c.seed ? json(*c.seed) : json(nullptr)},
                      {"fnv1a64", fnv1a64(cr.resolved)},
                      {"resolved", lines_of(cr.resolved)}}},
                    {"metrics", metrics}};
      if (!speed_record.is_null()) entry["speed"] = speed_record;
      if (!instruction_record.is_null()) entry["instructions"] = instruction_record;
      new_cases[c.name] = entry;
    }
  }

  if (opt.update) {
    // Cases not run this time keep their goldens; goldens of cases gone from the suite go.
    json cases = json::object();
    if (goldens_error.empty() || goldens_error.rfind("missing", 0) != 0)
      for (const auto& [name, entry] : golden_cases.items()) {
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
  } else {
    for (const auto& [name, entry] : golden_cases.items()) {
      (void)entry;
      if (std::none_of(suite.cases.begin(), suite.cases.end(),
                       [&](const Case& c) { return c.name == name; }))
        notes.push_back("the goldens hold case '" + name + "', which the suite no longer has");
    }
  }

  // Report.
  size_t failed = 0;
  for (const auto& r : rows) failed += r.pass ? 0 : 1;
  std::cout << "fabricsim regress " << suite.path << ": " << selected.size() << " case"
            << (selected.size() == 1 ? "" : "s") << ", goldens " << suite.goldens_path
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

  if (!opt.junit.empty()) write_atomically(opt.junit, junit_xml(suite.name, rows, total_s, notes));
  if (!opt.json.empty()) write_json_report(opt.json, suite, rows, runs, failed == 0);
  if (temp_work) {
    if (failed) {
      std::cout << "runs kept in " << work.string() << "\n";
    } else {
      fs::remove_all(work, ec);
    }
  }
  return failed ? 1 : 0;
}

}  // namespace fabricsim::regress
