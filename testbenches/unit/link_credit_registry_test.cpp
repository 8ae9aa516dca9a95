// The credit unit registry (flow_control.credit.impl): the model is built in, other
// implementations are added by name with their VL limit, duplicates are refused and unknown names
// list the valid ones. Links the link library only: the RTL's implementation is not registered.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/link/credit_unit.h"
#include "models/link/ib_credit.h"

namespace fabricsim::link {
namespace {

// A stand-in implementation: the model under another name, remembering its construction.
struct Made {
  int vls = 0;
  uint16_t initial = 0;
};

CreditUnitImpl counting_impl(Made& made, int max_vls) {
  return CreditUnitImpl{[&made](int vls, uint16_t initial) -> std::unique_ptr<CreditUnitIf> {
                          made = Made{vls, initial};
                          return std::make_unique<CreditUnitModel>(vls, initial);
                        },
                        "a second model", "the second model", max_vls};
}

TEST(CreditUnitRegistry, HoldsTheModel) {
  CreditUnitRegistry r;
  EXPECT_EQ(r.names(), (std::vector<std::string>{"model"}));
  auto unit = r.at("model").make(4, 100);
  ASSERT_NE(dynamic_cast<CreditUnitModel*>(unit.get()), nullptr);
  EXPECT_EQ(unit->available(3), 100);
  EXPECT_EQ(r.doc(), "Credit counters of every sender. model: the C++ model.");
}

TEST(CreditUnitRegistry, ListsExactlyTheRegisteredNamesAndRefusesDuplicates) {
  CreditUnitRegistry r;
  Made made;
  r.add("zz", counting_impl(made, 0));
  r.add("aa", counting_impl(made, 4));
  EXPECT_EQ(r.names(), (std::vector<std::string>{"aa", "model", "zz"}));
  EXPECT_THROW(r.add("aa", counting_impl(made, 8)), std::logic_error);
  EXPECT_THROW(r.add("model", counting_impl(made, 8)), std::logic_error);
  EXPECT_EQ(r.at("aa").max_vls, 4);  // the first registration stays
  EXPECT_EQ(r.doc(),
            "Credit counters of every sender. aa: a second model (up to 4 data VLs). model: the "
            "C++ model. zz: a second model.");
  try {
    r.at("rtl");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown credit unit impl 'rtl' (valid: aa, model, zz)");
  }
}

TEST(CreditUnitRegistry, SenderUsesTheRegisteredFactory) {
  CreditUnitRegistry r;
  Made made;
  r.add("other", counting_impl(made, 0));
  IbCreditConfig cfg;
  config::load(cfg, "", {"data_vls=3"});
  IbCreditSender s(cfg, 77, r.at("other").make);
  EXPECT_EQ(made.vls, 3);
  EXPECT_EQ(made.initial, 77);
  EXPECT_EQ(s.available(2), 77);
}

TEST(CreditUnitRegistry, GlobalHasNoRtlWithoutTheRtlLibrary) {
  const CreditUnitRegistry& g = CreditUnitRegistry::global();
  EXPECT_EQ(g.names(), (std::vector<std::string>{"model"}));
  EXPECT_EQ(g.find("rtl"), nullptr);
  // flow_control.credit.impl offers only what is registered.
  IbCreditConfig cfg;
  try {
    config::load(cfg, "", {"impl=rtl"});
    FAIL() << "no exception";
  } catch (const config::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("impl"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'rtl' is not one of model"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace fabricsim::link
