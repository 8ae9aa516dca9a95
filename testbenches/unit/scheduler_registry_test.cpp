// The scheduler registry: names and descriptions come from the registered schedulers, duplicates
// are refused, lookups name the valid choices, other implementations (impl) declare their limits;
// and the switch configuration takes its choices and checks from it. This test links the switch
// library only, without the RTL: the impl rtl that the CLI registers does not exist here.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/rng.h"
#include "models/switch/islip.h"
#include "models/switch/switch_config.h"
#include "models/switch/voq_scheduler.h"
#include "models/switch/wavefront.h"

namespace fabricsim::sw {
namespace {

// A scheduler that matches nothing, to register under made-up names.
class NullScheduler final : public VoqScheduler {
 public:
  NullScheduler(int ports, const char* name) : VoqScheduler(ports), name_(name) {}
  const char* name() const override { return name_; }
  void schedule(const std::vector<PortSet>&, const PortSet&, std::vector<int>& match) override {
    matched_.clear_all();
    for (int& m : match) m = -1;
  }
  void reset() override {}

 private:
  const char* name_;
};

SchedulerFactory null_factory(const char* name) {
  return [name](int ports, int, Rng&) { return std::make_unique<NullScheduler>(ports, name); };
}

std::string invalid_argument_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return "";
}

TEST(SchedulerRegistry, ListsExactlyTheRegisteredNamesSorted) {
  SchedulerRegistry r;
  EXPECT_TRUE(r.names().empty());
  r.add("zig", "zig doc", null_factory("zig"));
  r.add("alpha", "alpha doc", null_factory("alpha"));
  r.add("mid", "mid doc", null_factory("mid"));
  EXPECT_EQ(r.names(), (std::vector<std::string>{"alpha", "mid", "zig"}));
  EXPECT_EQ(r.impl_names(), (std::vector<std::string>{"model"}));
  Rng rng(1);
  for (const auto& name : r.names()) EXPECT_EQ(r.make(name, 4, 1, rng)->name(), name);
  EXPECT_EQ(r.description("mid"), "mid doc");
  EXPECT_EQ(r.algorithm_doc(), "Matching algorithm. alpha: alpha doc. mid: mid doc. zig: zig doc.");
}

TEST(SchedulerRegistry, RefusesADuplicateName) {
  SchedulerRegistry r;
  r.add("one", "first", null_factory("one"));
  EXPECT_THROW(r.add("one", "again", null_factory("one")), std::logic_error);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"one"}));
  EXPECT_EQ(r.description("one"), "first");  // the first registration stays
  r.add_impl("one", "gates", SchedulerImpl{null_factory("one"), "gates doc", "the gates", 0});
  EXPECT_THROW(r.add_impl("one", "gates", SchedulerImpl{null_factory("one"), "", "", 0}),
               std::logic_error);
  EXPECT_THROW(r.add_impl("one", "model", SchedulerImpl{null_factory("one"), "", "", 0}),
               std::logic_error);
  // An implementation of an algorithm nobody registered is a programming error too.
  EXPECT_THROW(r.add_impl("two", "gates", SchedulerImpl{null_factory("two"), "", "", 0}),
               std::logic_error);
  // So is a missing factory.
  EXPECT_THROW(r.add("three", "doc", nullptr), std::logic_error);
}

TEST(SchedulerRegistry, UnknownNamesListTheValidOnes) {
  SchedulerRegistry r;
  r.add("b", "b doc", null_factory("b"));
  r.add("a", "a doc", null_factory("a"));
  r.add_impl("b", "gates", SchedulerImpl{null_factory("b"), "gates doc", "the gates", 0});
  Rng rng(1);
  EXPECT_EQ(invalid_argument_of([&] { r.make("c", 4, 1, rng); }),
            "unknown scheduler algorithm 'c' (valid: a, b)");
  EXPECT_EQ(invalid_argument_of([&] { r.make("a", 4, 1, rng, "wires"); }),
            "scheduler: unknown impl 'wires' (valid: gates, model)");
  EXPECT_EQ(invalid_argument_of([&] { r.make("a", 4, 1, rng, "gates"); }),
            "scheduler: impl 'gates' exists only for b, not 'a'");
}

TEST(SchedulerRegistry, ImplementationsDeclareTheirLimits) {
  SchedulerRegistry r;
  r.add("a", "a doc", null_factory("a"));
  r.add("b", "b doc", null_factory("b"));
  r.add_impl("a", "gates", SchedulerImpl{null_factory("a"), "a in gates", "the gate-level a", 16});
  EXPECT_EQ(r.impl_names(), (std::vector<std::string>{"gates", "model"}));
  EXPECT_EQ(r.algorithms_with("gates"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(r.algorithms_with("model"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.impl("a", "gates").max_ports, 16);
  Rng rng(1);
  EXPECT_NE(r.make("a", 16, 1, rng, "gates"), nullptr);
  EXPECT_EQ(invalid_argument_of([&] { r.make("a", 17, 1, rng, "gates"); }),
            "scheduler: the gate-level a supports at most 16 ports, not 17");
  EXPECT_NE(r.make("a", 17, 1, rng), nullptr);  // the model has no limit of its own
  EXPECT_EQ(r.impl_doc(), "model: the C++ scheduler; gates (a only): a in gates, up to 16 ports.");
}

TEST(SchedulerRegistry, GlobalHoldsTheModelSchedulersAndNoRtl) {
  const SchedulerRegistry& g = SchedulerRegistry::global();
  EXPECT_EQ(g.names(), (std::vector<std::string>{"islip", "pim", "rr", "wavefront"}));
  EXPECT_EQ(&scheduler_names(), &g.names());
  // A fresh registry given the same list holds exactly the same names.
  SchedulerRegistry fresh;
  register_model_schedulers(fresh);
  EXPECT_EQ(fresh.names(), g.names());
  Rng rng(1);
  EXPECT_NE(dynamic_cast<WavefrontScheduler*>(fresh.make("wavefront", 8, 1, rng).get()), nullptr);
  // Registering the library's schedulers twice is refused, name by name.
  EXPECT_THROW(register_model_schedulers(fresh), std::logic_error);
  // Nothing registered rtl in this program: asking for it says so, with what is valid.
  EXPECT_EQ(g.impl_names(), (std::vector<std::string>{"model"}));
  EXPECT_EQ(invalid_argument_of([&] { make_scheduler("islip", 8, 1, rng, "rtl"); }),
            "scheduler: unknown impl 'rtl' (valid: model)");
  for (const auto& name : g.names())
    EXPECT_NE(g.algorithm_doc().find(" " + name + ": " + g.description(name) + "."),
              std::string::npos);
}

// The switch configuration offers what the registry holds and asks it about implementations.
std::string config_error_of(const std::vector<std::string>& overrides) {
  SwitchConfig c;
  try {
    config::load(c, "", overrides);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

TEST(SchedulerRegistry, SwitchConfigChoicesComeFromTheRegistry) {
  SwitchConfig c;
  config::load(c, "", {"scheduler.algorithm=wavefront"});
  EXPECT_EQ(c.scheduler, "wavefront");
  const std::string bad = config_error_of({"scheduler.algorithm=slip"});
  EXPECT_NE(bad.find("scheduler.algorithm"), std::string::npos) << bad;
  EXPECT_NE(bad.find("islip, pim, rr, wavefront"), std::string::npos) << bad;
  // Without the RTL library registered, rtl is not a choice, and the error lists what is.
  const std::string rtl = config_error_of({"scheduler.impl=rtl"});
  EXPECT_NE(rtl.find("scheduler.impl"), std::string::npos) << rtl;
  EXPECT_NE(rtl.find("'rtl' is not one of model"), std::string::npos) << rtl;
  // The reference describes every registered algorithm.
  const std::string md = config::to_markdown(c, "t");
  for (const auto& name : scheduler_names())
    EXPECT_NE(md.find(name + ": " + SchedulerRegistry::global().description(name)),
              std::string::npos)
        << name;
}

TEST(SchedulerRegistry, SwitchConfigValidationAsksTheRegistry) {
  // A configuration built in code (not loaded) with an impl nobody registered.
  SwitchConfig c;
  config::load(c, "", {});
  c.scheduler_impl = "rtl";
  const config::Checker checker([](const std::string& key) { return key; });
  try {
    c.validate(checker);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("switch.scheduler.impl"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no implementation 'rtl' is registered in this program (valid: model)"),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace fabricsim::sw
