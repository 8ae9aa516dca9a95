// Strict, exact unit parsing and formatting.
//
// Numbers are parsed as decimal digits into an integer mantissa and a count of fraction digits and
// scaled with 128-bit integer arithmetic, never through double: "106.25Gbps" must be exactly
// 106250000000 bps, and a value that is not a whole number of the base unit is an error instead of
// being silently rounded.
#include "models/common/units.h"

#include <cctype>
#include <cstddef>

namespace fabricsim {
namespace {

using u128 = unsigned __int128;

struct Unit {
  const char* name;
  uint64_t mult;  // value of one `name` in the base unit
};

struct Quantity {
  const char* what;     // for messages: "a time"
  const char* base;     // base unit as spelled in "not a whole number of <base>"
  const char* example;  // a valid value, for messages
  const Unit* units;
  size_t n_units;
  bool bare_zero;        // whether "0" without a unit is accepted
  uint64_t max;          // largest representable value in the base unit
  int max_decimals;      // str(): fraction digits allowed before falling back to a smaller unit
  const char* zero_str;  // str() of zero
};

constexpr Unit kTimeUnits[] = {{"fs", 1},
                               {"ps", 1000ull},
                               {"ns", 1000000ull},
                               {"us", 1000000000ull},
                               {"ms", 1000000000000ull},
                               {"s", 1000000000000000ull}};
constexpr Unit kByteUnits[] = {{"B", 1},
                               {"KB", 1000ull},
                               {"MB", 1000000ull},
                               {"GB", 1000000000ull},
                               {"TB", 1000000000000ull},
                               {"KiB", 1ull << 10},
                               {"MiB", 1ull << 20},
                               {"GiB", 1ull << 30},
                               {"TiB", 1ull << 40}};
constexpr Unit kRateUnits[] = {{"bps", 1},
                               {"kbps", 1000ull},
                               {"Mbps", 1000000ull},
                               {"Gbps", 1000000000ull},
                               {"Tbps", 1000000000000ull}};
constexpr Unit kFreqUnits[] = {
    {"Hz", 1}, {"kHz", 1000ull}, {"MHz", 1000000ull}, {"GHz", 1000000000ull}};

template <size_t N>
constexpr size_t count(const Unit (&)[N]) {
  return N;
}

// Sizes print as whole numbers only: "165660324B" reads better than "165660.324KB".
constexpr Quantity kTime{"a time", "fs",      "500ns", kTimeUnits, count(kTimeUnits),
                         true,     INT64_MAX, 3,       "0ns"};
constexpr Quantity kBytes{"a size", "bytes",    "64KiB", kByteUnits, count(kByteUnits),
                          true,     UINT64_MAX, 0,       "0B"};
constexpr Quantity kRate{"a bit rate", "bps",      "800Gbps", kRateUnits, count(kRateUnits),
                         false,        UINT64_MAX, 3,         "0bps"};
constexpr Quantity kFreq{"a frequency", "Hz",       "1.35GHz", kFreqUnits, count(kFreqUnits),
                         false,         UINT64_MAX, 3,         "0Hz"};

std::string unit_list(const Quantity& q) {
  std::string s;
  for (size_t i = 0; i < q.n_units; ++i) {
    if (i) s += ", ";
    s += q.units[i].name;
  }
  return s;
}

bool iequal(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i]; ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return i == a.size() && !b[i];
}

std::string u128_str(u128 v) {
  if (v == 0) return "0";
  std::string s;
  for (; v; v /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
  return s;
}

u128 pow10(int n) {
  u128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

bool parse_quantity(const std::string& s, const Quantity& q, uint64_t& out, std::string& err) {
  if (s.empty()) {
    err = std::string("empty value; expected ") + q.what + " such as " + q.example;
    return false;
  }
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      err = "'" + s + "' must not contain whitespace; write e.g. " + q.example;
      return false;
    }
  }
  if (s[0] == '-') {
    err = s + " is negative; only non-negative values are allowed";
    return false;
  }
  if (!std::isdigit(static_cast<unsigned char>(s[0]))) {
    err = s + " does not start with a number; expected " + q.what + " such as " + q.example;
    return false;
  }

  // Number: digits [ '.' digits ].
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  const std::string int_digits = s.substr(0, i);
  std::string frac_digits;
  if (i < s.size() && s[i] == '.') {
    const size_t start = ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    frac_digits = s.substr(start, i - start);
    if (frac_digits.empty()) {
      err = s + " has no digits after the decimal point";
      return false;
    }
  }
  const std::string unit = s.substr(i);
  // Trailing fraction zeros carry no value; dropping them keeps the mantissa small.
  while (!frac_digits.empty() && frac_digits.back() == '0') frac_digits.pop_back();

  const u128 kMax = ~static_cast<u128>(0);
  u128 mantissa = 0;
  for (char c : int_digits + frac_digits) {
    const unsigned d = static_cast<unsigned>(c - '0');
    if (mantissa > (kMax - d) / 10) {
      err = s + " has too many digits";
      return false;
    }
    mantissa = mantissa * 10 + d;
  }

  const Unit* u = nullptr;
  for (size_t k = 0; k < q.n_units; ++k) {
    if (unit == q.units[k].name) u = &q.units[k];
  }
  if (!u) {
    if (unit.empty()) {
      if (q.bare_zero && mantissa == 0) {
        out = 0;
        return true;
      }
      err = s + " has no unit; expected one of " + unit_list(q);
      return false;
    }
    err = s + " has unknown unit '" + unit + "'; expected one of " + unit_list(q);
    // Case matters ("Mb" would be megabits, "mHz" millihertz), so only hint, never guess.
    for (size_t k = 0; k < q.n_units; ++k) {
      if (iequal(unit, q.units[k].name))
        err += std::string(" (did you mean '") + q.units[k].name + "'?)";
    }
    return false;
  }

  if (mantissa > kMax / u->mult) {
    err = s + " is too large";
    return false;
  }
  const u128 scaled = mantissa * u->mult;
  const int decimals = static_cast<int>(frac_digits.size());
  // 10^39 exceeds 2^128, so a non-zero product can only be divisible by 10^decimals up to 38.
  if (scaled != 0 && (decimals > 38 || scaled % pow10(decimals) != 0)) {
    err = s + " is not a whole number of " + q.base;
    return false;
  }
  const u128 value = decimals > 38 ? 0 : scaled / pow10(decimals);
  if (value > q.max) {
    err = s + " is too large (maximum " + u128_str(q.max) + q.base + ")";
    return false;
  }
  out = static_cast<uint64_t>(value);
  return true;
}

// Largest unit in which `v` is at least 1 and needs at most q.max_decimals fraction digits; the
// base unit always qualifies, so the result is exact and parses back to `v`.
std::string format_quantity(uint64_t v, const Quantity& q) {
  if (v == 0) return q.zero_str;
  const u128 scale = pow10(q.max_decimals);
  const Unit* best = nullptr;
  for (size_t k = 0; k < q.n_units; ++k) {
    const Unit& u = q.units[k];
    if (v < u.mult || (static_cast<u128>(v) * scale) % u.mult != 0) continue;
    if (!best || u.mult > best->mult) best = &u;
  }
  std::string s = u128_str(v / best->mult);
  const uint64_t rem = v % best->mult;
  if (rem != 0) {
    std::string frac = u128_str(static_cast<u128>(rem) * scale / best->mult);
    frac.insert(0, static_cast<size_t>(q.max_decimals) - frac.size(), '0');
    while (frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s + best->name;
}

}  // namespace

std::string Time::str() const {
  if (fs_ < 0) return "-" + format_quantity(0 - static_cast<uint64_t>(fs_), kTime);
  return format_quantity(static_cast<uint64_t>(fs_), kTime);
}

std::string Bytes::str() const {
  return format_quantity(b_, kBytes);
}
std::string BitRate::str() const {
  return format_quantity(bps_, kRate);
}
std::string Frequency::str() const {
  return format_quantity(hz_, kFreq);
}

bool parse_time(const std::string& s, Time& out, std::string& err) {
  uint64_t v = 0;
  if (!parse_quantity(s, kTime, v, err)) return false;
  out = Time::fs(static_cast<int64_t>(v));
  return true;
}

bool parse_bytes(const std::string& s, Bytes& out, std::string& err) {
  uint64_t v = 0;
  if (!parse_quantity(s, kBytes, v, err)) return false;
  out = Bytes(v);
  return true;
}

bool parse_bitrate(const std::string& s, BitRate& out, std::string& err) {
  uint64_t v = 0;
  if (!parse_quantity(s, kRate, v, err)) return false;
  out = BitRate::bps(v);
  return true;
}

bool parse_frequency(const std::string& s, Frequency& out, std::string& err) {
  uint64_t v = 0;
  if (!parse_quantity(s, kFreq, v, err)) return false;
  out = Frequency::hz(v);
  return true;
}

}  // namespace fabricsim
