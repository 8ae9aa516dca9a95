// occupancy.csv streamed during the run (models/sim/occupancy_writer.h), driven without the SystemC
// kernel: switch cores run cycle by cycle in time order, as the kernel runs them, and the writer
// advances at step boundaries as the runner calls it.
#include "models/sim/occupancy_writer.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "models/common/rng.h"

namespace fabricsim::sim {
namespace {

namespace fs = std::filesystem;

class Discard : public sw::DepartureSink {
 public:
  void on_departure(int, const Packet&, Time, Time) override {}
  void on_control(int, const ControlFrame&, Time, Time) override {}
};

// 4 ports of 800G, 250 B cells, a 2 GHz core clock (0.5 ns cycles).
sw::SwitchConfig small_config() {
  sw::SwitchConfig cfg;
  config::load(cfg, "",
               {"ports=4", "port_speed=800Gbps", "serdes.lanes=32", "serdes.lane_rate=106.25Gbps",
                "core_clock=2GHz", "cell_size=250B", "traffic_classes=2",
                "pipeline.ingress_cycles=3", "pipeline.crossbar_cycles=2",
                "pipeline.egress_cycles=4", "buffer.size=1MB", "buffer.reserved_per_port=0B"});
  return cfg;
}

Packet make(uint64_t id, int src, int dst, uint64_t bytes, Time t, int tc) {
  Packet p;
  p.id = id;
  p.src = src;
  p.dst = dst;
  p.tc = tc;
  p.size = Bytes(bytes);
  p.inject_time = t;
  return p;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    // A parameterised test's name holds a '/' ("Name/0"): one directory, not a parent left behind.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / fmt::format("occupancy_writer_test_{}_{}", ::getpid(), name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(OccupancyTime, FormatsExactlyAsFmtDoes) {
  // The integer path (whole picoseconds) and the fmt path give "{:.3f}" of as_ns() to the byte.
  std::vector<int64_t> values = {0,
                                 1,
                                 499,
                                 500,
                                 501,
                                 999,
                                 1000,
                                 1500,
                                 999999,
                                 1000000,
                                 123456789,
                                 99999500000,
                                 100000000000,
                                 1000000000000,
                                 int64_t{1} << 53,
                                 (int64_t{1} << 53) - 1000};
  Rng rng(7);
  for (int i = 0; i < 200000; ++i) {
    const int64_t ps = static_cast<int64_t>(rng.next_u64() % 2000000000000000ULL);  // up to 2000 s
    values.push_back(ps * 1000);
    values.push_back(static_cast<int64_t>(rng.next_u64() % 100000000000ULL));  // any fs, 0.1 ms
  }
  for (int64_t v : values) {
    char buf[32];
    const Time t = Time::fs(v);
    const std::string got(buf, format_time_ns(buf, t));
    ASSERT_EQ(got, fmt::format("{:.3f}", t.as_ns())) << v << " fs";
  }
}

TEST(OccupancyColumns, NamesPortsAndSwitches) {
  EXPECT_EQ(occupancy_columns({"sw"}, 2), (std::vector<std::string>{"port0_bytes", "port1_bytes"}));
  EXPECT_EQ(occupancy_columns({"leaf0", "spine0"}, 2),
            (std::vector<std::string>{"leaf0.port0_bytes", "leaf0.port1_bytes",
                                      "spine0.port0_bytes", "spine0.port1_bytes"}));
}

// Two switches with different bursts (incasts that fill the buffer, then drain), run in time
// order; the writer advances at boundaries drawn at random within its max_step, some on sample
// instants and cycle edges, with the cycles at the boundary run before or after it. The file must
// be what the report wrote at the end before streaming: per sample instant s, every switch's
// buffer as its cycles up to s left it (read here from the shared buffer's own counters, not the
// sampling code), formatted by fmt.
struct StreamCase {
  int64_t interval_fs;
  size_t batch_values;
};

class OccupancyStream : public TempDir, public ::testing::WithParamInterface<StreamCase> {};

TEST_P(OccupancyStream, RowsAreTheEndOfRunSamplesWithBoundedHolding) {
  const auto [interval_fs, batch_values] = GetParam();
  const Time interval = Time::fs(interval_fs);
  const auto cfg = small_config();
  const int64_t cell = static_cast<int64_t>(cfg.cell_size.count());
  const int tcs = static_cast<int>(cfg.traffic_classes);
  sw::SwitchCore a(cfg, sw::ForwardingTable::identity(4), 1, "a");
  sw::SwitchCore b(cfg, sw::ForwardingTable::identity(4), 2, "b");
  std::vector<sw::SwitchCore*> cores = {&a, &b};
  // a: ports 0-2 send 12 packets each to port 3 (3-to-1 incast), 1000 B back to back.
  // b: later and lighter: ports 1 and 2 to port 0, then port 0 to 3, 2400 B.
  uint64_t id = 0;
  for (int in = 0; in < 3; ++in)
    for (int k = 0; k < 12; ++k) {
      const Time t = Time::ns(11) * k + Time::ps(250) * in;
      a.receive(in, make(id++, in, 3, 1000, t, k % tcs), t);
    }
  for (int k = 0; k < 6; ++k) {
    const Time t = Time::ns(40) + Time::ns(30) * k;
    b.receive(1, make(id++, 1, 0, 2400, t, 0), t);
    b.receive(2, make(id++, 2, 0, 2400, t + Time::ps(700), 1), t + Time::ps(700));
    b.receive(0, make(id++, 0, 3, 2400, t + Time::ns(200), 1), t + Time::ns(200));
  }

  const fs::path path = dir_ / "occupancy.csv";
  OccupancyWriter w(cores, occupancy_columns({"a", "b"}, 4), interval, path.string(), batch_values);
  const int64_t batch = std::max<int64_t>(16, static_cast<int64_t>(batch_values / 10));
  ASSERT_EQ(w.max_step().as_fs(), interval_fs * batch);

  // Reference: each core's buffer after each of its cycles.
  struct State {
    Time t;
    std::vector<int64_t> bytes;  // total, then per port
  };
  std::vector<std::vector<State>> states(2);
  auto state_of = [&](const sw::SwitchCore& c) {
    // The cells written (a packet's grow as they arrive), in all and per egress port.
    std::vector<int64_t> v = {c.cells_held() * cell};
    for (int p = 0; p < 4; ++p) v.push_back(c.port_cells_held(p) * cell);
    return v;
  };
  Discard sink;
  Rng rng(interval_fs);
  Time last;  // the last boundary
  int64_t peak_buffer = 0;
  auto next_cycle = [&](int& which) {
    Time best = Time::max();
    which = -1;
    for (int i = 0; i < 2; ++i) {
      const int64_t c = cores[i]->next_work_cycle();
      if (c != EventWheel<int>::kNone && cores[i]->time_of(c) < best) {
        best = cores[i]->time_of(c);
        which = i;
      }
    }
    return best;
  };
  auto run_one = [&](int i) {
    const int64_t c = cores[i]->next_work_cycle();
    cores[i]->run_cycle(c, sink);
    states[i].push_back({cores[i]->time_of(c), state_of(*cores[i])});
    peak_buffer = std::max(peak_buffer, states[i].back().bytes[0]);
  };
  for (int step = 0;; ++step) {
    // The next boundary: somewhere in (last, last + max_step], often on a sample instant.
    const int64_t span = w.max_step().as_fs();
    Time boundary = last + Time::fs(1 + static_cast<int64_t>(rng.next_u64() % span));
    int which;
    if (step % 3 == 0) boundary = interval * (boundary.as_fs() / interval_fs + 1);
    // Or on the next cycle with work: a buffer change at the boundary itself.
    if (const Time t = next_cycle(which); step % 3 == 1 && which >= 0 && t > last) boundary = t;
    if (boundary > last + w.max_step()) boundary = last + w.max_step();
    for (Time t = next_cycle(which); which >= 0 && t < boundary; t = next_cycle(which))
      run_one(which);
    // Cycles at the boundary itself: either side of advance() is correct.
    const bool before = rng.next_u64() % 2;
    if (before)
      for (Time t = next_cycle(which); which >= 0 && t == boundary; t = next_cycle(which))
        run_one(which);
    for (auto* c : cores) {
      // What a core holds between two steps is bounded by the batch, whatever the run's length.
      c->take_occupancy_samples_before(boundary);
      ASSERT_LE(c->occupancy_pending(), static_cast<size_t>(batch));
    }
    w.advance(boundary);
    for (auto* c : cores) ASSERT_EQ(c->occupancy_pending(), 0u);
    last = boundary;
    next_cycle(which);
    if (which < 0 && last > Time::ns(700)) break;
  }
  ASSERT_GT(peak_buffer, 10 * cell);  // the bursts did fill the buffer
  const Time end = last + Time::ps(1234);
  w.finish(end);
  EXPECT_FALSE(fs::exists(path.string() + ".part"));

  std::string expected = "time_ns,total_bytes";
  for (const auto& c : occupancy_columns({"a", "b"}, 4)) expected += "," + c;
  expected += "\n";
  const int64_t rows = end.as_fs() / interval_fs + 1;
  std::vector<size_t> at(2, 0);  // states applied so far per core
  for (int64_t k = 0; k < rows; ++k) {
    const Time s = interval * k;
    std::vector<int64_t> cols;
    int64_t total = 0;
    for (int i = 0; i < 2; ++i) {
      while (at[i] < states[i].size() && states[i][at[i]].t <= s) ++at[i];
      const std::vector<int64_t> zero(5, 0);
      const auto& v = at[i] ? states[i][at[i] - 1].bytes : zero;
      total += v[0];
      cols.insert(cols.end(), v.begin() + 1, v.end());
    }
    expected += fmt::format("{:.3f},{}", s.as_ns(), total);
    for (auto v : cols) expected += fmt::format(",{}", v);
    expected += "\n";
  }
  EXPECT_EQ(w.rows(), rows);
  const std::string got = read(path);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
}

INSTANTIATE_TEST_SUITE_P(
    Intervals, OccupancyStream,
    ::testing::Values(StreamCase{7000000, 640},        // 7 ns: on cycle edges; 64-row batches
                      StreamCase{1300000, 10},         // 1.3 ns: mid-cycle; the 16-row minimum
                      StreamCase{100000000, 1 << 19},  // 100 ns (the default), one batch
                      StreamCase{333333, 160},         // 333.333 ps: the fmt path for the time
                      StreamCase{500000, 200}),        // every cycle edge
    [](const ::testing::TestParamInfo<StreamCase>& i) {
      return fmt::format("interval_{}fs_batch_{}", i.param.interval_fs, i.param.batch_values);
    });

TEST_F(TempDir, WithoutIntervalTheFileHasItsHeaderOnly) {
  sw::SwitchCore a(small_config(), sw::ForwardingTable::identity(4), 1, "a");
  const fs::path path = dir_ / "occupancy.csv";
  OccupancyWriter w({&a}, occupancy_columns({"a"}, 4), Time(), path.string());
  EXPECT_EQ(w.max_step(), Time::max());
  Discard sink;
  const Time t = Time::ns(1);
  a.receive(0, make(1, 0, 1, 1000, t, 0), t);
  for (int64_t c = a.next_work_cycle(); c != EventWheel<int>::kNone; c = a.next_work_cycle())
    a.run_cycle(c, sink);
  w.advance(Time::us(1));
  EXPECT_EQ(a.occupancy_pending(), 0u);  // nothing sampled
  w.finish(Time::us(1));
  EXPECT_EQ(read(path), "time_ns,total_bytes,port0_bytes,port1_bytes,port2_bytes,port3_bytes\n");
  EXPECT_EQ(w.rows(), 0);
}

TEST_F(TempDir, AnUnfinishedFileNeverReplacesTheLastOne) {
  // An exception ends the run before finish(): the .part goes, the previous file stays whole.
  const fs::path path = dir_ / "occupancy.csv";
  std::ofstream(path) << "previous run\n";
  {
    sw::SwitchCore a(small_config(), sw::ForwardingTable::identity(4), 1, "a");
    OccupancyWriter w({&a}, occupancy_columns({"a"}, 4), Time::ns(1), path.string());
    w.advance(Time::us(2));
    EXPECT_EQ(w.rows(), 2000);
    EXPECT_TRUE(fs::exists(path.string() + ".part"));
    EXPECT_EQ(read(path), "previous run\n");
  }
  EXPECT_FALSE(fs::exists(path.string() + ".part"));
  EXPECT_EQ(read(path), "previous run\n");
}

TEST_F(TempDir, AnUnwritablePathIsAnError) {
  sw::SwitchCore a(small_config(), sw::ForwardingTable::identity(4), 1, "a");
  const fs::path path = dir_ / "no" / "such" / "dir" / "occupancy.csv";
  try {
    OccupancyWriter w({&a}, occupancy_columns({"a"}, 4), Time::ns(1), path.string());
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricsim::sim
