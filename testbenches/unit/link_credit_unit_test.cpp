// CreditUnitModel: IB sender-side credit counters (12-bit modular FCTBS/FCCL in 64 B blocks).
#include "models/link/credit_unit.h"

#include <cstdint>
#include <stdexcept>

#include <gtest/gtest.h>

#include "models/common/rng.h"

namespace fabricsim::link {
namespace {

CreditUnitIn send(int vl, int blocks) {
  return {true, static_cast<uint8_t>(vl), static_cast<uint16_t>(blocks), false, 0, 0};
}
CreditUnitIn update(int vl, int fccl) {
  return {false, 0, 0, true, static_cast<uint8_t>(vl), static_cast<uint16_t>(fccl)};
}
CreditUnitIn both(int svl, int blocks, int uvl, int fccl) {
  return {true, static_cast<uint8_t>(svl), static_cast<uint16_t>(blocks),
          true, static_cast<uint8_t>(uvl), static_cast<uint16_t>(fccl)};
}

TEST(CreditUnit, ResetState) {
  CreditUnitModel cu(4, 100);
  for (int vl = 0; vl < 4; ++vl) {
    EXPECT_EQ(cu.fctbs(vl), 0);
    EXPECT_EQ(cu.fccl(vl), 100);
    EXPECT_EQ(cu.available(vl), 100);
  }
  cu.tick(send(1, 30));
  cu.tick(update(2, 500));
  cu.reset();
  EXPECT_EQ(cu.fctbs(1), 0);
  EXPECT_EQ(cu.fccl(2), 100);
}

TEST(CreditUnit, AcceptsUpToAvailableThenStalls) {
  CreditUnitModel cu(2, 10);
  CreditUnitOut o = cu.tick(send(0, 4));
  EXPECT_TRUE(o.send_accept);
  EXPECT_FALSE(o.send_stall);
  EXPECT_EQ(cu.fctbs(0), 4);
  EXPECT_EQ(cu.available(0), 6);
  o = cu.tick(send(0, 7));  // 7 > 6: stall, nothing changes
  EXPECT_FALSE(o.send_accept);
  EXPECT_TRUE(o.send_stall);
  EXPECT_EQ(cu.fctbs(0), 4);
  o = cu.tick(send(0, 6));  // exactly the remainder
  EXPECT_TRUE(o.send_accept);
  EXPECT_EQ(cu.available(0), 0);
  // A zero-block request is accepted even at zero credit; VL1 is untouched by VL0 traffic.
  EXPECT_TRUE(cu.tick(send(0, 0)).send_accept);
  EXPECT_EQ(cu.available(1), 10);
  // No request: no accept, no stall.
  o = cu.tick(CreditUnitIn{false, 0, 5, false, 0, 0});
  EXPECT_FALSE(o.send_accept || o.send_stall || o.upd_error);
}

TEST(CreditUnit, ModularWrap) {
  CreditUnitModel cu(1, 2000);
  // Send 2000 blocks, return 2000 credits, repeatedly: FCTBS and FCCL wrap past 4095.
  int sent = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(cu.tick(send(0, 250)).send_accept);
    sent += 2000;
    EXPECT_EQ(cu.fctbs(0), sent % 4096);
    EXPECT_EQ(cu.available(0), 0);
    EXPECT_TRUE(cu.tick(send(0, 1)).send_stall);
    const int limit = (sent + 2000) % 4096;
    EXPECT_FALSE(cu.tick(update(0, limit)).upd_error);
    EXPECT_EQ(cu.fccl(0), limit);
    EXPECT_EQ(cu.available(0), 2000);
  }
  // FCTBS = 10000 % 4096 = 1808 and FCCL = 12000 % 4096 = 3808 after the loop.
  EXPECT_EQ(cu.fctbs(0), 1808);
  EXPECT_EQ(cu.fccl(0), 3808);
  // Across the wrap: FCCL 100 (i.e. 4196) is 2388 ahead of 1808: error; 3856 = 2048 ahead: fine.
  EXPECT_TRUE(cu.tick(update(0, 100)).upd_error);
  EXPECT_EQ(cu.fccl(0), 3808);
  EXPECT_FALSE(cu.tick(update(0, (1808 + 2048) % 4096)).upd_error);
  EXPECT_EQ(cu.available(0), 2048);
  // 1808 + 2049 = 3857 is one block too far ahead.
  EXPECT_TRUE(cu.tick(update(0, 3857)).upd_error);
  // A limit that wraps to a small number but is within 2048 of FCTBS is legal.
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(cu.tick(send(0, 256)).send_accept);  // FCTBS 3856
  EXPECT_FALSE(cu.tick(update(0, (3856 + 1000) % 4096)).upd_error);            // 760
  EXPECT_EQ(cu.fccl(0), 760);
  EXPECT_EQ(cu.available(0), 1000);
}

TEST(CreditUnit, UpdateBehindFctbsIsAnError) {
  CreditUnitModel cu(1, 100);
  cu.tick(send(0, 50));
  // FCCL = 49 < FCTBS = 50: (49 - 50) mod 4096 = 4095 > 2048.
  CreditUnitOut o = cu.tick(update(0, 49));
  EXPECT_TRUE(o.upd_error);
  EXPECT_EQ(cu.fccl(0), 100);
  // FCCL equal to FCTBS: zero credit, legal (the receiver's buffer is full).
  o = cu.tick(update(0, 50));
  EXPECT_FALSE(o.upd_error);
  EXPECT_EQ(cu.available(0), 0);
}

TEST(CreditUnit, SameCycleSendAndUpdateSendFirst) {
  CreditUnitModel cu(2, 10);
  // Send 10 (accepted against the pre-edge 10) and an update to 30 the same cycle: FCTBS 10,
  // FCCL 30.
  CreditUnitOut o = cu.tick(both(0, 10, 0, 30));
  EXPECT_TRUE(o.send_accept);
  EXPECT_FALSE(o.upd_error);
  EXPECT_EQ(cu.available(0), 20);
  // Credit arriving in the same cycle does not help the send: accept uses pre-edge state.
  CreditUnitModel c2(1, 0);
  o = c2.tick(both(0, 5, 0, 100));
  EXPECT_TRUE(o.send_stall);
  EXPECT_EQ(c2.fctbs(0), 0);
  EXPECT_EQ(c2.available(0), 100);
  // The update is checked against FCTBS after the send: FCTBS 0 -> 2000 with FCCL 2000 + 2048
  // is legal only because the send applied first (it is 4048 ahead of the pre-edge FCTBS 0).
  CreditUnitModel c3(1, 2000);
  o = c3.tick(both(0, 2000, 0, 4048));
  EXPECT_TRUE(o.send_accept);
  EXPECT_FALSE(o.upd_error);
  EXPECT_EQ(c3.fccl(0), 4048);
  // And an update valid before the send but behind FCTBS after it is an error.
  CreditUnitModel c4(1, 100);
  o = c4.tick(both(0, 60, 0, 50));
  EXPECT_TRUE(o.send_accept);
  EXPECT_TRUE(o.upd_error);
  EXPECT_EQ(c4.fccl(0), 100);
  // Send and update on different VLs are independent.
  CreditUnitModel c5(2, 10);
  o = c5.tick(both(0, 10, 1, 60));
  EXPECT_TRUE(o.send_accept);
  EXPECT_FALSE(o.upd_error);
  EXPECT_EQ(c5.available(0), 0);
  EXPECT_EQ(c5.available(1), 60);
}

TEST(CreditUnit, RandomAgainstUnboundedReference) {
  // Reference with 64-bit absolute counters: credit limit L and blocks sent S, L - S in [0, 2048]
  // kept legal by construction; the model's 12-bit view must agree at every step.
  constexpr int kVls = 4;
  CreditUnitModel cu(kVls, 64);
  int64_t S[kVls], L[kVls];
  for (int v = 0; v < kVls; ++v) S[v] = 0, L[v] = 64;
  Rng rng(7);
  for (int step = 0; step < 200000; ++step) {
    CreditUnitIn in{};
    in.send_valid = rng.bernoulli(0.7);
    in.send_vl = static_cast<uint8_t>(rng.below(kVls));
    in.send_blocks = static_cast<uint16_t>(rng.below(80));
    in.upd_valid = rng.bernoulli(0.3);
    in.upd_vl = static_cast<uint8_t>(rng.below(kVls));
    const int64_t avail_before = L[in.send_vl] - S[in.send_vl];
    const bool accept = in.send_valid && in.send_blocks <= avail_before;
    if (accept) S[in.send_vl] += in.send_blocks;
    // Propose a new limit: mostly legal (S .. S + 2048), sometimes behind S or too far ahead.
    int64_t new_l = S[in.upd_vl] + static_cast<int64_t>(rng.below(2049));
    const bool bad = rng.bernoulli(0.05);
    if (bad)
      new_l = rng.bernoulli(0.5) ? S[in.upd_vl] - 1 - static_cast<int64_t>(rng.below(2046))
                                 : S[in.upd_vl] + 2049 + static_cast<int64_t>(rng.below(2046));
    in.upd_fccl = static_cast<uint16_t>(((new_l % 4096) + 4096) % 4096);
    if (in.upd_valid && !bad) L[in.upd_vl] = new_l;
    const CreditUnitOut o = cu.tick(in);
    ASSERT_EQ(o.send_accept, accept) << "step " << step;
    ASSERT_EQ(o.send_stall, in.send_valid && !accept) << "step " << step;
    ASSERT_EQ(o.upd_error, in.upd_valid && bad) << "step " << step;
    for (int v = 0; v < kVls; ++v) {
      ASSERT_EQ(cu.fctbs(v), S[v] % 4096);
      ASSERT_EQ(cu.fccl(v), ((L[v] % 4096) + 4096) % 4096);
      ASSERT_EQ(cu.available(v), L[v] - S[v]);
    }
  }
}

TEST(CreditUnit, BadArguments) {
  EXPECT_THROW(CreditUnitModel(0, 1), std::invalid_argument);
  EXPECT_THROW(CreditUnitModel(17, 1), std::invalid_argument);
  EXPECT_THROW(CreditUnitModel(1, 4096), std::invalid_argument);
  CreditUnitModel cu(2, 1);
  EXPECT_THROW(cu.available(2), std::out_of_range);
  EXPECT_THROW(cu.tick(send(3, 1)), std::out_of_range);
  EXPECT_NO_THROW(cu.tick(CreditUnitIn{false, 9, 0, false, 9, 0}));  // invalid fields ignored
}

}  // namespace
}  // namespace fabricsim::link
