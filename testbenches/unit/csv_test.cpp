// CSV text fields (models/common/csv.h): names with commas, quotes, CR and LF are quoted per
// RFC 4180, and Python's csv module (what scripts/ read the results with) reads them back whole,
// each row with as many fields as its header.
#include "models/common/csv.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

TEST(CsvField, PlainTextIsLeftAsItIs) {
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("allreduce_ring#3@dp1"), "allreduce_ring#3@dp1");
  EXPECT_EQ(csv_field("void at::native::kernel<float>() 'x'"),
            "void at::native::kernel<float>() 'x'");
}

TEST(CsvField, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(csv_field("kernel<float, 4>(\"x\",\r\ny)"), "\"kernel<float, 4>(\"\"x\"\",\r\ny)\"");
}

// Rows written with csv_field, as collectives.csv, steps.csv and ranks.csv are, read back by
// Python's csv module: the same fields, row by row.
TEST(CsvField, PythonsCsvModuleReadsTheFieldsBack) {
  const std::vector<std::string> names = {"plain",        "a,b",    "say \"hi\"", "two\nlines",
                                          "crlf\r\nname", ",\"\n,", "",           " spaced "};
  const std::string dir = ::testing::TempDir();
  const std::string csv = dir + "/csv_test.csv", out = dir + "/csv_test.out";
  {
    std::ofstream f(csv, std::ios::binary);
    f << "rank,name,time_ns\n";
    for (size_t i = 0; i < names.size(); ++i) f << i << "," << csv_field(names[i]) << ",1.5\n";
  }
  // Each field's bytes in hex, one row a line (the fields themselves hold line breaks).
  const std::string script =
      "import csv,sys\n"
      "with open(sys.argv[1], newline='', encoding='utf-8') as f:\n"
      "    rows = list(csv.reader(f))\n"
      "with open(sys.argv[2], 'w') as o:\n"
      "    for r in rows: o.write(' '.join(x.encode().hex() or '-' for x in r) + '\\n')\n";
  const std::string py = dir + "/csv_test.py";
  std::ofstream(py) << script;
  const std::string cmd = std::string(FABRICSIM_PYTHON) + " " + py + " " + csv + " " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row;
    std::istringstream ss(line);
    for (std::string hex; ss >> hex;) {
      std::string bytes;
      for (size_t k = 0; hex != "-" && k + 1 < hex.size(); k += 2)
        bytes += static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16));
      row.push_back(bytes);
    }
    rows.push_back(row);
  }
  ASSERT_EQ(rows.size(), names.size() + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"rank", "name", "time_ns"}));
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(rows[i + 1], (std::vector<std::string>{std::to_string(i), names[i], "1.5"}));
  for (const auto& p : {csv, out, py}) std::remove(p.c_str());
}

}  // namespace
}  // namespace fabricsim
