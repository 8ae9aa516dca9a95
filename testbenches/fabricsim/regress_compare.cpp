// `fabricsim regress`: figures against goldens (regress.h: lookup, compare, config_diff).
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

}  // namespace fabricsim::regress
