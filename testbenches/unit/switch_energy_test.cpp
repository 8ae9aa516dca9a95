// The switch chip's energy (models/switch/switch_energy.h) against hand calculation.
#include "models/switch/switch_energy.h"

#include <gtest/gtest.h>

#include "testbenches/unit/loaded_config.h"

namespace fabricsim::sw {
namespace {

TEST(SwitchEnergy, StaticPerCapacityPlusPerBitPlusPerCell) {
  const SwitchEnergyConfig c =
      test::loaded<SwitchEnergyConfig>({"idle_w_per_tbps=5", "pj_per_bit=2", "pj_per_cell=1000"});
  const BitRate chip = BitRate::gbps(51200);
  EXPECT_DOUBLE_EQ(idle_watts(c, chip), 256.0);
  // 10 us, 1e9 bits, 2e6 cell accesses: 2.56 mJ + 2 mJ + 2 mJ.
  const SwitchEnergy e = switch_energy(c, chip, Time::us(10), 1000000000ull, 2000000ull);
  EXPECT_NEAR(e.idle_j, 2.56e-3, 1e-12);
  EXPECT_NEAR(e.switching_j, 2e-3, 1e-12);
  EXPECT_NEAR(e.buffer_j, 2e-3, 1e-12);
  EXPECT_NEAR(e.total_j(), 6.56e-3, 1e-12);
}

TEST(SwitchEnergy, TheDefaultsGiveTheFiftyOneTerabitChipsFiveHundredWattsAtFullLoad) {
  const SwitchEnergyConfig c = test::loaded<SwitchEnergyConfig>();
  const BitRate chip = BitRate::gbps(51200);
  // One second at full load: 51.2 Tb switched, two accesses per 254 B cell.
  const double bits = 51.2e12;
  const auto cells = static_cast<uint64_t>(2 * bits / (254 * 8));
  const SwitchEnergy e =
      switch_energy(c, chip, Time::us(1000000), static_cast<uint64_t>(bits), cells);
  EXPECT_NEAR(e.total_j(), 500.0, 2.0);
  EXPECT_NEAR(e.idle_j, 300.0, 0.5);
}

}  // namespace
}  // namespace fabricsim::sw
