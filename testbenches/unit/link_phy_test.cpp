// PHY/PCS/FEC/MAC arithmetic: MAC rates from lanes, lane rate and FEC; wire time per frame; wire
// efficiency; breakout; lane failure; PHY/link configuration loading and validation.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/link/phy_config.h"
#include "models/link/wire_format.h"

namespace fabricsim::link {
namespace {

const BitRate k106G = BitRate::bps(106250000000ull);
const BitRate k212G = BitRate::bps(212500000000ull);
const BitRate k25G = BitRate::bps(25781250000ull);

TEST(WireFormat, StandardMacRatesAreExact) {
  // 800GBASE-R: 8 x 106.25 x 514/544 x 256/257 = 800 exactly (hardware-facts.md).
  EXPECT_EQ(WireFormat(8, k106G, FecType::kRs544, Framing::kEthernet).mac_rate(),
            BitRate::gbps(800));
  EXPECT_EQ(WireFormat(8, k106G, FecType::kRs544, Framing::kEthernet).line_rate(),
            BitRate::gbps(850));
  EXPECT_EQ(WireFormat(4, k106G, FecType::kRs544, Framing::kEthernet).mac_rate(),
            BitRate::gbps(400));
  EXPECT_EQ(WireFormat(1, k106G, FecType::kRs544, Framing::kEthernet).mac_rate(),
            BitRate::gbps(100));
  EXPECT_EQ(WireFormat(8, k212G, FecType::kRs544, Framing::kEthernet).mac_rate(),
            BitRate::gbps(1600));
  // 100GBASE-R4 at 25.78125 GBd: with RS(528,514) (transcoded) and without FEC (64b/66b) both
  // give a 100G MAC: 257/256 x 528/514 = 66/64.
  EXPECT_EQ(WireFormat(4, k25G, FecType::kRs528, Framing::kEthernet).mac_rate(),
            BitRate::gbps(100));
  EXPECT_EQ(WireFormat(4, k25G, FecType::kNone, Framing::kEthernet).mac_rate(), BitRate::gbps(100));
  EXPECT_NEAR(WireFormat(8, k106G, FecType::kRs544, Framing::kEthernet).coding_efficiency(),
              800.0 / 850.0, 1e-15);
}

TEST(WireFormat, FecCodes) {
  const FecCode kp4 = fec_code(FecType::kRs544);
  EXPECT_EQ(kp4.n * kp4.symbol_bits, 5440);  // 5440-bit codeword
  EXPECT_EQ((kp4.n - kp4.k) / 2, kp4.t);
  EXPECT_EQ(kp4.t, 15);
  // The 5140-bit message is exactly 20 transcoded 257-bit blocks = 640 MAC bytes.
  EXPECT_EQ(kp4.k * kp4.symbol_bits, 20 * 257);
  EXPECT_EQ(fec_code(FecType::kRs528).t, 7);
}

TEST(WireFormat, FrameWireTime) {
  const WireFormat w(8, k106G, FecType::kRs544, Framing::kEthernet);
  // 800 Gb/s = 10 ps per byte. 64 B frame: 84 B on the wire = 840 ps; a 40 B frame is padded to 64.
  EXPECT_EQ(w.wire_time(64), Time::ps(840));
  EXPECT_EQ(w.wire_time(40), Time::ps(840));
  EXPECT_EQ(w.wire_time(1500), Time::ps(15200));
  EXPECT_EQ(w.wire_time(9216), Time::ps(92360));
  EXPECT_EQ(w.pause_quantum(), Time::ps(640));  // 512 bit times at 800G = 0.64 ns
  // InfiniBand framing: only the 2 delimiter bytes.
  const WireFormat ib(4, k106G, FecType::kRs544, Framing::kInfiniband);
  EXPECT_EQ(ib.wire_bytes(8), 10u);
  EXPECT_EQ(ib.wire_time(4096 + 30), BitRate::gbps(400).serialization(Bytes(4128)));
}

TEST(WireFormat, EfficiencyClosedForm) {
  const WireFormat w(8, k106G, FecType::kRs544, Framing::kEthernet);
  // 1500 B frame, 1482 B payload: 1482 / 1520 x 800/850.
  EXPECT_NEAR(w.efficiency(1500, 1482), 1482.0 / 1520.0 * 800.0 / 850.0, 1e-12);
  EXPECT_NEAR(w.goodput_bps(1500, 1500), 800e9 * 1500.0 / 1520.0, 1.0);
  // Minimum frames: 64 of 84 bytes carry frame bytes: 76.19% of the MAC rate.
  EXPECT_NEAR(w.goodput_bps(64, 64) / 800e9, 64.0 / 84.0, 1e-12);
}

TEST(PhyConfig, DefaultsAndBreakout) {
  PortPhyConfig p;
  config::load(p, "", {});
  EXPECT_EQ(p.wire_format().mac_rate(), BitRate::gbps(800));
  EXPECT_EQ(p.fec_type(), FecType::kRs544);
  EXPECT_FALSE(p.lane_failure());
  config::load(p, "", {"breakout=2"});
  EXPECT_EQ(p.lanes_per_subport(), 4);
  EXPECT_EQ(p.wire_format().mac_rate(), BitRate::gbps(400));
  config::load(p, "", {"breakout=8"});
  EXPECT_EQ(p.wire_format().mac_rate(), BitRate::gbps(100));
  config::load(p, "", {"lane_rate=212.5Gbps", "breakout=2"});
  EXPECT_EQ(p.wire_format().mac_rate(), BitRate::gbps(800));
}

TEST(PhyConfig, LaneFailureHalvesRate) {
  PortPhyConfig p;
  config::load(p, "", {"lane_failure.lanes_left=4", "lane_failure.time=10us"});
  EXPECT_TRUE(p.lane_failure());
  EXPECT_EQ(p.fail_time, Time::us(10));
  EXPECT_EQ(p.wire_format().mac_rate(), BitRate::gbps(800));
  EXPECT_EQ(p.degraded_wire_format().mac_rate(), BitRate::gbps(400));
  EXPECT_EQ(p.degraded_wire_format().wire_time(1500), p.wire_format().wire_time(1500) * 2);
}

std::string load_error(config::Configurable& c, const std::vector<std::string>& overrides) {
  try {
    config::load(c, "", overrides);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PhyConfig, BadValuesNameTheKey) {
  using ::testing::HasSubstr;
  PortPhyConfig p;
  EXPECT_THAT(load_error(p, {"breakout=3"}), HasSubstr("phy.breakout"));
  EXPECT_THAT(load_error(p, {"breakout=2", "lane_failure.lanes_left=4"}),
              HasSubstr("phy.lane_failure.lanes_left"));
  EXPECT_THAT(load_error(p, {"fec=rs999"}), HasSubstr("fec"));
  EXPECT_THAT(load_error(p, {"lane_rate=100"}), HasSubstr("lane_rate"));  // unit required
  LinkConfig l;
  EXPECT_THAT(load_error(l, {"phy.breakout=3"}), HasSubstr("phy.breakout"));
  EXPECT_THAT(load_error(l, {"length_m=-1"}), HasSubstr("length_m"));
}

TEST(LinkConfig, Latency) {
  LinkConfig l;
  config::load(l, "", {"length_m=30", "ns_per_m=4.9"});
  EXPECT_EQ(l.propagation(), Time::ps(147000));
  EXPECT_EQ(l.one_way_latency(), Time::ps(147000) + Time::ns(100));
}

}  // namespace
}  // namespace fabricsim::link
