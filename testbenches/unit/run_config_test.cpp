// A run's keys that cannot act (RunConfig::inert_given): a key given where its condition fails is
// named with where it was given and what it needs; the same key where it can act, or left at its
// default, is not. And the command's side: `fabricsim check` warns, `--strict` refuses (exit 2).
#include "models/sim/run_config.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testbenches/unit/check_command.h"

namespace fabricsim::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kRoot = FABRICSIM_SOURCE_DIR;

std::vector<InertKey> inert(const std::string& path, const std::vector<std::string>& sets) {
  return RunConfig::load(path.empty() ? "" : kRoot + "/" + path, sets).inert_given();
}

std::vector<std::string> keys(const std::vector<InertKey>& v) {
  std::vector<std::string> out;
  for (const InertKey& k : v) out.push_back(k.key);
  return out;
}

TEST(RunConfigInertKeys, SchedulerKeysActOnlyWithACrossbar) {
  // The shipped 51.2T chip is shared memory: no crossbar, so no scheduler.
  const auto v = inert("configs/switch_51t2.yaml", {"switch.scheduler.iterations=4"});
  ASSERT_EQ(keys(v), std::vector<std::string>{"switch.scheduler.iterations"});
  EXPECT_EQ(v[0].where, "--set switch.scheduler.iterations=4");
  EXPECT_EQ(v[0].when, "switch.architecture: voq or input_fifo (a crossbar)");
  EXPECT_EQ(v[0].now, "switch.architecture is shared_memory");
  // The same key on a crossbar acts.
  EXPECT_TRUE(inert("configs/switch_51t2.yaml",
                    {"switch.architecture=voq", "switch.scheduler.iterations=4"})
                  .empty());
  // ... but not with an algorithm that has no iterations.
  EXPECT_EQ(keys(inert("configs/switch_51t2.yaml",
                       {"switch.architecture=voq", "switch.scheduler.algorithm=rr",
                        "switch.scheduler.iterations=4"})),
            std::vector<std::string>{"switch.scheduler.iterations"});
}

TEST(RunConfigInertKeys, FileKeysAreNamedWithTheirLine) {
  // PFC keys in a file that runs IB credits: idle, each named at its line, in file order.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("run_config_test_" + std::to_string(::getpid()) + ".yaml"))
                               .string();
  std::ofstream(path) << "flow_control:\n  mode: credit\n  pfc:\n    alpha: 0.5\n"
                         "    pause_quanta: 100\n";
  const auto v = RunConfig::load(path, {}).inert_given();
  std::filesystem::remove(path);
  ASSERT_EQ(keys(v),
            (std::vector<std::string>{"flow_control.pfc.alpha", "flow_control.pfc.pause_quanta"}));
  EXPECT_EQ(v[0].where, path + ":4");
  EXPECT_EQ(v[1].where, path + ":5");
  EXPECT_EQ(v[0].when, "flow_control.mode: pfc");
  EXPECT_EQ(v[0].now, "flow_control.mode is credit");
}

TEST(RunConfigInertKeys, AnOverrideOfWhatFileKeysNeedIsNotTheirSlip) {
  // --set flow_control.mode=credit over a PFC file leaves its PFC keys idle on purpose ...
  EXPECT_TRUE(inert("configs/switch_51t2_roce.yaml", {"flow_control.mode=credit"}).empty());
  // ... but a PFC key the command line gives itself is named.
  EXPECT_EQ(keys(inert("configs/switch_51t2_roce.yaml",
                       {"flow_control.mode=credit", "flow_control.pfc.alpha=2"})),
            std::vector<std::string>{"flow_control.pfc.alpha"});
}

TEST(RunConfigInertKeys, DefaultsAreNeverNamed) {
  // Every key at its default, scheduler included, on a shared-memory chip: nothing given.
  EXPECT_TRUE(inert("", {"switch.architecture=shared_memory"}).empty());
}

TEST(RunConfigInertKeys, NicKeysNeedTheNicAndTheirAlgorithm) {
  // Without NICs every nic.* key is idle for nic.enabled, whatever else it needs.
  auto v = inert("", {"nic.dcqcn.profile=custom", "nic.rud.reorder_threshold=8"});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].when, "nic.enabled: true");
  EXPECT_EQ(v[1].when, "nic.enabled: true");
  // nic.enabled itself decides: never idle.
  EXPECT_TRUE(inert("", {"nic.enabled=false"}).empty());
  // With NICs, a congestion control's keys need it chosen, RUD's keys need rud, RC's own need RC.
  v = inert("configs/nic_400g.yaml", {"nic.cc=timely", "nic.dcqcn.profile=custom"});
  ASSERT_EQ(keys(v), std::vector<std::string>{"nic.dcqcn.profile"});
  EXPECT_EQ(v[0].when, "nic.cc: dcqcn");
  EXPECT_EQ(v[0].now, "nic.cc is timely");
  EXPECT_EQ(keys(inert("configs/nic_400g.yaml",
                       {"nic.transport=rud", "nic.rc.ack_every=4", "nic.rud.reorder_threshold=8"})),
            std::vector<std::string>{"nic.rc.ack_every"});
  EXPECT_EQ(keys(inert("configs/nic_400g.yaml", {"nic.rud.reorder_threshold=8"})),
            std::vector<std::string>{"nic.rud.reorder_threshold"});
}

TEST(RunConfigInertKeys, EcnNeedsEcnCapablePackets) {
  // switch_51t2_roce.yaml marks RoCE traffic (traffic.ect); without ECT nothing is marked.
  EXPECT_TRUE(inert("configs/switch_51t2_roce.yaml", {"flow_control.ecn.kmin=1MB"}).empty());
  const auto v =
      inert("configs/switch_51t2_roce.yaml", {"traffic.ect=false", "flow_control.ecn.kmin=1MB"});
  ASSERT_EQ(keys(v), std::vector<std::string>{"flow_control.ecn.kmin"});
  EXPECT_EQ(v[0].now, "traffic.ect is false, nic.enabled is false, nic.cc is none");
}

TEST(RunConfigInertKeys, PatternAndTopologyKeysNeedTheirPattern) {
  EXPECT_EQ(keys(inert("", {"traffic.incast.sources=3"})),
            std::vector<std::string>{"traffic.incast.sources"});
  EXPECT_TRUE(inert("", {"traffic.pattern=incast", "traffic.incast.sources=3"}).empty());
  EXPECT_EQ(keys(inert("", {"workload.bytes=1MiB"})), std::vector<std::string>{"workload.bytes"});
  EXPECT_EQ(keys(inert("", {"topology.spines=4"})), std::vector<std::string>{"topology.spines"});
  EXPECT_TRUE(inert("", {"topology.kind=leaf_spine", "topology.spines=4"}).empty());
}

TEST(RunConfigInertKeys, CnpSpacingNeedsAnAlgorithmThatReactsToCnps) {
  // DCQCN's custom profile takes nic.cnp.interval; its named profiles set their own spacing.
  const std::string nic = "configs/nic_400g.yaml";
  EXPECT_TRUE(
      inert(nic, {"nic.cc=dcqcn", "nic.dcqcn.profile=custom", "nic.cnp.interval=10us"}).empty());
  auto v = inert(nic, {"nic.cc=dcqcn", "nic.dcqcn.profile=hpcc", "nic.cnp.interval=50us"});
  ASSERT_EQ(keys(v), std::vector<std::string>{"nic.cnp.interval"});
  EXPECT_EQ(v[0].when,
            "nic.cc: dcqcn with nic.dcqcn.profile: custom (a congestion control that reacts to "
            "CNPs)");
  EXPECT_EQ(v[0].now, "nic.cc is dcqcn, nic.dcqcn.profile is hpcc");
  // None, TIMELY (its packets draw CNPs it ignores), HPCC and Swift read no CNP.
  for (const char* cc : {"none", "timely", "hpcc", "swift"}) {
    v = inert(nic, {std::string("nic.cc=") + cc, "nic.cnp.interval=10us"});
    ASSERT_EQ(keys(v), std::vector<std::string>{"nic.cnp.interval"}) << cc;
    EXPECT_EQ(v[0].now, std::string("nic.cc is ") + cc + ", nic.dcqcn.profile is hpcc");
  }
}

TEST(RunConfigInertKeys, TcWeightsNeedASyntheticPattern) {
  // A message file (and a trace, a workload) names each message's class itself.
  EXPECT_TRUE(inert("", {"traffic.tc_weights=[1, 1]"}).empty());
  EXPECT_TRUE(inert("", {"traffic.pattern=all_to_all", "traffic.tc_weights=[1, 1]"}).empty());
  const auto v = inert(
      "", {"traffic.pattern=trace", "traffic.trace.file=" + kRoot + "/traces/example_incast.trace",
           "traffic.tc_weights=[1, 1]"});
  ASSERT_EQ(keys(v), std::vector<std::string>{"traffic.tc_weights"});
  EXPECT_EQ(v[0].when, "traffic.pattern: uniform, permutation, hotspot, incast or all_to_all");
  EXPECT_EQ(v[0].now, "traffic.pattern is trace");
  const std::string nic = "configs/nic_400g.yaml", w = "traffic.tc_weights=[0, 1]";
  EXPECT_EQ(
      keys(inert(nic, {"traffic.pattern=messages",
                       "traffic.messages.file=" + kRoot + "/traces/example_messages.txt", w})),
      std::vector<std::string>{"traffic.tc_weights"});
  EXPECT_EQ(keys(inert(nic, {"traffic.pattern=workload", w})),
            std::vector<std::string>{"traffic.tc_weights"});
}

TEST(RunConfigInertKeys, HashFieldsNeedAModeThatHashes) {
  // A dragonfly: valiant and ugal route nowhere else.
  const std::string f = "switch.routing.hash_fields=src,dst,tc", df = "topology.kind=dragonfly";
  for (const char* m : {"ecmp", "flowlet", "adaptive"})
    EXPECT_TRUE(inert("", {df, std::string("switch.routing.mode=") + m, f}).empty()) << m;
  for (const char* m : {"spray", "valiant", "ugal"}) {
    const auto v = inert("", {df, std::string("switch.routing.mode=") + m, f});
    ASSERT_EQ(keys(v), std::vector<std::string>{"switch.routing.hash_fields"}) << m;
    EXPECT_EQ(v[0].when, "switch.routing.mode: ecmp, flowlet or adaptive");
  }
  // The seed still acts under spray (it starts each destination's pointer).
  EXPECT_TRUE(inert("", {"switch.routing.mode=spray", "switch.routing.hash_seed=7"}).empty());
}

TEST(RunConfigInertKeys, ASwitchKeyActsThroughTheKindsThatInheritIt) {
  // The switch: chip is shared memory, but a kind that is a crossbar inherits its scheduler keys.
  const std::vector<std::string> base = {
      "switch.architecture=shared_memory", "switch.scheduler.iterations=3",
      "switch_kinds[0].name=spine", "topology.kind=leaf_spine", "topology.kinds.spine=spine"};
  std::vector<std::string> sets = base;
  sets.push_back("switch_kinds[0].architecture=voq");
  EXPECT_TRUE(inert("", sets).empty());
  // A kind that sets the key itself does not take the switch: one.
  sets.push_back("switch_kinds[0].scheduler.iterations=2");
  EXPECT_EQ(keys(inert("", sets)), std::vector<std::string>{"switch.scheduler.iterations"});
  // Nor does a kind without a crossbar.
  EXPECT_EQ(keys(inert("", base)), std::vector<std::string>{"switch.scheduler.iterations"});
}

TEST(RunConfigInertKeys, ShippedConfigurationsGiveNoKeyThatCannotAct) {
  for (const auto& dir : {"configs", "configs/examples", "configs/validation"}) {
    for (const auto& e : std::filesystem::directory_iterator(kRoot + "/" + dir)) {
      if (e.path().extension() != ".yaml") continue;
      const std::string rel = std::string(dir) + "/" + e.path().filename().string();
      for (const InertKey& k : inert(rel, {}))
        ADD_FAILURE() << k.where << ": " << k.key << " cannot act (" << k.when << ")";
    }
  }
}

// The command: a warning per key and exit 0; with --strict, exit 2 naming the key.
using unit::Command;
Command check(const std::vector<std::string>& args) {
  return unit::run_check(kRoot + "/configs/switch_51t2.yaml", args);
}

TEST(RunConfigInertKeys, CheckWarnsAndStrictRefuses) {
  const std::string key = "switch.scheduler.iterations";
  Command c = check({"--set", key + "=4"});
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("fabricsim: warning: --set " + key + "=4: " + key +
                               ": cannot act here: it applies only when switch.architecture: "
                               "voq or input_fifo (a crossbar) (switch.architecture is "
                               "shared_memory)"));
  c = check({"--strict", "--set", key + "=4"});
  EXPECT_EQ(c.rc, 2) << c.err;
  EXPECT_THAT(c.err, HasSubstr("--strict: 1 key given that cannot act"));
  EXPECT_THAT(c.err, HasSubstr(key));
  // Where it can act: no warning, and --strict accepts it.
  c = check({"--strict", "--set", "switch.architecture=voq", "--set", key + "=4"});
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_THAT(c.err, Not(HasSubstr("cannot act")));
  c = check({"--strict"});
  EXPECT_EQ(c.rc, 0) << c.err;
}

// scale_up: refused with exit 2 naming the key and the problem.
TEST(RunConfigScaleUp, BadKeysExitTwoNamingTheKey) {
  const std::vector<std::string> workload = {"--set", "traffic.pattern=workload", "--set",
                                             "nic.enabled=true"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), workload.begin(), workload.end());
    return check(more);
  };
  Command c = with({"--set", "scale_up.preset=nvlink9"});
  EXPECT_EQ(c.rc, 2) << c.err;
  EXPECT_THAT(c.err, HasSubstr("scale_up.preset"));
  c = with({"--set", "scale_up.gpus=8"});  // no preset: the rate must be given
  EXPECT_EQ(c.rc, 2) << c.err;
  EXPECT_THAT(c.err, HasSubstr("scale_up.bandwidth"));
  EXPECT_THAT(c.err, HasSubstr("no preset gives it"));
  c = with({"--set", "scale_up.preset=h100_nvlink4", "--set", "scale_up.gpus=3"});
  EXPECT_EQ(c.rc, 2) << c.err;
  EXPECT_THAT(c.err, HasSubstr("scale_up.gpus"));
  EXPECT_THAT(c.err, HasSubstr("do not tile"));
  c = with({"--set", "scale_up.preset=h100_nvlink4", "--set", "scale_up.gpus=1"});
  EXPECT_EQ(c.rc, 2) << c.err;
  EXPECT_THAT(c.err, HasSubstr("2 or more GPUs"));
  c = check({"--set", "scale_up.preset=h100_nvlink4"});  // no workload to carry
  EXPECT_EQ(c.rc, 2) << c.err;
  EXPECT_THAT(c.err, HasSubstr("needs traffic.pattern workload"));
  c = with({"--set", "scale_up.preset=h100_nvlink4"});
  EXPECT_EQ(c.rc, 0) << c.err;
}

}  // namespace
}  // namespace fabricsim::sim

namespace fabricsim::sim {
namespace {
// UEC CBFC is an Ethernet link layer: on IB framing it is refused, naming the key.
TEST(RunConfigCredits, CbfcNeedsEthernetFraming) {
  try {
    RunConfig::load(kRoot + "/configs/switch_51t2_ib.yaml",
                    {"flow_control.credit.protocol=uec_cbfc"});
    ADD_FAILURE() << "accepted uec_cbfc on IB framing";
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("flow_control.credit.protocol"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("Ethernet"));
  }
  EXPECT_NO_THROW(
      RunConfig::load(kRoot + "/configs/switch_51t2.yaml",
                      {"flow_control.mode=credit", "flow_control.credit.protocol=uec_cbfc",
                       "flow_control.credit.unit=256B"}));
}
}  // namespace
}  // namespace fabricsim::sim
