// How configuration values are shown (messages, YAML output, the reference) and their ranges:
// shared by the loader (config.cpp) and the writers (config_output.cpp). Internal to models/config.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/common/units.h"

namespace fabricsim::config::detail {

inline std::string join_key(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

// An applies_when condition's text with each "{key}" named in full below `section` (in backticks
// when `code`); the full names go to `keys` when given. A '{' without its '}' is kept as it is.
inline std::string expand_when(const std::string& when, const std::string& section, bool code,
                               std::vector<std::string>* keys = nullptr) {
  std::string out;
  for (size_t i = 0; i < when.size();) {
    const size_t open = when.find('{', i);
    const size_t close = open == std::string::npos ? open : when.find('}', open);
    if (close == std::string::npos) {
      out += when.substr(i);
      break;
    }
    const std::string key = join_key(section, when.substr(open + 1, close - open - 1));
    out += when.substr(i, open - i) + (code ? "`" + key + "`" : key);
    if (keys) keys->push_back(key);
    i = close + 1;
  }
  return out;
}

// ---- value text (messages, YAML output, docs) --------------------------------------------------

inline std::string text(int64_t v) {
  return std::to_string(v);
}
inline std::string text(double v) {
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  return fmt::format("{}", v);  // shortest form that reads back to the same double
}
inline std::string text(bool v) {
  return v ? "true" : "false";
}
inline std::string text(Time v) {
  return v.str();
}
inline std::string text(Bytes v) {
  return v.str();
}
inline std::string text(BitRate v) {
  return v.str();
}
inline std::string text(Frequency v) {
  return v.str();
}
inline std::string text(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + text(v[i]);
  return s + "]";
}

// Comparable magnitude of each param type (not every unit type defines all comparisons).
inline int64_t magnitude(int64_t v) {
  return v;
}
inline double magnitude(double v) {
  return v;
}
inline int64_t magnitude(Time v) {
  return v.as_fs();
}
inline uint64_t magnitude(Bytes v) {
  return v.count();
}
inline uint64_t magnitude(BitRate v) {
  return v.as_bps();
}
inline uint64_t magnitude(Frequency v) {
  return v.as_hz();
}

// Bounds at the edge of a type's domain are "no bound": they are left out of messages and docs.
inline bool has_min(int64_t v) {
  return v != INT64_MIN;
}
inline bool has_max(int64_t v) {
  return v != INT64_MAX;
}
inline bool has_min(double v) {
  return v > -DBL_MAX;
}
inline bool has_max(double v) {
  return v < DBL_MAX;
}
inline bool has_min(Time v) {
  return v.as_fs() > 0;
}  // units never parse negative
inline bool has_max(Time v) {
  return v != Time::max();
}
template <class T>
bool has_min(T v) {
  return magnitude(v) > 0;
}
template <class T>
bool has_max(T v) {
  return magnitude(v) != UINT64_MAX;
}

template <class T>
std::string range_text(T min, T max) {
  const bool lo = has_min(min), hi = has_max(max);
  if (lo && hi) return "[" + text(min) + ", " + text(max) + "]";
  if (lo) return ">= " + text(min);
  if (hi) return "<= " + text(max);
  return "";
}

}  // namespace fabricsim::config::detail
