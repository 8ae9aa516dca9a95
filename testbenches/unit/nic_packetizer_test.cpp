// The packetizer against the header sizes of include/rdma/ib_pack.h and hardware-facts.md, and
// against hand-counted segmentations: opcodes, PSNs (24-bit, wrapping), payload split.
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/packetizer.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {
namespace {

Packetizer make(const std::vector<std::string>& o = {}) {
  return Packetizer(test::loaded<PacketizerConfig>(o));
}

Wqe wr(Opcode op, uint32_t length) {
  Wqe w;
  w.opcode = op;
  w.length = length;
  return w;
}

TEST(Packetizer, HeaderStacksHaveTheirPublishedSizes) {
  // RoCEv2/IPv4: 14 + 20 + 8 + 12 + 4 + 4 = 62 B (hardware-facts.md: "62 B headers").
  EXPECT_EQ(make().header_bytes(BthOpcode::kSendMiddle), 62u);
  EXPECT_EQ(make().header_bytes(BthOpcode::kWriteFirst), 78u);    // + RETH 16
  EXPECT_EQ(make().header_bytes(BthOpcode::kWriteOnlyImm), 82u);  // + RETH + ImmDt
  EXPECT_EQ(make().header_bytes(BthOpcode::kAck), 66u);           // + AETH 4
  EXPECT_EQ(make({"vlan=true"}).header_bytes(BthOpcode::kSendOnly), 66u);
  EXPECT_EQ(make({"headers=roce_v2_ipv6"}).header_bytes(BthOpcode::kSendOnly), 82u);
  // InfiniBand: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B; with a GRH 66 B.
  EXPECT_EQ(make({"headers=infiniband"}).header_bytes(BthOpcode::kSendOnly), 26u);
  EXPECT_EQ(make({"headers=infiniband", "grh=true"}).header_bytes(BthOpcode::kSendOnly), 66u);
  // ~98% of the wire for 4096 B payloads once Ethernet's preamble and IFG (20 B) are added.
  EXPECT_NEAR(4096.0 / (4096 + 62 + 20), 0.980, 0.001);
}

TEST(Packetizer, AMessageIsCutIntoFirstMiddleLastWithConsecutivePsns) {
  const Packetizer p = make();
  std::vector<TxPacket> out;
  const uint32_t next = p.segment(wr(Opcode::kSend, 10000), 100, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].opcode, BthOpcode::kSendFirst);
  EXPECT_EQ(out[1].opcode, BthOpcode::kSendMiddle);
  EXPECT_EQ(out[2].opcode, BthOpcode::kSendLast);
  EXPECT_EQ(out[0].payload, 4096u);
  EXPECT_EQ(out[2].payload, 10000u - 8192u);
  EXPECT_EQ(out[2].offset, 8192u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(out[i].psn, 100 + i);
  EXPECT_EQ(next, 103u);
  EXPECT_EQ(out[1].frame(), 4096u + 62u);
}

TEST(Packetizer, WritesCarryRethFirstAndImmediateLast) {
  const Packetizer p = make({"mtu=1024B"});
  std::vector<TxPacket> out;
  p.segment(wr(Opcode::kRdmaWriteImm, 3000), 0, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].opcode, BthOpcode::kWriteFirst);
  EXPECT_EQ(out[0].headers, 78u);
  EXPECT_EQ(out[1].headers, 62u);
  EXPECT_EQ(out[2].opcode, BthOpcode::kWriteLastImm);
  EXPECT_EQ(out[2].headers, 66u);
  EXPECT_EQ(out[2].payload, 3000u - 2048u);
  uint64_t sum = 0;
  for (const auto& t : out) sum += t.payload;
  EXPECT_EQ(sum, 3000u);
  out.clear();
  p.segment(wr(Opcode::kRdmaWrite, 1024), 0, out);  // exactly one MTU: ONLY
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, BthOpcode::kWriteOnly);
}

TEST(Packetizer, AZeroByteSendIsOnePacketAndPsnsWrapAt24Bits) {
  const Packetizer p = make();
  std::vector<TxPacket> out;
  EXPECT_EQ(p.segment(wr(Opcode::kSend, 0), Packetizer::kPsnMask, out), 0u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, BthOpcode::kSendOnly);
  EXPECT_EQ(out[0].payload, 0u);
  out.clear();
  p.segment(wr(Opcode::kSend, 3 * 4096), Packetizer::kPsnMask - 1, out);
  EXPECT_EQ(out[2].psn, 0u);
}

TEST(Packetizer, AReadIsOneRequestWhoseResponsesTakeThePsnsAfterIt) {
  const Packetizer p = make();
  std::vector<TxPacket> req, resp;
  const uint32_t next = p.segment(wr(Opcode::kRdmaRead, 9000), 50, req);
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0].opcode, BthOpcode::kReadRequest);
  EXPECT_EQ(req[0].headers, 78u);
  EXPECT_EQ(next, 53u);  // three responses: PSNs 50, 51, 52
  EXPECT_EQ(p.read_response(9000, 50, resp), 53u);
  ASSERT_EQ(resp.size(), 3u);
  EXPECT_EQ(resp[0].headers, 66u);  // AETH on FIRST
  EXPECT_EQ(resp[1].headers, 62u);  // none on MIDDLE
  EXPECT_EQ(resp[2].opcode, BthOpcode::kReadResponseLast);
}

TEST(PacketizerConfig, BadValuesNameTheKey) {
  const auto error = [](std::vector<std::string> o) {
    try {
      make(std::move(o));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({"mtu=1500B"}).find("not an RDMA MTU"), std::string::npos);
  EXPECT_NE(error({"mtu=8192B"}).find("mtu"), std::string::npos);
  EXPECT_NE(error({"headers=roce"}).find("headers"), std::string::npos);
  EXPECT_NE(error({"headers=infiniband", "vlan=true"}).find("vlan"), std::string::npos);
  EXPECT_NE(error({"grh=true"}).find("grh"), std::string::npos);
}

}  // namespace
}  // namespace fabricsim::nic
