// Text fields of the CSV files a run writes (collectives.csv, steps.csv, ranks.csv, ...;
// docs/results.md), per RFC 4180.
#pragma once

#include <string>
#include <string_view>

namespace fabricsim {

// `s` as one CSV field: as it is unless it holds a ',', a '"', a CR or a LF, else between double
// quotes with each '"' doubled (RFC 4180, 2.6 and 2.7). Names can hold any of these: a Chakra node
// name is a PyTorch or Kineto kernel name ("void at::native::kernel<float, 4>(...)", some with a
// newline), a text workload's communicator any word. Unquoted, such a name shifts every column
// after it; quoted, Python's csv module, pandas and spreadsheets read it back whole.
inline std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace fabricsim
