// The fields of the line-based input files (packet traces, message workloads): parsed strictly,
// and shown safely in the error messages that name them.
#pragma once

#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace fabricsim::traffic {

// The whole of `s` as a decimal integer (no sign games, no trailing bytes).
inline bool parse_int(const std::string& s, int64_t& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// A field as an error message shows it: at most 40 characters, anything unprintable escaped (a
// binary file's NUL would otherwise cut the message short).
inline std::string shown(const std::string& field) {
  constexpr size_t kMax = 40;
  std::string out;
  for (size_t i = 0; i < field.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(field[i]);
    out += std::isprint(c) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  if (field.size() > kMax) out += fmt::format("... ({} characters)", field.size());
  return out;
}

// A parser's error message about `field` (parse_time and parse_bytes quote it whole, and parts of
// it, its unit say) as an error shows it: the field as shown() shows it, anything else
// unprintable escaped, the whole at most 120 characters. A 10 MB field must not make a 10 MB
// message.
inline std::string shown_in(std::string err, const std::string& field) {
  const size_t at = field.empty() ? std::string::npos : err.find(field);
  if (at != std::string::npos) err.replace(at, field.size(), shown(field));
  constexpr size_t kMax = 120;
  std::string out;
  for (size_t i = 0; i < err.size() && out.size() < kMax; ++i) {
    const auto c = static_cast<unsigned char>(err[i]);
    out += std::isprint(c) ? std::string(1, err[i]) : fmt::format("\\x{:02x}", c);
  }
  if (out.size() >= kMax && err.size() > kMax) out += "...";
  return out;
}

}  // namespace fabricsim::traffic
