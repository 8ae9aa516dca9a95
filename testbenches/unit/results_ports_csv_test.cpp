// ports.csv's rows (write_results): an idle port's row comes from one template formatted once,
// a used port's from its own figures; both as the one format would print them, a negative zero
// ("-0.000") included.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/sim/results.h"

namespace fabricsim::sim {
namespace {

std::vector<std::string> ports_csv(const RunReport& r) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("results_ports_csv_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  write_results(r, Time::ns(1), dir.string());
  std::ifstream f(dir / "ports.csv");
  std::vector<std::string> rows;
  for (std::string line; std::getline(f, line);) rows.push_back(line);
  std::filesystem::remove_all(dir);
  return rows;
}

TEST(ResultsPortsCsv, IdleAndUsedPortsPrintTheirOwnFigures) {
  RunReport r;
  SwitchReport s;
  s.name = "leaf,0";  // a name that needs quoting
  s.ports.resize(4);
  s.ports[1].host = 3;
  s.ports[1].peer = "host3";
  s.ports[1].peer_port = 0;
  s.ports[1].rx_packets = 12;
  s.ports[1].offered_load = 0.25;
  s.ports[1].latency.p99 = 1234.5678;
  s.ports[2].underrun_ns = -0.0;  // prints "-0.000": not the idle row
  s.ports[3].buffer_mean_bytes = 1e-9;
  r.switches.push_back(s);
  const std::vector<std::string> rows = ports_csv(r);
  ASSERT_EQ(rows.size(), 5u);
  const std::string zeros =
      "0,0,0,0,0,0.000000,0.000000,0,0.000,0.000,0.000,0.000,0.000,0,0.0,0,0,0.000,0,0,0,0.000,0,"
      "0,0,";
  EXPECT_EQ(rows[1], "\"leaf,0\",0,-1," + zeros + "0.000,,-1");
  EXPECT_EQ(rows[2],
            "\"leaf,0\",1,3,12,0,0,0,0,0.250000,0.000000,0,0.000,0.000,1234.568,0.000,0.000,0,0.0,"
            "0,0,0.000,0,0,0,0.000,0,0,0,0.000,host3,0");
  EXPECT_EQ(rows[3], "\"leaf,0\",2,-1," + zeros + "-0.000,,-1");
  EXPECT_EQ(rows[4],
            "\"leaf,0\",3,-1,0,0,0,0,0,0.000000,0.000000,0,0.000,0.000,0.000,0.000,0.000,0,0.0,0,0,"
            "0.000,0,0,0,0.000,0,0,0,0.000,,-1");
}

}  // namespace
}  // namespace fabricsim::sim

// The library links SystemC, whose runtime asks for an sc_main; this test starts no kernel.
int sc_main(int, char**) {
  return 0;
}
