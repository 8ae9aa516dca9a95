// fabricsim regress's outputs for people and CI: the table of rows and JUnit XML (regress.h).
#include <algorithm>

#include <fmt/format.h>

#include "testbenches/fabricsim/regress.h"

namespace fabricsim::regress {

std::string format_table(const std::vector<Row>& rows) {
  const std::vector<std::string> head = {"case", "metric", "golden", "now", "delta", "verdict"};
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  auto cells = [](const Row& r) {
    return std::vector<std::string>{r.case_name, r.metric, r.golden, r.now, r.delta, r.verdict};
  };
  for (const auto& r : rows) {
    const auto c = cells(r);
    for (size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i].size());
  }
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      s += c[i];
      if (i + 1 < c.size()) s += std::string(w[i] - c[i].size() + 2, ' ');
    }
    return s + "\n";
  };
  std::string out = line(head);
  for (const auto& r : rows) out += line(cells(r));
  return out;
}

namespace {

std::string xml_escape(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab and line breaks.
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
          o += '?';
        else
          o += ch;
    }
  }
  return o;
}

}  // namespace

std::string junit_xml(const std::string& suite_name, const std::vector<Row>& rows, double time_s,
                      const std::vector<std::string>& notes) {
  size_t failures = 0;
  for (const auto& r : rows) failures += r.pass ? 0 : 1;
  const std::string head = fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{:.3f}\"",
                                       rows.size(), failures, time_s);
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"fabricsim regress\" " + head + ">\n";
  x += "  <testsuite name=\"regress." + xml_escape(suite_name) + "\" " + head + " skipped=\"0\">\n";
  for (const auto& r : rows) {
    x += fmt::format("    <testcase classname=\"regress.{}.{}\" name=\"{}\" time=\"{:.3f}\"",
                     xml_escape(suite_name), xml_escape(r.case_name), xml_escape(r.metric),
                     r.time_s);
    if (r.pass) {
      x += "/>\n";
      continue;
    }
    x += ">\n      <failure type=\"" + xml_escape(r.type) + "\" message=\"" +
         xml_escape(r.message) + "\">" + xml_escape(r.message) +
         fmt::format(" [golden {}, now {}, delta {}]", xml_escape(r.golden), xml_escape(r.now),
                     xml_escape(r.delta)) +
         "</failure>\n    </testcase>\n";
  }
  if (!notes.empty()) {
    std::string all;
    for (const auto& n : notes) all += n + "\n";
    x += "    <system-out>" + xml_escape(all) + "</system-out>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace fabricsim::regress
