// `fabricsim regress`'s plain-C++ parts: figure lookup, tolerances, the suite parser, the
// configuration diff and the JUnit writer (testbenches/fabricsim/regress.h). The command end to end
// is tested by testbenches/regress/regress_test.py.
#include "testbenches/fabricsim/regress.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "models/common/error.h"

namespace fabricsim::regress {
namespace {

using nlohmann::json;

const json kSummary = json::parse(R"({
  "latency_ns": {"mean": 432.5, "p99": 668.0},
  "packets": {"dropped": 0, "delivered": 21865},
  "switches": [{"name": "leaf0", "packets": {"dropped": 3}}, {"name": "spine0"}],
  "counters": {"leaf3.port12.pause_frames_sent": 7, "leaf3": {"port12": 99}}
})");

TEST(RegressLookup, FollowsKeysAndIndices) {
  ASSERT_NE(lookup(kSummary, "latency_ns.mean"), nullptr);
  EXPECT_EQ(*lookup(kSummary, "latency_ns.mean"), 432.5);
  EXPECT_EQ(*lookup(kSummary, "switches[0].packets.dropped"), 3);
  EXPECT_EQ(*lookup(kSummary, "switches[1].name"), "spine0");
  EXPECT_EQ(lookup(kSummary, "switches[2].name"), nullptr);
  EXPECT_EQ(lookup(kSummary, "latency_ns.median"), nullptr);
  EXPECT_EQ(lookup(kSummary, "latency_ns.mean.x"), nullptr);
  EXPECT_EQ(lookup(kSummary, "switches[x]"), nullptr);
  EXPECT_EQ(lookup(kSummary, ""), nullptr);
}

TEST(RegressLookup, CounterNamesWithDotsResolveLongestFirst) {
  EXPECT_EQ(*lookup(kSummary, "counters.leaf3.port12.pause_frames_sent"), 7);
  // Where the longer key does not lead anywhere, the shorter one is tried.
  EXPECT_EQ(*lookup(kSummary, "counters.leaf3.port12"), 99);
}

Tolerance band(double abs, double rel) {
  Tolerance t;
  t.exact = false;
  t.abs = abs;
  t.rel = rel;
  return t;
}

TEST(RegressCompare, ExactIsExactToTheLastBit) {
  const Tolerance exact;
  EXPECT_TRUE(compare(json(21865), json(21865), exact).pass);
  EXPECT_FALSE(compare(json(21865), json(21866), exact).pass);
  EXPECT_EQ(compare(json(21865), json(21866), exact).delta, "+1");
  const double x = 432.7;
  EXPECT_TRUE(compare(json(x), json(x), exact).pass);
  EXPECT_FALSE(compare(json(x), json(std::nextafter(x, 1e9)), exact).pass);
  // Large counters beyond a double's 53 bits still compare exactly.
  const uint64_t big = (uint64_t{1} << 60) + 1;
  EXPECT_FALSE(compare(json(big), json(big + 1), exact).pass);
  EXPECT_TRUE(compare(json("islip"), json("islip"), exact).pass);
  EXPECT_FALSE(compare(json(true), json(false), exact).pass);
}

TEST(RegressCompare, AbsoluteAndRelativeBandsIncludeTheirEdge) {
  EXPECT_TRUE(compare(json(0.5), json(0.501), band(0.001, 0)).pass);
  EXPECT_FALSE(compare(json(0.5), json(0.5011), band(0.001, 0)).pass);
  EXPECT_TRUE(compare(json(400.0), json(404.0), band(0, 0.01)).pass);
  EXPECT_FALSE(compare(json(400.0), json(404.1), band(0, 0.01)).pass);
  EXPECT_TRUE(compare(json(-400.0), json(-396.0), band(0, 0.01)).pass);  // of |golden|
  // Both: the wider allowance.
  EXPECT_TRUE(compare(json(10.0), json(12.0), band(2.0, 0.01)).pass);
  EXPECT_TRUE(compare(json(1000.0), json(1009.0), band(2.0, 0.01)).pass);
  EXPECT_FALSE(compare(json(1000.0), json(1011.0), band(2.0, 0.01)).pass);
  const auto c = compare(json(400.0), json(410.0), band(0, 0.01));
  EXPECT_EQ(c.delta, "+10 (+2.5%)");
  EXPECT_NE(c.detail.find("rel 1%"), std::string::npos) << c.detail;
}

TEST(RegressCompare, BandsNeedNumbers) {
  EXPECT_FALSE(compare(json("a"), json("a"), band(1, 0)).pass);
  EXPECT_FALSE(compare(json(nullptr), json(1.0), band(1, 0)).pass);
  EXPECT_FALSE(compare(json(1.0), json(std::nan("")), band(1, 0)).pass);
}

TEST(RegressFingerprint, IsFnv1a64) {
  EXPECT_EQ(fnv1a64(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a64("a"), "af63dc4c8601ec8c");
}

TEST(RegressConfigDiff, NamesTheKeysThatChanged) {
  const auto d = config_diff("sim:\n  seed: 1\nswitch:\n  ports: 64\n  lanes: [1, 2]\n",
                             "sim:\n  seed: 2\nswitch:\n  ports: 64\n  lanes: [1, 3]\n  new: x\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], "sim.seed: 1 -> 2");
  EXPECT_EQ(d[1], "switch.lanes: [1, 2] -> [1, 3]");
  EXPECT_EQ(d[2], "switch.new: (new) -> x");
  EXPECT_EQ(config_diff("a: 1\nb: 1\nc: 1\n", "a: 2\nb: 2\nc: 2\n", 2).back(), "... and 1 more");
}

class RegressSuite : public ::testing::Test {
 protected:
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("regress_suite_test_" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& text) {
    const auto p = dir / "s.yaml";
    std::ofstream(p) << text;
    return p.string();
  }
  std::string error_of(const std::string& text) {
    try {
      load_suite(write(text));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(RegressSuite, ParsesCasesWithDefaults) {
  const Suite s = load_suite(write(R"(
root: ../..
defaults:
  set: [sim.duration=5us]
  seed: 3
  metrics:
    packets.dropped: exact
    latency_ns.mean: {rel: 0.01}
cases:
  - name: a
    config: configs/switch_51t2.yaml
    set: [traffic.load=0.5]
    metrics:
      latency_ns.mean: {abs: 2}
      throughput.accepted_load: {abs: 0.001, rel: 0.002}
  - name: b
    config: /abs/x.yaml
    seed: 9
    speed: {repeats: 3, max_ratio: 1.5, judge: cpu}
)"));
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.goldens_path, (dir / "s.goldens.json").string());
  ASSERT_EQ(s.cases.size(), 2u);
  const Case& a = s.cases[0];
  EXPECT_EQ(a.config_path, (dir / "../.." / "configs/switch_51t2.yaml").string());
  EXPECT_EQ(a.sets, (std::vector<std::string>{"sim.duration=5us", "traffic.load=0.5"}));
  EXPECT_EQ(*a.seed, 3);
  ASSERT_EQ(a.metrics.size(), 3u);
  EXPECT_EQ(a.metrics[0].path, "packets.dropped");
  EXPECT_TRUE(a.metrics[0].tol.exact);
  EXPECT_EQ(a.metrics[1].path, "latency_ns.mean");  // the case's tolerance replaced the default
  EXPECT_FALSE(a.metrics[1].tol.exact);
  EXPECT_EQ(a.metrics[1].tol.abs, 2);
  EXPECT_EQ(a.metrics[1].tol.rel, 0);
  EXPECT_EQ(a.metrics[2].tol.rel, 0.002);
  EXPECT_EQ(a.speed.repeats, 0);
  const Case& b = s.cases[1];
  EXPECT_EQ(b.config_path, "/abs/x.yaml");
  EXPECT_EQ(*b.seed, 9);
  EXPECT_EQ(b.speed.repeats, 3);
  EXPECT_EQ(b.speed.max_ratio, 1.5);
  EXPECT_EQ(b.speed.judge, "cpu");
  EXPECT_EQ(a.speed.judge, "wall");
  EXPECT_EQ(b.metrics.size(), 2u);
  EXPECT_FALSE(a.instructions);
}

TEST_F(RegressSuite, InstructionCountsTakeATolerance) {
  const Suite s = load_suite(write(R"(
cases:
  - name: counted
    config: x.yaml
    instructions: {rel: 0.02}
  - name: exact
    config: x.yaml
    metrics: {packets.delivered: exact}
    instructions: exact
)"));
  ASSERT_EQ(s.cases.size(), 2u);
  ASSERT_TRUE(s.cases[0].instructions);  // a count alone is something to watch
  EXPECT_FALSE(s.cases[0].instructions->tol.exact);
  EXPECT_EQ(s.cases[0].instructions->tol.rel, 0.02);
  EXPECT_EQ(s.cases[0].instructions->tol.describe(), "rel 2%");
  ASSERT_TRUE(s.cases[1].instructions);
  EXPECT_TRUE(s.cases[1].instructions->tol.exact);
  auto has = [&](const std::string& text, const std::string& what) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(what), std::string::npos) << "error: " << e;
  };
  has("cases:\n  - {name: a, config: x.yaml, instructions: {rel: -0.02}}\n",
      "s.yaml:2: cases[0].instructions.rel: expected a number >= 0, got '-0.02'");
  has("cases:\n  - {name: a, config: x.yaml, instructions: {rel: 2%}}\n",
      "cases[0].instructions.rel: expected a number >= 0, got '2%'");
  has("cases:\n  - {name: a, config: x.yaml, instructions: {tolerance: 0.02}}\n",
      "unknown key 'cases[0].instructions.tolerance'");
  has("cases:\n  - {name: a, config: x.yaml, instructions: callgrind}\n",
      "cases[0].instructions: expected 'exact' or a mapping");
  has("cases:\n  - {name: a, config: x.yaml, instruction: {rel: 0.02}}\n",
      "unknown key 'cases[0].instruction'; did you mean 'cases[0].instructions'?");
}

TEST_F(RegressSuite, UnknownKeysNameFileLineAndKey) {
  const std::string e = error_of(
      "cases:\n  - name: a\n    config: x.yaml\n    sett: [a=1]\n    metrics: {x: exact}\n");
  EXPECT_NE(e.find("s.yaml:4: unknown key 'cases[0].sett'; did you mean 'cases[0].set'?"),
            std::string::npos)
      << e;
  EXPECT_NE(error_of("cases: []\nverbose: true\n").find("unknown key 'verbose'"),
            std::string::npos);
  EXPECT_NE(
      error_of("cases:\n  - name: a\n    config: x.yaml\n    metrics:\n      x: {relative: 1}\n")
          .find("unknown key 'cases[0].metrics['x'].relative'"),
      std::string::npos);
  EXPECT_NE(error_of("cases:\n  - {name: a, config: x.yaml, speed: {repeats: 2, ratio: 1}}\n")
                .find("unknown key 'cases[0].speed.ratio'"),
            std::string::npos);
}

TEST_F(RegressSuite, BadValuesAreRefusedWithTheirKey) {
  auto has = [&](const std::string& text, const std::string& what) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(what), std::string::npos) << "error: " << e;
  };
  has("cases:\n  - {name: a, config: x.yaml, metrics: {x: approx}}\n",
      "cases[0].metrics['x']: expected 'exact' or a mapping");
  has("cases:\n  - {name: a, config: x.yaml, metrics: {x: {rel: -1}}}\n",
      "cases[0].metrics['x'].rel: expected a number >= 0, got '-1'");
  has("cases:\n  - {name: a, config: x.yaml, metrics: {x: {exact: true, abs: 1}}}\n",
      "'exact: true' stands alone");
  has("cases:\n  - {name: a, config: x.yaml, metrics: {x: exact}}\n"
      "  - {name: a, config: y.yaml, metrics: {x: exact}}\n",
      "case 'a' is defined twice");
  has("cases:\n  - {name: a, metrics: {x: exact}}\n", "case 'a' needs a config");
  has("cases:\n  - {name: a, config: x.yaml}\n", "watches nothing");
  has("cases:\n  - {name: a, config: x.yaml, seed: -1, metrics: {x: exact}}\n",
      "cases[0].seed: expected a whole number");
  has("cases:\n  - {name: a, config: x.yaml, set: [nokey], metrics: {x: exact}}\n",
      "'nokey' is not KEY=VALUE");
  has("cases:\n  - {name: a, config: x.yaml, speed: {repeats: 0, max_ratio: 1}}\n",
      "cases[0].speed.repeats: expected a whole number in [1, 99]");
  has("cases:\n  - {name: a, config: x.yaml, speed: {repeats: 1, max_ratio: 1, judge: user}}\n",
      "cases[0].speed.judge: expected wall or cpu, got 'user'");
  has("cases:\n  - {name: a b, config: x.yaml, metrics: {x: exact}}\n", "'a b': use letters");
  has("cases: {}\n", "cases: expected a non-empty list");
  has("cases: [\n", "YAML syntax error");
}

TEST(RegressReport, JUnitCountsAndEscapes) {
  std::vector<Row> rows(3);
  rows[0] = {"c1", "latency_ns.mean", "1", "1", "0", "ok", true, "", "", 0.5};
  rows[1] = {"c1",
             "packets.dropped",
             "0",
             "2",
             "+2",
             "REGRESSION",
             false,
             "regression",
             "s.yaml: case 'c1': packets.dropped: golden 0 <now> 2 & \"more\"",
             0.5};
  rows[2] = {"c2", "speed", "-", "-", "-", "NO GOLDEN", false, "missing_golden", "missing", 1.0};
  const std::string x = junit_xml("short", rows, 2.0, {"a note <x>"});
  EXPECT_NE(x.find("<testsuite name=\"regress.short\" tests=\"3\" failures=\"2\" errors=\"0\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("classname=\"regress.short.c1\" name=\"packets.dropped\""), std::string::npos);
  EXPECT_NE(x.find("&lt;now&gt; 2 &amp; &quot;more&quot;"), std::string::npos);
  EXPECT_EQ(x.find("<now>"), std::string::npos);
  EXPECT_NE(x.find("<failure type=\"missing_golden\""), std::string::npos);
  EXPECT_NE(x.find("a note &lt;x&gt;"), std::string::npos);
  size_t testcases = 0;
  for (size_t at = 0; (at = x.find("<testcase ", at)) != std::string::npos; ++at) ++testcases;
  EXPECT_EQ(testcases, 3u);
}

TEST(RegressReport, TableHasAColumnPerField) {
  std::vector<Row> rows(1);
  rows[0] = {
      "case_a", "latency_ns.mean", "432.5", "433", "+0.5 (+0.116%)", "ok (rel 1%)", true, "", "",
      0};
  const std::string t = format_table(rows);
  EXPECT_EQ(t.substr(0, t.find('\n')),
            "case    metric           golden  now  delta           verdict");
  EXPECT_NE(t.find("case_a  latency_ns.mean  432.5   433  +0.5 (+0.116%)  ok (rel 1%)"),
            std::string::npos)
      << t;
}

TEST(RegressMachineReference, IsAPlausibleStep) {
  const MachineRef m = machine_reference();
  // Eight chained add/shift/xor steps cannot take under 0.05 ns, nor a loaded machine 1 us.
  EXPECT_GT(m.wall_ns, 0.05);
  EXPECT_LT(m.wall_ns, 1000.0);
  EXPECT_GT(m.cpu_ns, 0.05);
  EXPECT_LE(m.cpu_ns, m.wall_ns * 1.05);  // CPU time cannot exceed the wall time it ran in
}

}  // namespace
}  // namespace fabricsim::regress
