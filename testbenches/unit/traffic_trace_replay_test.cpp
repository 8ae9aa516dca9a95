// Trace replay (models/traffic/trace_replay.h): fields, comments and units, trace times kept, the
// shipped example, relative paths, and malformed lines named by file and line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "models/common/error.h"
#include "models/traffic/trace_replay.h"
#include "models/traffic/traffic_source.h"
#include "testbenches/unit/traffic_test_support.h"

namespace fabricsim::traffic {
namespace {

using namespace test;  // NOLINT: the shared helpers

std::vector<Packet> replay(const std::string& path, int endpoints, int tc_count = 8) {
  TraceReplay r(path, endpoints, tc_count);
  return take(r, SIZE_MAX);
}

TEST(TraceReplay, ParsesFieldsCommentsBlankLinesAndUnits) {
  TempFile f(".trace",
             "# header comment\n"
             "\n"
             "0 1 2 64\n"
             "   \t\n"
             "250ns\t3 0 1500 2   # trailing comment\n"
             "1500000ps 2 1 65535#no space before the comment\n"
             "1.5us 0 3 100 0\r\n"
             "2us 1 1 1\n");
  const auto pk = replay(f.path(), 4, 3);
  ASSERT_EQ(pk.size(), 5u);
  EXPECT_EQ(pk[0].inject_time, Time());
  EXPECT_EQ(pk[0].src, 1);
  EXPECT_EQ(pk[0].dst, 2);
  EXPECT_EQ(pk[0].size, Bytes(64));
  EXPECT_EQ(pk[0].tc, 0);
  EXPECT_EQ(pk[1].inject_time, Time::ns(250));
  EXPECT_EQ(pk[1].src, 3);
  EXPECT_EQ(pk[1].tc, 2);
  EXPECT_EQ(pk[1].size, Bytes(1500));
  // 1.5us twice: file order.
  EXPECT_EQ(pk[2].inject_time, Time::ps(1500000));
  EXPECT_EQ(pk[2].src, 2);
  EXPECT_EQ(pk[2].size, Bytes(65535));
  EXPECT_EQ(pk[3].inject_time, Time::ps(1500000));
  EXPECT_EQ(pk[3].src, 0);
  EXPECT_EQ(pk[4].inject_time, Time::us(2));
  EXPECT_EQ(pk[4].dst, 1);
  for (size_t i = 0; i < pk.size(); ++i) EXPECT_EQ(pk[i].id, i);
}

TEST(TraceReplay, PacketsKeepTheirTraceTimesEvenFasterThanLineRate) {
  // 1250 B every 10 ns is 10x line rate at 100 Gbps: the replay does not delay anything (the
  // host's MAC FIFO does, and reports the wait; testbenches/cli/topology_test.py).
  TempFile f(".trace",
             "0 0 1 1250\n"
             "10ns 0 2 1250\n"
             "20ns 0 3 1250\n"
             "20ns 1 0 64\n");
  const auto pk = replay(f.path(), 4);
  ASSERT_EQ(pk.size(), 4u);
  const std::vector<std::pair<int, int64_t>> expect = {{0, 0}, {0, 10}, {0, 20}, {1, 20}};
  for (size_t i = 0; i < pk.size(); ++i) {
    EXPECT_EQ(pk[i].src, expect[i].first) << i;
    EXPECT_EQ(pk[i].inject_time, Time::ns(expect[i].second)) << i;
    EXPECT_EQ(pk[i].id, i);
    EXPECT_EQ(pk[i].dst, i < 3 ? static_cast<int>(i) + 1 : 0);
  }
}

TEST(TraceReplay, ExampleTrace) {
  const std::string path = kSourceDir + "/traces/example_incast.trace";
  // Independent count of packet lines: non-blank after stripping comments.
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  std::string line;
  size_t lines = 0;
  std::vector<TraceReader::Record> records;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++lines;
  }
  EXPECT_GT(lines, 200u);
  TraceReader reader(path, 16, 1);
  TraceReader::Record r;
  while (reader.next(r)) records.push_back(r);
  ASSERT_EQ(records.size(), lines);

  TraceReplay replay(path, 16, 1);
  EXPECT_EQ(replay.packet_count(), lines);
  const auto pk = take(replay, SIZE_MAX);
  ASSERT_EQ(pk.size(), lines);
  size_t to0 = 0;
  std::map<int, std::vector<const TraceReader::Record*>> by_src;
  for (const auto& rec : records) by_src[rec.src].push_back(&rec);
  std::map<int, size_t> seen;
  for (size_t i = 0; i < pk.size(); ++i) {
    const Packet& q = pk[i];
    if (i > 0) {
      ASSERT_LE(pk[i - 1].inject_time, q.inject_time);
    }
    // Per source, packets keep file order and their trace times.
    const TraceReader::Record& rec = *by_src[q.src][seen[q.src]++];
    EXPECT_EQ(q.dst, rec.dst);
    EXPECT_EQ(q.size, rec.size);
    EXPECT_EQ(q.inject_time, rec.time);
    to0 += q.dst == 0 && q.size == Bytes(4096);
  }
  EXPECT_EQ(to0, 240u);                               // 3 rounds x 8 senders x 10 packets
  EXPECT_EQ(records.front().time, Time::ps(168987));  // "168.987ns"
}

TEST(TraceReplay, ExampleMatchesGenerator) {
  // Python 3 is a build requirement (CMake finds it; setup.sh installs it), so no skip here.
  const std::string cmd =
      std::string(FABRICSIM_PYTHON) + " " + kSourceDir + "/traces/gen_example_trace.py --check";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "traces/example_incast.trace is not the output of "
                                            "traces/gen_example_trace.py";
}

TEST(TraceReplay, RelativePathResolvesAgainstBaseDir) {
  TrafficConfig c = base_config();
  c.pattern = "trace";
  c.trace_file = "traces/example_incast.trace";
  auto src = make_traffic(c, 16, kRate, 1, 1, kSourceDir);
  Packet p;
  EXPECT_TRUE(src->next(p));
  EXPECT_EQ(p.id, 0u);
  c.trace_file = "does/not/exist.trace";
  try {
    make_traffic(c, 16, kRate, 1, 1, kSourceDir);
    FAIL() << "missing file accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(kSourceDir + "/does/not/exist.trace"), std::string::npos)
        << e.what();
  }
}

// One case per kind of malformed line; the error must read "FILE:LINE: ...".
struct BadLine {
  const char* name;
  const char* line;
  const char* fragment;  // expected in the message after "FILE:LINE: "
};

TEST(TraceReplay, MalformedLinesNameFileAndLine) {
  const BadLine cases[] = {
      {"too few fields", "5ns 1 2", "expected 4 or 5 fields"},
      {"too many fields", "5ns 1 2 64 0 7", "expected 4 or 5 fields"},
      {"time without unit", "250 1 2 64", "needs a unit"},
      {"bad time", "fastns 1 2 64", "bad time"},
      {"bad time unit", "5parsecs 1 2 64", "bad time"},
      {"negative time", "-5ns 1 2 64", "time"},
      {"time backwards", "0 1 2 64", "earlier than the previous line"},
      {"src not a number", "5ns x 2 64", "src 'x' is not an integer"},
      {"src trailing junk", "5ns 1a 2 64", "src '1a' is not an integer"},
      {"src out of range", "5ns 4 2 64", "src 4 is out of range [0, 4)"},
      {"src negative", "5ns -1 2 64", "src -1 is out of range"},
      {"dst out of range", "5ns 1 9 64", "dst 9 is out of range [0, 4)"},
      {"bytes zero", "5ns 1 2 0", "bytes 0 is out of range"},
      {"bytes too large", "5ns 1 2 65536", "bytes 65536 is out of range"},
      {"bytes with unit", "5ns 1 2 64B", "bytes '64B' is not an integer"},
      {"tc out of range", "5ns 1 2 64 2", "tc 2 is out of range [0, 2)"},
      {"tc not a number", "5ns 1 2 64 hi", "tc 'hi' is not an integer"},
  };
  for (const BadLine& bc : cases) {
    // Line 4: after a comment, a good line and a blank line (line numbers count every line).
    TempFile f(".trace", std::string("# comment\n1ns 0 1 64\n\n") + bc.line + "\n9ns 0 1 64\n");
    const std::string prefix = f.path() + ":4: ";
    try {
      TraceReplay r(f.path(), 4, 2);
      ADD_FAILURE() << bc.name << ": accepted";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(prefix, 0), 0u) << bc.name << ": " << msg;
      EXPECT_NE(msg.find(bc.fragment), std::string::npos) << bc.name << ": " << msg;
    }
  }
}

TEST(TraceReplay, ErrorsSurfaceAtCreationNotMidRun) {
  // The bad line is far into the file: make_traffic must already reject it.
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(i) + "ns 0 1 64\n";
  text += "5001ns 0 1\n";
  TempFile f(".trace", text);
  TrafficConfig c = base_config();
  c.pattern = "trace";
  c.trace_file = f.path();
  try {
    make_traffic(c, 2, kRate, 1, 1, "/ignored/for/absolute/paths");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(f.path() + ":5001: ", 0), 0u) << e.what();
  }
}

TEST(TraceReplay, TraceWithoutPacketsIsAnError) {
  for (const char* text : {"", "# nothing\n\n", "   \n# still nothing"}) {
    TempFile f(".trace", text);
    try {
      TraceReplay r(f.path(), 2, 1);
      FAIL() << "accepted: '" << text << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                f.path() + ": no packet lines (only comments and blank lines)");
    }
  }
}

TEST(TraceReplay, OnePacketTraceIsExhaustedAfterIt) {
  TempFile f(".trace", "# one\n0 0 1 64\n");
  TraceReplay r(f.path(), 2, 1);
  Packet p;
  EXPECT_EQ(r.packet_count(), 1u);
  EXPECT_TRUE(r.next(p));
  EXPECT_FALSE(r.next(p));
  EXPECT_FALSE(r.next(p));
}

}  // namespace
}  // namespace fabricsim::traffic
