// RTL-level tests that need the Verilated models (label cosim): the RTL iSLIP behind the
// VoqScheduler interface against the C++ model for every port count the RTL supports (both the
// 64- and the 128-port instance), the scheduler factory's impl selection, and the contents of the
// FST waveform the harness writes around a mismatch (read back with the FST reader that ships
// with Verilator).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtkwave/fstapi.h"
#include "models/common/rng.h"
#include "models/link/credit_unit.h"
#include "models/switch/islip.h"
#include "models/switch/switch_config.h"
#include "rtl/credit_unit_rtl.h"
#include "rtl/islip_rtl.h"
#include "rtl/register.h"
#include "testbenches/cosim/cosim.h"

namespace fabricsim {
namespace {

// Random requests and readiness at several loads; compares matches and every pointer each call.
void compare_with_model(int n, int k, int calls, uint64_t seed) {
  sw::IslipScheduler model(n, k);
  rtl::RtlIslipScheduler dut(n, k);
  std::vector<PortSet> req(static_cast<size_t>(n), PortSet(n));
  PortSet ready(n);
  std::vector<int> m1(static_cast<size_t>(n)), m2(static_cast<size_t>(n));
  Rng rng(seed);
  for (int c = 0; c < calls; ++c) {
    const double p = (c / 50) % 4 == 3 ? 1.0 : 0.25 * ((c / 50) % 4 + 1);
    for (auto& r : req) {
      r.clear_all();
      for (int j = 0; j < n; ++j)
        if (rng.bernoulli(p)) r.set(j);
    }
    ready.set_all();
    if (c % 7 == 0)
      for (int j = 0; j < n; ++j)
        if (rng.bernoulli(0.3)) ready.clear(j);
    model.schedule(req, ready, m1);
    dut.schedule(req, ready, m2);
    ASSERT_EQ(m1, m2) << "N " << n << " k " << k << " call " << c;
    for (int j = 0; j < n; ++j) {
      ASSERT_EQ(model.grant_pointer(j), dut.grant_pointer(j)) << "N " << n << " output " << j;
      ASSERT_EQ(model.accept_pointer(j), dut.accept_pointer(j)) << "N " << n << " input " << j;
    }
  }
  EXPECT_EQ(dut.rtl_cycles(), 1u + static_cast<uint64_t>(calls) * k);  // reset + k per matching
}

TEST(RtlIslipScheduler, MatchesModelForEveryPortCountUpTo64) {
  for (int n = 1; n <= 64; ++n) compare_with_model(n, 1 + n % 4, 300, 100 + n);
}

TEST(RtlIslipScheduler, MatchesModelOnThe128PortInstance) {
  for (int n : {65, 100, 127, 128}) compare_with_model(n, n == 128 ? 2 : 3, 300, n);
}

// In the switch the RTL takes the cycles it takes: begin() clocks the edge of its own cycle, each
// poll() one edge per model cycle since, and the grant is there k cycles after the requests (as
// the model's k x 1 cycles), never earlier; the RTL is clocked exactly once per model cycle.
TEST(RtlIslipScheduler, InTheLoopAMatchingTakesOneCyclePerIteration) {
  for (const int k : {1, 2, 4, 7}) {
    const int n = 16;
    sw::IslipScheduler model(n, k);
    rtl::RtlIslipScheduler dut(n, k);
    std::vector<PortSet> req(static_cast<size_t>(n), PortSet(n));
    PortSet ready(n);
    ready.set_all();
    std::vector<int> m1(static_cast<size_t>(n)), m2(static_cast<size_t>(n));
    Rng rng(static_cast<uint64_t>(k));
    int64_t c = 10;
    const uint64_t cycles0 = dut.rtl_cycles();
    for (int matching = 0; matching < 50; ++matching) {
      for (auto& r : req) {
        r.clear_all();
        for (int j = 0; j < n; ++j)
          if (rng.bernoulli(0.4)) r.set(j);
      }
      const int64_t start = c;
      model.begin(req, ready, m1, start, k);
      dut.begin(req, ready, m2, start, k);
      EXPECT_EQ(dut.rtl_cycles() - cycles0, static_cast<uint64_t>(start - 10 + 1));
      for (++c; !dut.poll(c, m2); ++c) {
        EXPECT_TRUE(dut.clocking()) << "k " << k << " cycle " << c;
        EXPECT_FALSE(model.poll(c, m1)) << "k " << k << ": the model's grant came first";
        ASSERT_LT(c, start + 100);
      }
      EXPECT_EQ(c, start + k) << "k " << k;
      EXPECT_TRUE(model.poll(c, m1));
      EXPECT_FALSE(dut.clocking());
      EXPECT_EQ(m1, m2) << "k " << k << " matching " << matching;
      // One edge per model cycle up to the one before the grant.
      EXPECT_EQ(dut.rtl_cycles() - cycles0, static_cast<uint64_t>(c - 10)) << "k " << k;
      // The next matching starts in the grant's cycle (as the switch does after applying it).
    }
  }
}

TEST(RtlIslipScheduler, ResetClearsPointers) {
  rtl::RtlIslipScheduler dut(8, 1);
  std::vector<PortSet> req(8, PortSet(8));
  for (auto& r : req) r.set_all();
  PortSet ready(8);
  ready.set_all();
  std::vector<int> m(8);
  dut.schedule(req, ready, m);
  EXPECT_NE(dut.grant_pointer(0), 0);
  dut.reset();
  for (int j = 0; j < 8; ++j) EXPECT_EQ(dut.grant_pointer(j), 0);
}

TEST(SchedulerFactory, ImplSelectsRtlOrRejects) {
  rtl::register_implementations();  // as the CLI does; idempotent
  Rng rng(1);
  auto s = sw::make_scheduler("islip", 16, 2, rng, "rtl");
  EXPECT_NE(dynamic_cast<rtl::RtlIslipScheduler*>(s.get()), nullptr);
  EXPECT_NE(dynamic_cast<sw::IslipScheduler*>(sw::make_scheduler("islip", 16, 2, rng).get()),
            nullptr);
  EXPECT_THROW(sw::make_scheduler("pim", 16, 2, rng, "rtl"), std::invalid_argument);
  EXPECT_THROW(sw::make_scheduler("islip", 129, 2, rng, "rtl"), std::invalid_argument);
  EXPECT_THROW(sw::make_scheduler("islip", 16, 2, rng, "gates"), std::invalid_argument);
}

// rtl::register_implementations() puts the in-the-loop blocks into the model's registries, with
// the limits the configuration checks then enforce.
TEST(RtlRegistration, AddsTheInTheLoopBlocksWithTheirLimits) {
  rtl::register_implementations();
  rtl::register_implementations();  // a second call adds nothing (no duplicate)
  const sw::SchedulerRegistry& sched = sw::SchedulerRegistry::global();
  EXPECT_EQ(sched.impl_names(), (std::vector<std::string>{"model", "rtl"}));
  EXPECT_EQ(sched.algorithms_with("rtl"), (std::vector<std::string>{"islip"}));
  EXPECT_EQ(sched.impl("islip", "rtl").max_ports, rtl::IslipRtl::kMaxPorts);
  const link::CreditUnitRegistry& credit = link::CreditUnitRegistry::global();
  EXPECT_EQ(credit.names(), (std::vector<std::string>{"model", "rtl"}));
  EXPECT_EQ(credit.at("rtl").max_vls, rtl::CreditUnitRtl::kVls);
  auto unit = credit.at("rtl").make(rtl::CreditUnitRtl::kVls, 100);
  ASSERT_NE(dynamic_cast<rtl::CreditUnitRtl*>(unit.get()), nullptr);
  EXPECT_EQ(unit->available(rtl::CreditUnitRtl::kVls - 1), 100);
  // The switch configuration now offers rtl and checks the port limit the RTL declared.
  sw::SwitchConfig ok;
  config::load(ok, "",
               {"scheduler.impl=rtl", "ports=128", "port_speed=400Gbps",
                "scheduler.cycles_per_iteration=1"});
  EXPECT_EQ(ok.scheduler_impl, "rtl");
  // In the loop the RTL takes its cycles: a free matching (0 cycles per iteration) is refused.
  sw::SwitchConfig free;
  try {
    config::load(free, "", {"scheduler.impl=rtl"});
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("switch.scheduler.cycles_per_iteration"),
              std::string::npos)
        << e.what();
  }
  sw::SwitchConfig big;
  try {
    config::load(big, "", {"scheduler.impl=rtl", "ports=200"});
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "switch.scheduler.impl: the RTL iSLIP supports at most 128 ports, not 200"),
              std::string::npos)
        << e.what();
  }
}

// Value changes of the named top-level signals, by time.
struct FstDump {
  std::vector<std::string> names;  // every variable under top
  std::map<std::string, fstHandle> handles;
  std::map<fstHandle, std::map<uint64_t, std::string>> changes;
  uint64_t start = 0, end = 0;
};

FstDump read_fst(const std::string& path, const std::vector<std::string>& names) {
  FstDump d;
  void* ctx = fstReaderOpen(path.c_str());
  EXPECT_NE(ctx, nullptr) << path;
  if (!ctx) return d;
  d.start = fstReaderGetStartTime(ctx);
  d.end = fstReaderGetEndTime(ctx);
  std::string scope;
  while (fstHier* h = fstReaderIterateHier(ctx)) {
    if (h->htyp == FST_HT_SCOPE) scope = h->u.scope.name;
    if (h->htyp != FST_HT_VAR || scope != "top") continue;
    d.names.push_back(h->u.var.name);
    for (const auto& n : names)
      if (n == h->u.var.name) d.handles[n] = h->u.var.handle;
  }
  fstReaderSetFacProcessMaskAll(ctx);
  fstReaderIterBlocks(
      ctx,
      [](void* user, uint64_t time, fstHandle facidx, const unsigned char* value) {
        static_cast<FstDump*>(user)->changes[facidx][time] = reinterpret_cast<const char*>(value);
      },
      &d, nullptr);
  fstReaderClose(ctx);
  return d;
}

// The value of a signal at time t (the last change at or before t).
std::string value_at(const FstDump& d, const std::string& name, uint64_t t) {
  const auto& ch = d.changes.at(d.handles.at(name));
  auto it = ch.upper_bound(t);
  return it == ch.begin() ? "" : std::prev(it)->second;
}

TEST(CosimWaveform, WindowAroundFirstMismatchShowsRtlAndModel) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "fabricsim_cosim_window_test.fst").string();
  std::filesystem::remove(path);
  cosim::Options opt;
  opt.cycles = 20000;
  opt.mutant = true;  // the credit unit's off-by-one credit return
  opt.mismatch_trace = path;
  opt.window = 10;
  std::ostringstream log;
  const auto r = cosim::run_cosim("credit", opt, log);
  ASSERT_GT(r.mismatches, 0u) << log.str();
  ASSERT_EQ(r.window_trace, path);
  const auto d = read_fst(path, {"mismatch", "clk", "upd_error", "exp_upd_error"});
  std::string all;
  for (const auto& n : d.names) all += n + " ";
  for (const char* n : {"mismatch", "clk", "upd_error", "exp_upd_error"})
    ASSERT_TRUE(d.handles.count(n)) << "no " << n << " in " << path << ": " << all;
  // Both the RTL's counters and the model's (exp_*) are in the file.
  EXPECT_NE(all.find(" fccl"), std::string::npos) << all;
  EXPECT_NE(all.find(" exp_fccl"), std::string::npos) << all;
  const uint64_t first = r.first_mismatch;
  EXPECT_LE(d.start, (first - 10) * 1000);
  EXPECT_GE(d.end, first * 1000 + 500);
  EXPECT_LT(d.end, (first + 12) * 1000);  // a window, not the whole run
  // The mismatch marker is set in the second half of the first mismatching cycle, not before.
  EXPECT_EQ(value_at(d, "mismatch", first * 1000 + 500), "1");
  EXPECT_EQ(value_at(d, "mismatch", (first - 1) * 1000 + 500), "0");
  std::filesystem::remove(path);
  std::filesystem::remove(std::filesystem::path(path).replace_extension(".gtkw"));  // its view
}

// The iSLIP mismatch window holds the pointer registers that a mismatch report names
// (grant_ptr / accept_ptr, 64 entries each: past Verilator's default --trace-max-array of 32,
// which left them out of the file).
TEST(CosimWaveform, IslipWindowHoldsThePointerArrays) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "fabricsim_cosim_islip_window_test.fst").string();
  std::filesystem::remove(path);
  cosim::Options opt;
  opt.cycles = 20000;
  opt.mutant = true;
  opt.mismatch_trace = path;
  opt.window = 5;
  std::ostringstream log;
  const auto r = cosim::run_cosim("islip", opt, log);
  ASSERT_GT(r.mismatches, 0u) << log.str();
  const auto d = read_fst(path, {"clk"});
  int grant = 0, accept = 0;
  for (const auto& n : d.names) {
    grant += n.find("grant_ptr") != std::string::npos;
    accept += n.find("accept_ptr") != std::string::npos;
  }
  std::string all;
  for (const auto& n : d.names) all += n + " ";
  // Every output's and every input's pointer (in the RTL; the model's exp_ copies may add more).
  EXPECT_GE(grant, 64) << all.substr(0, 2000);
  EXPECT_GE(accept, 64) << all.substr(0, 2000);
  std::filesystem::remove(path);
  std::filesystem::remove(std::filesystem::path(path).replace_extension(".gtkw"));  // its view
}

}  // namespace
}  // namespace fabricsim
