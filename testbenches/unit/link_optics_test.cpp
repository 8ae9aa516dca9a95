// The cables' modules (models/link/optics.h) and the switch's energy (models/switch/
// switch_energy.h): what each preset adds to a link, and the energy arithmetic against hand
// calculation.
#include "models/link/optics.h"

#include <gtest/gtest.h>

#include "models/link/phy_config.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::link {
namespace {

TEST(Optics, PowerScalesWithThePortRate) {
  const OpticsModule& dsp = optics_module("dsp");
  EXPECT_DOUBLE_EQ(module_watts(dsp, BitRate::gbps(800)), 15.0);
  EXPECT_DOUBLE_EQ(module_watts(dsp, BitRate::gbps(400)), 7.5);
  EXPECT_DOUBLE_EQ(module_watts(optics_module("cpo"), BitRate::gbps(1600)), 11.0);
  EXPECT_DOUBLE_EQ(module_watts(optics_module("none"), BitRate::gbps(800)), 0.0);
  EXPECT_STREQ(optics_module("no such module").name, "none");
}

TEST(Optics, AClassGetsItsModulesLatencyAndBer) {
  const LinkConfig lc = test::loaded<LinkConfig>(
      {"optics.host=lpo", "optics.fabric=dsp", "phy.pre_fec_ber=1e-9", "length_m=3"});
  const Time base = lc.latency();                                   // no class: no module
  EXPECT_EQ(lc.latency(LinkClass::kHost), base);                    // linear: no retiming
  EXPECT_EQ(lc.latency(LinkClass::kFabric), base + Time::ns(100));  // 50 ns at each end
  EXPECT_EQ(lc.min_latency(), base);
  EXPECT_DOUBLE_EQ(lc.of_class(LinkClass::kHost).phy.pre_fec_ber, 1e-6);
  EXPECT_DOUBLE_EQ(lc.of_class(LinkClass::kFabric).phy.pre_fec_ber, 1e-7);
  // `none` keeps link.phy's BER and latency.
  const LinkConfig plain = test::loaded<LinkConfig>({"phy.pre_fec_ber=1e-9"});
  EXPECT_DOUBLE_EQ(plain.of_class(LinkClass::kFabric).phy.pre_fec_ber, 1e-9);
  EXPECT_EQ(plain.latency(LinkClass::kFabric), plain.latency());
}

TEST(Optics, AModuleMustReachTheCable) {
  EXPECT_THROW(test::loaded<LinkConfig>({"optics.host=dac", "length_m=3"}), std::exception);
  EXPECT_NO_THROW(test::loaded<LinkConfig>({"optics.host=dac", "length_m=2"}));
  EXPECT_THROW(test::loaded<LinkConfig>({"optics.fabric=cpo", "length_m=600"}), std::exception);
  // An ideal link has no cable to reach.
  EXPECT_NO_THROW(test::loaded<LinkConfig>({"model=ideal", "optics.host=dac", "length_m=3"}));
}

}  // namespace
}  // namespace fabricsim::link
