// `fabricsim regress`: the suite file (regress.h: load_suite).
#include "testbenches/fabricsim/regress.h"

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

}  // namespace fabricsim::regress
