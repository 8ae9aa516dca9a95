// Configuration framework: YAML loading, overrides, error messages, validation locations, YAML/JSON
// output round trips and the generated Markdown reference.
#include "models/config/config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testbenches/unit/bounded_call.h"

namespace fabricsim::config {
namespace {

using test::within;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// One param of every kind, in nested sections, including a top-level key.
struct TestConfig : Configurable {
  std::string name;
  int64_t ports = 0;
  std::string scheduler;
  BitRate port_rate;
  Frequency clock;
  Bytes buffer_size;
  Bytes cell;
  Time latency;
  double load = 0;
  bool self = false;
  std::vector<double> weights;
  std::string trace_file;
  int64_t seed = 0;

  void visit(Visitor& v) override {
    v.param("name", name, "baseline", "Run name");
    v.begin_section("switch", "The switch under test.");
    v.param("ports", ports, 64, 1, 512, "", "Number of ports");
    v.choice("scheduler", scheduler, "islip", {"rr", "islip", "pim"}, "Crossbar scheduler");
    v.param("port_rate", port_rate, BitRate::gbps(800), BitRate::gbps(1), BitRate::gbps(1600),
            "Line rate of every port");
    v.param("clock", clock, Frequency::mhz(1350), Frequency::mhz(100), Frequency::mhz(5000),
            "Core clock");
    v.begin_section("buffer", "Shared packet buffer.");
    v.param("size", buffer_size, Bytes(165660324), Bytes(1024), Bytes(1ull << 40), "Capacity");
    v.param("cell", cell, Bytes(254), Bytes(64), Bytes(4096), "Cell size | allocation unit");
    v.param("latency", latency, Time::ns(500), Time(), Time::us(10), "Access latency");
    v.end_section();
    v.end_section();
    v.begin_section("traffic", "Offered traffic.");
    v.param("load", load, 0.5, 0.0, 1.0, "fraction", "Offered load");
    v.param("self", self, true, "May a source send to itself");
    v.list("weights", weights, {}, 0.0, 100.0, "", "Traffic class weights");
    v.param("trace_file", trace_file, "", "Trace path");
    v.end_section();
    v.param("seed", seed, 1, 0, INT64_MAX, "", "Random seed");
  }

  void validate(const Checker& c) const override {
    c.require(cell <= buffer_size, "switch.buffer.cell", "must not exceed switch.buffer.size");
    c.require(name != "forbidden", "name", "is reserved");
  }

  bool operator==(const TestConfig& o) const {
    return name == o.name && ports == o.ports && scheduler == o.scheduler &&
           port_rate == o.port_rate && clock == o.clock && buffer_size == o.buffer_size &&
           cell == o.cell && latency == o.latency && load == o.load && self == o.self &&
           weights == o.weights && trace_file == o.trace_file && seed == o.seed;
  }
};

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("fabricsim_config_test_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& text, const std::string& name = "run.yaml") {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // what() of the ConfigError thrown by loading `yaml` (+ overrides); fails the test otherwise.
  std::string load_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
    TestConfig c;
    return error_of([&] { load(c, write(yaml), overrides); });
  }
  std::string override_error(const std::vector<std::string>& overrides) {
    TestConfig c;
    return error_of([&] { load(c, "", overrides); });
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a ConfigError";
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(ConfigTest, DefaultsWhenNoFile) {
  TestConfig c;
  load(c, "", {});
  EXPECT_EQ(c.name, "baseline");
  EXPECT_EQ(c.ports, 64);
  EXPECT_EQ(c.scheduler, "islip");
  EXPECT_EQ(c.port_rate, BitRate::gbps(800));
  EXPECT_EQ(c.clock, Frequency::mhz(1350));
  EXPECT_EQ(c.buffer_size, Bytes(165660324));
  EXPECT_EQ(c.cell, Bytes(254));
  EXPECT_EQ(c.latency, Time::ns(500));
  EXPECT_EQ(c.load, 0.5);
  EXPECT_TRUE(c.self);
  EXPECT_TRUE(c.weights.empty());
  EXPECT_EQ(c.trace_file, "");
  EXPECT_EQ(c.seed, 1);
}

TEST_F(ConfigTest, KeysOffTheirDefaultsAreNamedWithTheirSections) {
  TestConfig c;
  load(c, "", {});
  EXPECT_TRUE(keys_off_default(c).empty());
  load(c, "", {"switch.buffer.latency=1us", "traffic.weights=[1, 2]", "name=x",
               "switch.scheduler=pim"});
  EXPECT_EQ(keys_off_default(c),
            (std::vector<std::string>{"name", "switch.scheduler", "switch.buffer.latency",
                                      "traffic.weights"}));
  // Set to its default value, a key is not off it.
  load(c, "", {"switch.ports=64"});
  EXPECT_TRUE(keys_off_default(c).empty());
}

// A string value must be UTF-8 text: another encoding would load and then make the JSON writers of
// the results throw (found by fuzz_config). Well-formed multi-byte text loads as it is.
TEST_F(ConfigTest, StringValuesMustBeUtf8) {
  TestConfig c;
  load(c, write("name: \"r\xc3\xa9seau \xe2\x82\xac \xf0\x9f\x94\x8c\"\n"), {});
  EXPECT_EQ(c.name, "r\xc3\xa9seau \xe2\x82\xac \xf0\x9f\x94\x8c");
  EXPECT_EQ(load_error("traffic:\n  trace_file: ab\x9b.trace\n"),
            (dir_ / "run.yaml").string() +
                ":2: traffic.trace_file: not UTF-8 text: byte 0x9b at offset 2 of the string");
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "x\xe2\x82"}) {
    const std::string e = override_error({std::string("name=") + bad});
    EXPECT_NE(e.find("name: not UTF-8 text: byte 0x"), std::string::npos) << e;
  }
}

TEST_F(ConfigTest, LoadsEveryKindFromFile) {
  TestConfig c;
  load(c,
       write("# a comment\n"
             "name: \"exp 1\"\n"
             "switch:\n"
             "  ports: 32\n"
             "  scheduler: pim\n"
             "  port_rate: 106.25Gbps\n"
             "  clock: 1GHz\n"
             "  buffer:\n"
             "    size: 64MiB\n"
             "    cell: 1.5KB\n"
             "    latency: 2.54ns\n"
             "traffic:\n"
             "  load: 0.95\n"
             "  self: false\n"
             "  weights: [1, 2.5, 0]\n"
             "  trace_file: traces/a.csv\n"
             "seed: 9007199254740993\n"),
       {});
  EXPECT_EQ(c.name, "exp 1");
  EXPECT_EQ(c.ports, 32);
  EXPECT_EQ(c.scheduler, "pim");
  EXPECT_EQ(c.port_rate, BitRate::bps(106250000000));
  EXPECT_EQ(c.clock, Frequency::hz(1000000000));
  EXPECT_EQ(c.buffer_size, Bytes(64ull << 20));
  EXPECT_EQ(c.cell, Bytes(1500));
  EXPECT_EQ(c.latency, Time::ps(2540));
  EXPECT_EQ(c.load, 0.95);
  EXPECT_FALSE(c.self);
  EXPECT_EQ(c.weights, (std::vector<double>{1, 2.5, 0}));
  EXPECT_EQ(c.trace_file, "traces/a.csv");
  EXPECT_EQ(c.seed, 9007199254740993);  // exact: integers never go through double
}

TEST_F(ConfigTest, AbsentKeysAndEmptySectionsDefault) {
  TestConfig c;
  load(c, write("switch:\n  ports: 8\ntraffic:\n"), {});
  EXPECT_EQ(c.ports, 8);
  EXPECT_EQ(c.scheduler, "islip");
  EXPECT_EQ(c.load, 0.5);
  TestConfig e, d;
  load(e, write("# every default, asked for\n{}\n"), {});
  load(d, "", {});
  EXPECT_TRUE(e == d);
}

TEST_F(ConfigTest, RangeBoundsAreInclusive) {
  TestConfig c;
  load(c, write("switch:\n  ports: 512\n  port_rate: 1600Gbps\ntraffic:\n  load: 0\n"), {});
  EXPECT_EQ(c.ports, 512);
  EXPECT_EQ(c.port_rate, BitRate::gbps(1600));
  EXPECT_EQ(c.load, 0.0);
  load(c, write("switch:\n  ports: 1\n"), {});
  EXPECT_EQ(c.ports, 1);
}

TEST_F(ConfigTest, CoreTagsOfTheTypeAreAccepted) {
  TestConfig c;
  load(c, write("switch:\n  ports: !!int 7\ntraffic:\n  load: !!float 0.25\n"), {});
  EXPECT_EQ(c.ports, 7);
  EXPECT_EQ(c.load, 0.25);
  load(c, write("traffic:\n  load: !!int 1\n"), {});
  EXPECT_EQ(c.load, 1.0);
}

TEST_F(ConfigTest, ErrorsNameFileLineAndKey) {
  const std::string f = (dir_ / "run.yaml").string();
  EXPECT_EQ(load_error("switch:\n  ports: 600\n"),
            f + ":2: switch.ports: 600 is out of range [1, 512]");
  EXPECT_EQ(load_error("switch:\n  ports: 0\n"),
            f + ":2: switch.ports: 0 is out of range [1, 512]");
  EXPECT_EQ(load_error("\n\nswitch:\n  ports: abc\n"),
            f + ":4: switch.ports: expected an integer, got 'abc'");
  EXPECT_EQ(load_error("switch:\n  ports: 1.5\n"),
            f + ":2: switch.ports: expected an integer, got '1.5'");
  EXPECT_EQ(load_error("switch:\n  ports: 010\n"),
            f + ":2: switch.ports: expected an integer, got '010'");
  EXPECT_EQ(load_error("switch:\n  ports: \"5\"\n"),
            f + ":2: switch.ports: expected an integer, got the quoted string \"5\"");
  // An explicit tag other than the type's own makes the value something else: `!!str 5` is a
  // string.
  EXPECT_EQ(load_error("switch:\n  ports: !!str 5\n"),
            f + ":2: switch.ports: expected an integer, got '5' tagged !!str");
  EXPECT_EQ(load_error("switch:\n  ports: !!float 5\n"),
            f + ":2: switch.ports: expected an integer, got '5' tagged !!float");
  EXPECT_EQ(load_error("traffic:\n  load: !!str 0.5\n"),
            f + ":2: traffic.load: expected a number, got '0.5' tagged !!str");
  EXPECT_EQ(load_error("switch:\n  ports: !custom 5\n"),
            f + ":2: switch.ports: expected an integer, got '5' tagged !custom");
  EXPECT_EQ(load_error("switch:\n  ports: 99999999999999999999\n"),
            f + ":2: switch.ports: 99999999999999999999 does not fit in a 64-bit integer");
  EXPECT_EQ(load_error("switch:\n  ports:\n    a: 1\n"),
            f + ":2: switch.ports: expected an integer, got a mapping");
  EXPECT_EQ(load_error("switch:\n  ports: [1]\n"),
            f + ":2: switch.ports: expected an integer, got a list");
  EXPECT_EQ(load_error("seed: -1\n"), f + ":1: seed: -1 is out of range (must be >= 0)");
}

TEST_F(ConfigTest, NumberBoolStringErrors) {
  const std::string f = (dir_ / "run.yaml").string();
  EXPECT_EQ(load_error("traffic:\n  load: 1.5\n"),
            f + ":2: traffic.load: 1.5 is out of range [0, 1]");
  EXPECT_EQ(load_error("traffic:\n  load: .nan\n"),
            f + ":2: traffic.load: expected a finite number, got '.nan'");
  EXPECT_EQ(load_error("traffic:\n  load: high\n"),
            f + ":2: traffic.load: expected a finite number, got 'high'");
  EXPECT_EQ(load_error("traffic:\n  self: yes\n"),
            f + ":2: traffic.self: expected true or false, got 'yes'");
  EXPECT_EQ(load_error("traffic:\n  self: 1\n"),
            f + ":2: traffic.self: expected true or false, got '1'");
  EXPECT_EQ(load_error("traffic:\n  trace_file:\n"),
            f + ":2: traffic.trace_file: expected a string, got no value (write \"\" for an empty "
                "string)");
  EXPECT_EQ(load_error("name: [a]\n"), f + ":1: name: expected a string, got a list");
  TestConfig c;
  load(c, write("name: ''\ntraffic:\n  self: True\n"), {});
  EXPECT_EQ(c.name, "");
  EXPECT_TRUE(c.self);
}

TEST_F(ConfigTest, UnitErrors) {
  const std::string f = (dir_ / "run.yaml").string();
  EXPECT_EQ(
      load_error("switch:\n  port_rate: 800\n"),
      f + ":2: switch.port_rate: 800 has no unit; expected one of bps, kbps, Mbps, Gbps, Tbps");
  EXPECT_EQ(load_error("switch:\n  port_rate: 800Gbs\n"),
            f + ":2: switch.port_rate: 800Gbs has unknown unit 'Gbs'; expected one of bps, kbps, "
                "Mbps, Gbps, Tbps");
  EXPECT_EQ(load_error("switch:\n  port_rate: 106.2500000001Gbps\n"),
            f + ":2: switch.port_rate: 106.2500000001Gbps is not a whole number of bps");
  EXPECT_EQ(load_error("switch:\n  port_rate: 2Tbps\n"),
            f + ":2: switch.port_rate: 2Tbps is out of range [1Gbps, 1.6Tbps]");
  EXPECT_EQ(load_error("switch:\n  clock: 50MHz\n"),
            f + ":2: switch.clock: 50MHz is out of range [100MHz, 5GHz]");
  EXPECT_EQ(load_error("switch:\n  clock: {a: 1}\n"),
            f + ":2: switch.clock: expected a frequency such as 1.35GHz, got a mapping");
  EXPECT_EQ(load_error("switch:\n  buffer:\n    size: 1.5B\n"),
            f + ":3: switch.buffer.size: 1.5B is not a whole number of bytes");
  EXPECT_EQ(load_error("switch:\n  buffer:\n    size: 1000B\n"),
            f + ":3: switch.buffer.size: 1000B is out of range [1KiB, 1TiB]");
  EXPECT_EQ(load_error("switch:\n  buffer:\n    latency: 11us\n"),
            f + ":3: switch.buffer.latency: 11us is out of range (must be <= 10us)");
  EXPECT_EQ(
      load_error("switch:\n  buffer:\n    latency: -1ns\n"),
      f + ":3: switch.buffer.latency: -1ns is negative; only non-negative values are allowed");
  EXPECT_EQ(load_error("switch:\n  buffer:\n    latency: 5\n"),
            f + ":3: switch.buffer.latency: 5 has no unit; expected one of fs, ps, ns, us, ms, s");
  TestConfig c;
  load(c, write("switch:\n  buffer:\n    latency: 0\n    size: \"2MiB\"\n"), {});
  EXPECT_EQ(c.latency, Time());
  EXPECT_EQ(c.buffer_size, Bytes(2097152));
}

TEST_F(ConfigTest, ChoiceAndListErrors) {
  const std::string f = (dir_ / "run.yaml").string();
  EXPECT_EQ(load_error("switch:\n  scheduler: islp\n"),
            f + ":2: switch.scheduler: 'islp' is not one of rr, islip, pim; did you mean 'islip'?");
  EXPECT_EQ(load_error("switch:\n  scheduler: wavefront\n"),
            f + ":2: switch.scheduler: 'wavefront' is not one of rr, islip, pim");
  EXPECT_EQ(load_error("traffic:\n  weights: 5\n"),
            f + ":2: traffic.weights: expected a list of numbers such as [1, 2], got '5'");
  EXPECT_EQ(load_error("traffic:\n  weights: [1, 200]\n"),
            f + ":2: traffic.weights[1]: 200 is out of range [0, 100]");
  EXPECT_EQ(load_error("traffic:\n  weights:\n    - 1\n    - x\n"),
            f + ":2: traffic.weights[1]: expected a finite number, got 'x'");
  EXPECT_EQ(load_error("traffic:\n  weights: [[1]]\n"),
            f + ":2: traffic.weights[0]: expected a number, got a list");
  TestConfig c;
  load(c, write("traffic:\n  weights: []\n"), {});
  EXPECT_TRUE(c.weights.empty());
}

TEST_F(ConfigTest, SectionMustBeMapping) {
  const std::string f = (dir_ / "run.yaml").string();
  EXPECT_EQ(load_error("switch: 5\n"),
            f + ":1: switch: expected a section (a mapping of keys), got '5'");
  EXPECT_EQ(load_error("switch:\n  buffer: [1, 2]\n"),
            f + ":2: switch.buffer: expected a section (a mapping of keys), got a list");
  EXPECT_EQ(load_error("- a\n- b\n"),
            f + ":1: expected a mapping of keys at the top level, got a list");
}

TEST_F(ConfigTest, UnknownKeysAreErrorsWithSuggestions) {
  const std::string f = (dir_ / "run.yaml").string();
  EXPECT_EQ(load_error("switch:\n  ports: 4\n  sheduler: rr\n"),
            f + ":3: unknown key 'switch.sheduler'; did you mean 'switch.scheduler'?");
  EXPECT_EQ(load_error("switch:\n  buffer:\n    sise: 1MB\n"),
            f + ":3: unknown key 'switch.buffer.sise'; did you mean 'switch.buffer.size'?");
  EXPECT_EQ(load_error("swtch:\n  ports: 4\n"),
            f + ":1: unknown key 'swtch'; did you mean 'switch'?");
  EXPECT_EQ(load_error("switch:\n  colour: red\n"), f + ":2: unknown key 'switch.colour'");
  // A known key at another level is not suggested.
  EXPECT_EQ(load_error("ports: 4\n"), f + ":1: unknown key 'ports'");
  EXPECT_EQ(load_error("switch.ports: 4\n"),
            f + ":1: unknown key 'switch.ports'; write nested keys as nested mappings, not dotted "
                "names");
  // Every unknown key is reported, in file order, one per line.
  EXPECT_EQ(load_error("foo: 1\nswitch:\n  bar: 2\n"),
            f + ":1: unknown key 'foo'\n" + f + ":3: unknown key 'switch.bar'");
  // Contents of an unknown section are not reported separately.
  EXPECT_EQ(load_error("extra:\n  a: 1\n  b: 2\n"), f + ":1: unknown key 'extra'");
}

TEST_F(ConfigTest, DuplicateKeysAreErrors) {
  const std::string f = (dir_ / "run.yaml").string();
  EXPECT_EQ(load_error("switch:\n  ports: 4\n  ports: 8\n"),
            f + ":3: duplicate key 'switch.ports' (first given on line 2)");
}

TEST_F(ConfigTest, SyntaxErrorAndMissingFile) {
  const std::string f = (dir_ / "run.yaml").string();
  const std::string err = load_error("switch:\n  ports: [1\n  scheduler: rr\n");
  EXPECT_THAT(err, StartsWith(f + ":"));
  EXPECT_THAT(err, HasSubstr("YAML syntax error"));
  EXPECT_EQ(load_error("a: b: c\n"), f + ":1: YAML syntax error: illegal map value");

  TestConfig c;
  const std::string missing = (dir_ / "nope.yaml").string();
  EXPECT_EQ(error_of([&] { load(c, missing, {}); }),
            missing + ": cannot open: No such file or directory");
  EXPECT_EQ(error_of([&] { load(c, dir_.string(), {}); }),
            dir_.string() + ": cannot open: is a directory");
  // A second document would otherwise be ignored.
  EXPECT_EQ(load_error("switch:\n  ports: 4\n---\nswitch:\n  ports: 8\n"),
            f + ":4: a second YAML document; a configuration is one document (remove '---')");
  // An empty file is refused; `{}` asks for every default.
  for (const char* text : {"", "# only a comment\n", "\n\n"})
    EXPECT_EQ(load_error(text), f + ": no configuration keys (the file is empty or only comments); "
                                    "to run on every default, write '{}'");
  EXPECT_NO_THROW(load(c, write("{}\n"), {}));
}

// yaml-cpp 0.7's LoadAll loops for ever on a ',' after a whole top-level value (issue #38;
// jbeder/yaml-cpp#1040): in a --set value and in a file, refused at once with its position.
TEST_F(ConfigTest, ACommaAfterAWholeValueIsRefusedNotAHang) {
  const std::string after =
      " after a complete value (a ',' separates the items of a [ ] or { } list only)";
  const std::pair<std::string, std::string> overrides[] = {
      {"traffic.weights=[1],", "column 4"},
      {"traffic={load: 0.5},", "column 12"},
      {"name=\"x\",", "column 4"},
      {"name='x',", "column 4"},
      {"traffic.weights=[1] ,", "column 5"},
      {"traffic.weights=[1]\n ,", "line 2, column 2"},
      {"traffic.weights=!!seq [1],", "column 10"},
      {"name=!t ,", "column 4"},
      {"name=&a ,", "column 4"},
      {"traffic.weights=[1],[2]", "column 4"}};
  for (const auto& [o, where] : overrides) {
    SCOPED_TRACE(o);
    EXPECT_EQ(within(3, [&] { return override_error({o}); }),
              "--set " + o + ": invalid YAML value: a ',' in " + where + after);
  }
  const std::string f = (dir_ / "run.yaml").string();
  const std::pair<std::string, std::string> files[] = {
      {"{switch: {ports: 8}},\n", ":1: a ',' in column 21"},
      {"{switch: {ports: 8}}\n  ,\n", ":2: a ',' in column 3"},
      {"--- {switch: {ports: 8}} ,\n", ":1: a ',' in column 26"},
      {"\"x\",\n", ":1: a ',' in column 4"},
      {"# a comment\n[1], 2\n", ":2: a ',' in column 4"}};
  for (const auto& [text, where] : files) {
    SCOPED_TRACE(text);
    EXPECT_EQ(within(3, [&] { return load_error(text); }), f + where + after);
  }
  // A second document is still one, whatever follows its start.
  EXPECT_EQ(within(3, [&] { return load_error("switch:\n  ports: 4\n--- [1],\n"); }),
            f + ":3: a second YAML document; a configuration is one document (remove '---')");
  EXPECT_EQ(within(3, [&] { return override_error({"name=a\n...\nb"}); }),
            "--set name=a\n...\nb: a second YAML document in the value ('---'); give one value");
  // What is YAML still loads: a ',' inside a list or a plain scalar, a trailing one inside [ ].
  TestConfig c;
  load(c, "", {"traffic.weights=[1, 2,]", "name=a,b", "traffic={load: 0.25,}"});
  EXPECT_EQ(c.weights, (std::vector<double>{1, 2}));
  EXPECT_EQ(c.name, "a,b");
  EXPECT_EQ(c.load, 0.25);
}

TEST_F(ConfigTest, ConfigErrorIsAnInputError) {
  TestConfig c;
  EXPECT_THROW(load(c, "", {"switch.ports=0"}), InputError);
}

TEST_F(ConfigTest, OverridesApplyInOrderOverTheFile) {
  TestConfig c;
  load(c, write("switch:\n  ports: 8\n  scheduler: rr\n"),
       {"switch.ports=16", "traffic.weights=[1, 2]", "switch.ports=32",
        "traffic.trace_file=", "name=a=b", "switch.buffer.latency=1us"});
  EXPECT_EQ(c.ports, 32);
  EXPECT_EQ(c.scheduler, "rr");  // untouched file value
  EXPECT_EQ(c.weights, (std::vector<double>{1, 2}));
  EXPECT_EQ(c.trace_file, "");
  EXPECT_EQ(c.name, "a=b");  // only the first '=' separates key and value
  EXPECT_EQ(c.latency, Time::us(1));
}

TEST_F(ConfigTest, OverrideOfWholeSectionMergesIntoIt) {
  // A mapping sets the keys it names, as one override per key would: the section's other keys
  // (from the file or earlier overrides) stay.
  TestConfig c;
  const std::string f = write("switch:\n  ports: 4\n  port_rate: 100Gbps\n");
  load(c, f, {"traffic.weights=[1, 2]", "traffic={load: 0.25}", "switch={ports: 8}"});
  EXPECT_EQ(c.load, 0.25);
  EXPECT_EQ(c.weights, (std::vector<double>{1, 2}));
  EXPECT_EQ(c.ports, 8);
  EXPECT_EQ(c.port_rate, BitRate::gbps(100));
  EXPECT_EQ(override_error({"switch={[1]: 2}"}), "--set switch={[1]: 2}: malformed key 'switch.'");
}

TEST_F(ConfigTest, OverrideErrorsNameTheOverride) {
  EXPECT_EQ(override_error({"switch.ports=abc"}),
            "--set switch.ports=abc: switch.ports: expected an integer, got 'abc'");
  EXPECT_EQ(load_error("switch:\n  ports: 4\n", {"switch.ports=1000"}),
            "--set switch.ports=1000: switch.ports: 1000 is out of range [1, 512]");
  EXPECT_EQ(override_error({"switch.port_rate=800"}),
            "--set switch.port_rate=800: switch.port_rate: 800 has no unit; expected one of bps, "
            "kbps, Mbps, Gbps, Tbps");
  EXPECT_EQ(override_error({"traffic.weights=[1, -1]"}),
            "--set traffic.weights=[1, -1]: traffic.weights[1]: -1 is out of range [0, 100]");
  EXPECT_EQ(override_error({"switch.sheduler=rr"}),
            "--set switch.sheduler=rr: unknown key 'switch.sheduler'; did you mean "
            "'switch.scheduler'?");
  EXPECT_EQ(override_error({"foo.bar=1"}), "--set foo.bar=1: unknown key 'foo'");
  EXPECT_EQ(override_error({"switch={ports: 4, extra: 1}"}),
            "--set switch={ports: 4, extra: 1}: unknown key 'switch.extra'");
  EXPECT_EQ(override_error({"switch.ports"}), "--set switch.ports: expected KEY=VALUE");
  EXPECT_EQ(override_error({"=5"}), "--set =5: empty key; expected KEY=VALUE");
  EXPECT_EQ(override_error({"switch..ports=5"}),
            "--set switch..ports=5: malformed key 'switch..ports'");
  EXPECT_EQ(override_error({"switch.ports =5"}),
            "--set switch.ports =5: malformed key 'switch.ports '");
  EXPECT_EQ(override_error({"switch.ports.x=5"}),
            "--set switch.ports.x=5: switch.ports: expected an integer, got a mapping");
  EXPECT_EQ(load_error("switch:\n  ports: 4\n", {"switch.ports.x=5"}),
            "--set switch.ports.x=5: 'switch.ports' is not a section");
  EXPECT_THAT(override_error({"switch.ports=[1"}),
              StartsWith("--set switch.ports=[1: invalid YAML value: "));
}

TEST_F(ConfigTest, LaterOverrideReplacesEarlierValue) {
  // Overrides edit the tree before it is read, so a replaced bad value is never parsed.
  TestConfig c;
  load(c, "", {"switch.ports=abc", "switch.ports=4"});
  EXPECT_EQ(c.ports, 4);
}

TEST_F(ConfigTest, ValidateNamesWhereTheKeyCameFrom) {
  const std::string f = write("switch:\n  buffer:\n    size: 1KiB\n    cell: 2KiB\n");
  TestConfig c;
  EXPECT_EQ(error_of([&] { load(c, f, {}); }),
            f + ":4: switch.buffer.cell: must not exceed switch.buffer.size");
  EXPECT_EQ(error_of([&] { load(c, f, {"switch.buffer.cell=4KiB"}); }),
            "--set switch.buffer.cell=4KiB: switch.buffer.cell: must not exceed "
            "switch.buffer.size");
  EXPECT_EQ(error_of([&] { load(c, f, {"switch.buffer={size: 1KiB, cell: 2KiB}"}); }),
            "--set switch.buffer={size: 1KiB, cell: 2KiB}: switch.buffer.cell: must not exceed "
            "switch.buffer.size");
  const std::string g = write("switch:\n  buffer:\n    size: 1KiB\n", "g.yaml");
  EXPECT_EQ(error_of([&] { load(c, g, {"name=forbidden"}); }),
            "--set name=forbidden: name: is reserved");
  EXPECT_EQ(
      error_of([&] {
        load(c, "",
             {"switch.buffer.size=100KiB", "switch.buffer.cell=4KiB", "switch.buffer.size=1KiB"});
      }),
      "--set switch.buffer.cell=4KiB: switch.buffer.cell: must not exceed "
      "switch.buffer.size");
}

TEST_F(ConfigTest, CheckerFormatsLocationKeyAndMessage) {
  const Checker c([](const std::string& key) { return "x.yaml:7 for " + key; });
  EXPECT_EQ(error_of([&] { c.require(false, "a.b", "bad"); }), "x.yaml:7 for a.b: a.b: bad");
  EXPECT_NO_THROW(c.require(true, "a.b", "bad"));
}

// A config whose check always fails on a key that is never set, to see the default locations.
struct AlwaysFails : TestConfig {
  void validate(const Checker& c) const override { c.fail("switch.ports", "no"); }
};

TEST_F(ConfigTest, ValidateLocatesDefaults) {
  AlwaysFails c;
  EXPECT_EQ(error_of([&] { load(c, "", {}); }), "(default): switch.ports: no");
  const std::string f = write("name: x\n");
  EXPECT_EQ(error_of([&] { load(c, f, {}); }), f + " (default): switch.ports: no");
  EXPECT_EQ(error_of([&] { load(c, f, {"switch.ports=3"}); }),
            "--set switch.ports=3: switch.ports: no");
  const std::string g = write("name: x\nswitch:\n  ports: 3\n", "g.yaml");
  EXPECT_EQ(error_of([&] { load(c, g, {}); }), g + ":3: switch.ports: no");
}

TEST_F(ConfigTest, YamlOutputRoundTrips) {
  TestConfig a;
  load(a,
       write("name: 'null'\n"
             "switch:\n"
             "  ports: 48\n"
             "  scheduler: rr\n"
             "  port_rate: 106.25Gbps\n"
             "  clock: 1.35GHz\n"
             "  buffer: {size: 165660324B, cell: 1.5KB, latency: 740741fs}\n"
             "traffic:\n"
             "  load: 0.1\n"
             "  self: false\n"
             "  weights: [0.3, 1e-5, 7]\n"
             "  trace_file: 'a: b # c'\n"),
       {"seed=123456789012345678"});
  const std::string yaml = to_yaml(a);
  EXPECT_EQ(yaml, to_yaml(a));  // deterministic
  EXPECT_EQ(yaml,
            "name: \"null\"\n"
            "switch:\n"
            "  ports: 48\n"
            "  scheduler: rr\n"
            "  port_rate: 106.25Gbps\n"
            "  clock: 1.35GHz\n"
            "  buffer:\n"
            "    size: 165660324B\n"
            "    cell: 1500B\n"
            "    latency: 740.741ps\n"
            "traffic:\n"
            "  load: 0.1\n"
            "  self: false\n"
            "  weights: [0.3, 1e-05, 7]\n"
            "  trace_file: \"a: b # c\"\n"
            "seed: 123456789012345678\n");

  TestConfig b;
  load(b, write(yaml, "resolved.yaml"), {});
  EXPECT_TRUE(a == b);
  EXPECT_EQ(b.name, "null");
  EXPECT_EQ(b.trace_file, "a: b # c");
  EXPECT_EQ(to_yaml(b), yaml);

  // Defaults round-trip too (empty string, empty list).
  TestConfig d, e;
  load(d, "", {});
  load(e, write(to_yaml(d), "defaults.yaml"), {});
  EXPECT_TRUE(d == e);
  EXPECT_THAT(to_yaml(d), HasSubstr("  weights: []\n"));
  EXPECT_THAT(to_yaml(d), HasSubstr("  trace_file: \"\"\n"));
  EXPECT_THAT(to_yaml(d), Not(HasSubstr("#")));
}

TEST_F(ConfigTest, JsonOutput) {
  TestConfig c;
  load(c, "", {"traffic.weights=[1, 2.5]", "switch.port_rate=106.25Gbps"});
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["name"], "baseline");
  EXPECT_EQ(j["seed"], 1);
  EXPECT_TRUE(j["switch"]["ports"].is_number_integer());
  EXPECT_EQ(j["switch"]["ports"], 64);
  EXPECT_EQ(j["switch"]["scheduler"], "islip");
  EXPECT_EQ(j["switch"]["port_rate"], "106.25Gbps");
  EXPECT_EQ(j["switch"]["clock"], "1.35GHz");
  EXPECT_EQ(j["switch"]["buffer"]["size"], "165660324B");
  EXPECT_EQ(j["switch"]["buffer"]["cell"], "254B");
  EXPECT_EQ(j["switch"]["buffer"]["latency"], "500ns");
  EXPECT_TRUE(j["traffic"]["load"].is_number_float());
  EXPECT_EQ(j["traffic"]["load"], 0.5);
  EXPECT_EQ(j["traffic"]["self"], true);
  EXPECT_EQ(j["traffic"]["weights"], nlohmann::json::array({1.0, 2.5}));
  EXPECT_EQ(j["traffic"]["trace_file"], "");
  EXPECT_EQ(j.size(), 4u);
  EXPECT_EQ(j.dump(), to_json(c).dump());  // deterministic
}

TEST_F(ConfigTest, MarkdownReference) {
  TestConfig c;
  const std::string md = to_markdown(c, "Test configuration");
  EXPECT_THAT(md, StartsWith("# Test configuration\n\n"));
  EXPECT_THAT(md, HasSubstr("generated from the code by `fabricsim config-docs`"));
  EXPECT_THAT(md, HasSubstr("do not edit it by hand"));
  EXPECT_THAT(md, HasSubstr("\n## `switch`\n\nThe switch under test.\n"));
  EXPECT_THAT(md, HasSubstr("\n### `switch.buffer`\n\nShared packet buffer.\n"));
  EXPECT_THAT(md, HasSubstr("\n## `traffic`\n\nOffered traffic.\n"));
  EXPECT_THAT(md,
              HasSubstr("| Key | Type | Unit | Default | Range / allowed values | Description |"));
  EXPECT_THAT(md, HasSubstr("| `switch.ports` | integer |  | `64` | [1, 512] | Number of ports |"));
  EXPECT_THAT(md, HasSubstr("| `switch.scheduler` | choice |  | `islip` | `rr`, `islip`, `pim` | "
                            "Crossbar scheduler |"));
  EXPECT_THAT(md, HasSubstr("| `switch.port_rate` | bit rate | bps, kbps, Mbps, Gbps, Tbps | "
                            "`800Gbps` | [1Gbps, 1.6Tbps] | Line rate of every port |"));
  EXPECT_THAT(md, HasSubstr("| `switch.clock` | frequency | Hz, kHz, MHz, GHz | `1.35GHz` | "
                            "[100MHz, 5GHz] | Core clock |"));
  EXPECT_THAT(md, HasSubstr("| `switch.buffer.cell` | size | B, KB, MB, GB, TB, KiB, MiB, GiB, "
                            "TiB | `254B` | [64B, 4KiB] | Cell size \\| allocation unit |"));
  EXPECT_THAT(md, HasSubstr("| `switch.buffer.latency` | time | fs, ps, ns, us, ms, s | `500ns` | "
                            "<= 10us | Access latency |"));
  EXPECT_THAT(md,
              HasSubstr("| `traffic.load` | number | fraction | `0.5` | [0, 1] | Offered load |"));
  EXPECT_THAT(md, HasSubstr("| `traffic.self` | boolean |  | `true` | `true`, `false` | May a "
                            "source send to itself |"));
  EXPECT_THAT(md, HasSubstr("| `traffic.weights` | list of numbers |  | (none) | each [0, 100] | "
                            "Traffic class weights |"));
  EXPECT_THAT(md, HasSubstr("| `traffic.trace_file` | string |  | (empty) |  | Trace path |"));
  EXPECT_THAT(md, HasSubstr("| `seed` | integer |  | `1` | >= 0 | Random seed |"));
  // Top-level keys form one table before the first section, even though the description
  // interleaves them with sections.
  EXPECT_LT(md.find("| `seed` |"), md.find("## `switch`"));
  EXPECT_LT(md.find("| `name` |"), md.find("| `seed` |"));
  EXPECT_EQ(md, to_markdown(c, "Test configuration"));
  // Documenting does not touch the values.
  EXPECT_EQ(c.ports, 0);
}

// Lists of sections: a `chip:` section and `chips:`, a list of named chips whose absent keys take
// the `chip:` values (as switch_kinds inherit switch:), and `lanes:`, a plain list whose absent
// keys take their visit() defaults.
struct Chip : Configurable {
  int64_t ports = 0;
  BitRate rate;
  Bytes buffer;
  void visit(Visitor& v) override {
    v.param("ports", ports, 64, 1, 512, "", "Ports");
    v.param("rate", rate, BitRate::gbps(800), BitRate::gbps(1), BitRate::gbps(1600), "Port rate");
    v.begin_section("buffer", "Buffer.");
    v.param("size", buffer, Bytes(1 << 20), Bytes(1), Bytes(1ull << 40), "Capacity");
    v.end_section();
  }
  // Keys named as the chip: section's, as SwitchConfig::validate does.
  void validate(const Checker& c) const override {
    c.require(ports % 2 == 0, "chip.ports", "must be even, got " + std::to_string(ports));
  }
};
struct NamedChip : Configurable {
  std::string name;
  Chip chip;
  void visit(Visitor& v) override {
    v.param("name", name, "", "Its name");
    chip.visit(v);
  }
};
struct Lane : Configurable {
  int64_t id = -1;
  double weight = -1;
  void visit(Visitor& v) override {
    v.param("id", id, 0, 0, 100, "", "Lane");
    v.param("weight", weight, 1.0, 0.0, 10.0, "", "Weight");
  }
};
struct ListConfig : Configurable {
  Chip chip;
  std::vector<NamedChip> chips;
  std::vector<Lane> lanes;
  void visit(Visitor& v) override {
    v.begin_section("chip", "The default chip.");
    chip.visit(v);
    v.end_section();
    ListOf<NamedChip> named(chips, [this] {
      NamedChip n;
      n.chip = chip;
      return n;
    });
    v.section_list("chips", named, "Other chips; absent keys take the chip: values.");
    ListOf<Lane> plain(lanes);
    v.section_list("lanes", plain, "Lanes.");
  }
  void validate(const Checker& c) const override {
    chip.validate(c);
    for (size_t i = 0; i < chips.size(); ++i)
      chips[i].chip.validate(c.renamed("chip", "chips[" + std::to_string(i) + "]"));
  }
};

std::string list_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

TEST_F(ConfigTest, ListOfSectionsLoadsElementsInheritingTheirBase) {
  ListConfig c;
  load(c,
       write("chip:\n"
             "  ports: 32\n"
             "  rate: 400Gbps\n"
             "chips:\n"
             "  - name: spine\n"
             "    ports: 128\n"
             "  - name: small\n"
             "    buffer:\n"
             "      size: 2KiB\n"
             "lanes:\n"
             "  - id: 3\n"
             "  - weight: 2.5\n"),
       {});
  ASSERT_EQ(c.chips.size(), 2u);
  EXPECT_EQ(c.chips[0].name, "spine");
  EXPECT_EQ(c.chips[0].chip.ports, 128);
  EXPECT_EQ(c.chips[0].chip.rate, BitRate::gbps(400));  // chip:'s, not the visit() default
  EXPECT_EQ(c.chips[0].chip.buffer, Bytes(1 << 20));
  EXPECT_EQ(c.chips[1].chip.ports, 32);
  EXPECT_EQ(c.chips[1].chip.buffer, Bytes(2048));
  ASSERT_EQ(c.lanes.size(), 2u);  // a plain list: absent keys take the visit() defaults
  EXPECT_EQ(c.lanes[0].id, 3);
  EXPECT_EQ(c.lanes[0].weight, 1.0);
  EXPECT_EQ(c.lanes[1].id, 0);
  EXPECT_EQ(c.lanes[1].weight, 2.5);
  // Absent, or given with every element commented out: empty. A reload replaces the elements.
  load(c, write("chips:\n  # - name: x\n"), {});
  EXPECT_TRUE(c.chips.empty());
  EXPECT_TRUE(c.lanes.empty());
}

TEST_F(ConfigTest, ListOfSectionsErrorsNameTheElementIndexFileAndLine) {
  const std::string f = (dir_ / "run.yaml").string();
  ListConfig c;
  const auto err = [&](const std::string& yaml) {
    return list_error([&] { load(c, write(yaml), {}); });
  };
  EXPECT_EQ(err("chips:\n  - name: a\n  - name: b\n    ports: 600\n"),
            f + ":4: chips[1].ports: 600 is out of range [1, 512]");
  EXPECT_EQ(err("chips:\n  - name: a\n    rate: fast\n"),
            f + ":3: chips[0].rate: fast does not start with a number; expected a bit rate such "
                "as 800Gbps");
  EXPECT_EQ(err("chips:\n  - name: a\n  - prots: 8\n"),
            f + ":3: unknown key 'chips[1].prots'; did you mean 'chips[1].ports'?");
  EXPECT_EQ(err("chips:\n  - buffer:\n      sise: 1B\n"),
            f + ":3: unknown key 'chips[0].buffer.sise'; did you mean 'chips[0].buffer.size'?");
  EXPECT_EQ(err("chips:\n  - name: a\n  - just text\n"),
            f + ":3: chips[1]: expected a section (a mapping of keys), got 'just text'");
  EXPECT_EQ(err("chips:\n  name: a\n"),
            f + ":1: chips: expected a list of sections (a sequence of mappings, '- key: value'), "
                "got a mapping");
  EXPECT_EQ(err("chips:\n  - name: a\n    name: b\n"),
            f + ":3: duplicate key 'chips[0].name' (first given on line 2)");
  // Cross-field checks name the element's key: at its line, or (left out: inherited) at the
  // element's.
  EXPECT_EQ(err("chips:\n  - name: a\n  - name: b\n    ports: 7\n"),
            f + ":4: chips[1].ports: must be even, got 7");
  EXPECT_EQ(err("chip:\n  ports: 9\n"), f + ":2: chip.ports: must be even, got 9");
  EXPECT_EQ(err("chip:\n  ports: 8\nchips:\n  - name: a\n  - name: b\n    ports: 9\n"),
            f + ":6: chips[1].ports: must be even, got 9");
  load(c, write("chip:\n  ports: 8\nchips:\n  - name: a\n"), {});
  EXPECT_EQ(list_error([&] { load(c, write("chips:\n  - name: a\n"), {"chip.ports=9"}); }),
            "--set chip.ports=9: chip.ports: must be even, got 9");
}

TEST_F(ConfigTest, ListOfSectionsOverridesAddressAndAppendElements) {
  const std::string path = write("chips:\n  - name: a\n  - name: b\n    ports: 16\n");
  ListConfig c;
  load(c, path, {"chips[1].ports=8", "chips[0].buffer.size=4KiB", "chips[2].name=c"});
  ASSERT_EQ(c.chips.size(), 3u);
  EXPECT_EQ(c.chips[1].chip.ports, 8);
  EXPECT_EQ(c.chips[0].chip.buffer, Bytes(4096));
  EXPECT_EQ(c.chips[2].name, "c");
  EXPECT_EQ(c.chips[2].chip.ports, 64);
  // An override of the base reaches every element that leaves the key out.
  load(c, path, {"chip.ports=32"});
  EXPECT_EQ(c.chips[0].chip.ports, 32);
  EXPECT_EQ(c.chips[1].chip.ports, 16);
  // A mapping merges into an element; a list replaces the whole list.
  load(c, path, {"chips[1]={ports: 4, name: z}"});
  EXPECT_EQ(c.chips[1].name, "z");
  EXPECT_EQ(c.chips[1].chip.ports, 4);
  load(c, path, {"chips[1].ports=9", "chips=[{name: only}]"});
  ASSERT_EQ(c.chips.size(), 1u);
  EXPECT_EQ(c.chips[0].name, "only");
  // A list that is not there starts at [0]; a new element's errors name the override.
  load(c, "", {"lanes[0].id=5", "lanes[1].weight=3"});
  ASSERT_EQ(c.lanes.size(), 2u);
  EXPECT_EQ(c.lanes[0].id, 5);
  EXPECT_EQ(c.lanes[1].weight, 3.0);
  EXPECT_EQ(list_error([&] { load(c, path, {"chips[1].ports=7"}); }),
            "--set chips[1].ports=7: chips[1].ports: must be even, got 7");
  EXPECT_EQ(list_error([&] { load(c, path, {"chips[2].ports=7"}); }),
            "--set chips[2].ports=7: chips[2].ports: must be even, got 7");
  EXPECT_EQ(list_error([&] { load(c, path, {"chips[3].name=x"}); }),
            "--set chips[3].name=x: 'chips' has 2 elements: 'chips[3]' is beyond its end "
            "('chips[2]' appends one)");
  EXPECT_EQ(list_error([&] { load(c, "", {"lanes[1].id=1"}); }),
            "--set lanes[1].id=1: 'lanes' has 0 elements: 'lanes[1]' is beyond its end "
            "('lanes[0]' appends one)");
  EXPECT_EQ(list_error([&] { load(c, path, {"chips[1].prots=8"}); }),
            "--set chips[1].prots=8: unknown key 'chips[1].prots'; did you mean "
            "'chips[1].ports'?");
  EXPECT_EQ(list_error([&] { load(c, path, {"chips.ports=8"}); }),
            "--set chips.ports=8: 'chips' is not a section");
  EXPECT_EQ(list_error([&] { load(c, path, {"chip[0].ports=8"}); }),
            "--set chip[0].ports=8: chip: expected a section (a mapping of keys), got a list");
  EXPECT_EQ(list_error([&] { load(c, write("chip:\n  ports: 8\n"), {"chip[0].ports=8"}); }),
            "--set chip[0].ports=8: 'chip' is not a list");
  for (const char* bad : {"chips[].ports=1", "chips[x].ports=1", "chips[1]x.ports=1",
                          "chips[-1].ports=1", "chips[1][2].ports=1"})
    EXPECT_THAT(list_error([&] { load(c, path, {bad}); }), HasSubstr("malformed key")) << bad;
}

TEST_F(ConfigTest, ListOfSectionsPrintsAndDocumentsItsElements) {
  ListConfig c;
  EXPECT_THAT(to_yaml(c), HasSubstr("chips: []\n"));
  EXPECT_EQ(to_json(c)["chips"], nlohmann::json::array());
  load(c, write("chip:\n  rate: 400Gbps\nchips:\n  - name: a\n    ports: 8\nlanes:\n  - id: 2\n"),
       {});
  const std::string yaml = to_yaml(c);
  EXPECT_THAT(yaml, HasSubstr("chips:\n  - name: a\n    ports: 8\n    rate: 400Gbps\n"));
  ListConfig back;
  load(back, write(yaml, "back.yaml"), {});
  ASSERT_EQ(back.chips.size(), 1u);
  EXPECT_EQ(back.chips[0].chip.ports, 8);
  EXPECT_EQ(back.chips[0].chip.rate, BitRate::gbps(400));
  EXPECT_EQ(back.lanes.at(0).id, 2);
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["chips"][0]["name"], "a");
  EXPECT_EQ(j["chips"][0]["buffer"]["size"], "1MiB");
  EXPECT_EQ(j["lanes"][0]["weight"], 1.0);
  // The reference documents an element's keys once, under "chips[]", whatever the list holds.
  const std::string md = to_markdown(c, "Lists");
  EXPECT_THAT(md, HasSubstr("## `chips[]`\n\nOther chips; absent keys take the chip: values.\n"));
  EXPECT_THAT(md, HasSubstr("| `chips[].ports` | integer |  | `64` | [1, 512] | Ports |"));
  EXPECT_THAT(md, HasSubstr("### `chips[].buffer`"));
  EXPECT_THAT(md, HasSubstr("| `chips[].buffer.size` | size |"));
  EXPECT_THAT(md, HasSubstr("| `lanes[].weight` | number |"));
  EXPECT_THAT(md, Not(HasSubstr("chips[0]")));
  EXPECT_EQ(md, to_markdown(back, "Lists"));
}

// Keys that act only in some configurations (Visitor::applies_when): a section of them, a key
// inside it with a condition of its own, and a section whose condition names one of its keys.
struct Conditional : Configurable {
  std::string mode;
  int64_t depth = 0;
  bool on = false;
  int64_t extra = 0;
  bool nic_enabled = false;
  int64_t nic_rate = 0;

  void visit(Visitor& v) override {
    v.choice("mode", mode, "a", {"a", "b"}, "Mode");
    v.applies_when("deep", "{mode}: b", [this] { return mode == "b"; });
    v.begin_section("deep", "Used in mode b.");
    v.param("depth", depth, 1, 0, 10, "", "Depth");
    v.param("on", on, false, "Extra on");
    v.applies_when("extra", "{on}: true", [this] { return on; });
    v.param("extra", extra, 0, 0, 10, "", "Extra");
    v.end_section();
    v.applies_when("nic", "{nic.enabled}: true", [this] { return nic_enabled; });
    v.begin_section("nic", "A NIC.");
    v.param("enabled", nic_enabled, false, "NIC on");
    v.param("rate", nic_rate, 0, 0, 10, "", "Rate");
    v.end_section();
  }
};

TEST_F(ConfigTest, KeysThatCannotActNameTheOutermostConditionThatFails) {
  Conditional c;
  load(c, "", {});
  auto inert = inert_keys(c);
  // Mode a: all of `deep` is idle, for the section's condition (not deep.extra's own).
  ASSERT_EQ(inert.count("deep.extra"), 1u);
  EXPECT_EQ(inert["deep.extra"].when, "mode: b");
  EXPECT_EQ(inert["deep.extra"].now, "mode is a");
  EXPECT_EQ(inert.count("deep.depth"), 1u);
  EXPECT_EQ(inert.count("mode"), 0u);
  // The key a condition names decides: nic.enabled is never idle for nic's condition.
  EXPECT_EQ(inert.count("nic.enabled"), 0u);
  ASSERT_EQ(inert.count("nic.rate"), 1u);
  EXPECT_EQ(inert["nic.rate"].when, "nic.enabled: true");
  EXPECT_EQ(inert["nic.rate"].now, "nic.enabled is false");

  // Mode b: deep acts, but deep.extra only with deep.on.
  load(c, "", {"mode=b", "nic.enabled=true"});
  inert = inert_keys(c);
  EXPECT_EQ(inert.count("deep.depth"), 0u);
  EXPECT_EQ(inert.count("nic.rate"), 0u);
  ASSERT_EQ(inert.count("deep.extra"), 1u);
  EXPECT_EQ(inert["deep.extra"].when, "deep.on: true");
  load(c, "", {"mode=b", "deep.on=true", "nic.enabled=true"});
  EXPECT_TRUE(inert_keys(c).empty());
}

TEST_F(ConfigTest, LoadNotesTheKeysGivenAndWhere) {
  Conditional c;
  KeyOrigins given;
  load(c, write("mode: a\ndeep:\n  depth: 3\n"), {"deep.extra=2", "nic={rate: 1}"}, &given);
  const std::string file = (dir_ / "run.yaml").string();
  EXPECT_EQ(given, (KeyOrigins{{"mode", file + ":1"},
                               {"deep.depth", file + ":3"},
                               {"deep.extra", "--set deep.extra=2"},
                               {"nic.rate", "--set nic={rate: 1}"}}));
  // Defaults are not given, even where they cannot act.
  load(c, "", {}, &given);
  EXPECT_TRUE(given.empty());
  // Nor the keys a `!variant` section states (for configurations made from the file), unless a
  // --set gives them.
  load(c, write("mode: a\ndeep: !variant\n  depth: 3\n  on: true\n", "variant.yaml"),
       {"deep.extra=2", "deep.on=false"}, &given);
  const std::string variant = (dir_ / "variant.yaml").string();
  EXPECT_EQ(given, (KeyOrigins{{"mode", variant + ":1"},
                               {"deep.extra", "--set deep.extra=2"},
                               {"deep.on", "--set deep.on=false"}}));
  EXPECT_EQ(c.depth, 3);
}

TEST_F(ConfigTest, ReferenceShowsWhenKeysApply) {
  Conditional c;
  const std::string md = to_markdown(c, "Conditional");
  EXPECT_THAT(md, HasSubstr("## `deep`\n\nUsed in mode b.\n\nApplies only when `mode`: b.\n"));
  EXPECT_THAT(md, HasSubstr("| Extra Applies only when `deep.on`: true. |"));
  EXPECT_THAT(md, HasSubstr("Applies only when `nic.enabled`: true."));
  EXPECT_THAT(md, Not(HasSubstr("| Depth Applies")));
}

// A condition that names a key the description lacks is a slip, found on the first evaluation.
struct MisnamedCondition : Configurable {
  int64_t x = 0;
  void visit(Visitor& v) override {
    v.applies_when("x", "{mod}: b", [] { return false; });
    v.param("x", x, 0, 0, 1, "", "X");
  }
};
struct MisplacedCondition : Configurable {
  int64_t x = 0;
  void visit(Visitor& v) override {
    v.applies_when("y", "{x}: 1", [] { return false; });
    v.param("x", x, 0, 0, 1, "", "X");
  }
};

TEST_F(ConfigTest, ConditionsMustNameKeysOfTheDescription) {
  MisnamedCondition a;
  EXPECT_THROW(inert_keys(a), std::logic_error);
  MisplacedCondition b;
  EXPECT_THROW(inert_keys(b), std::logic_error);
}

}  // namespace
}  // namespace fabricsim::config
