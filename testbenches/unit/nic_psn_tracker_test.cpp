// The receive tracker seam (models/nic/psn_tracker.h): a responder that hands its packets to an
// attached tracker (as nic.rx_impl: rtl makes it do) must answer, count and hold state exactly
// as one running its own code. Checked with the C++ tracker (the responders behind the
// interface) on random packet streams for go-back-N, selective repeat and RUD, PSNs wrapping;
// and the parameters a tracker refuses.
#include <memory>

#include <gtest/gtest.h>

#include "models/common/rng.h"
#include "models/nic/psn_tracker.h"
#include "models/nic/rc_selective.h"
#include "models/nic/rc_transport.h"
#include "models/nic/rud_transport.h"

namespace fabricsim::nic {
namespace {

constexpr uint32_t kFirst = 0xFFFF00;  // wraps within the stream
constexpr uint32_t kMask = 0xFFFFFF;

RcConfig config(uint32_t window, uint32_t ack_every) {
  RcConfig c;
  c.window = window;
  c.ack_every = ack_every;
  return c;
}
// A PSN near `epsn`: in order, ahead within (and just past) the window, behind.
uint32_t draw(Rng& rng, uint32_t epsn, uint32_t window) {
  const uint64_t k = rng.below(10);
  const int64_t off = k < 3   ? 0
                      : k < 8 ? 1 + static_cast<int64_t>(rng.below(window + 3))
                              : -1 - static_cast<int64_t>(rng.below(40));
  return static_cast<uint32_t>((epsn + static_cast<uint64_t>(off)) & kMask);
}
PsnTrackerParams params(PsnTrackerMode m, uint32_t window, uint32_t ack_every) {
  PsnTrackerParams p;
  p.mode = m;
  p.range = window;
  p.ack_every = ack_every;
  p.first_psn = kFirst;
  return p;
}

TEST(PsnTracker, AGoBackNResponderAttachedToTheTrackerAnswersAsItsOwnCode) {
  const RcConfig c = config(64, 4);
  RcResponder own(c, kFirst), via(c, kFirst);
  via.attach(make_psn_tracker_model(params(PsnTrackerMode::kGoBackN, 64, 4)));
  Rng rng(7);
  for (int i = 0; i < 20000; ++i) {
    const uint32_t psn = draw(rng, own.expected(), 64);
    const bool read = rng.below(10) == 0;
    const uint32_t psns = 1 + static_cast<uint32_t>(rng.below(5));
    const bool ack_req = rng.below(4) == 0;
    const auto a = read ? own.receive_read(psn, psns) : own.receive(psn, ack_req);
    const auto b = read ? via.receive_read(psn, psns) : via.receive(psn, ack_req);
    ASSERT_EQ(a.accepted, b.accepted) << i;
    ASSERT_EQ(a.duplicate, b.duplicate) << i;
    ASSERT_EQ(a.reply, b.reply) << i;
    ASSERT_EQ(a.psn, b.psn) << i;
    ASSERT_EQ(own.expected(), via.expected()) << i;
  }
  EXPECT_LT(own.expected(), kFirst);  // wrapped
  EXPECT_EQ(own.accepted(), via.accepted());
  EXPECT_EQ(own.duplicates(), via.duplicates());
  EXPECT_EQ(own.out_of_order(), via.out_of_order());
  EXPECT_GT(own.out_of_order(), 1000u);
}

TEST(PsnTracker, ASelectiveRepeatResponderAttachedAnswersAsItsOwnCode) {
  const RcConfig c = config(100, 8);
  SrResponder own(c, kFirst), via(c, kFirst);
  via.attach(make_psn_tracker_model(params(PsnTrackerMode::kSelective, 100, 8)));
  Rng rng(8);
  uint64_t delivered = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint32_t psn = draw(rng, own.expected(), 100);
    const bool read = rng.below(10) == 0;
    const uint32_t psns = 1 + static_cast<uint32_t>(rng.below(5));
    const bool ack_req = rng.below(4) == 0;
    const auto a = read ? own.receive_read(psn, psns) : own.receive(psn, ack_req);
    const auto b = read ? via.receive_read(psn, psns) : via.receive(psn, ack_req);
    ASSERT_EQ(a.placed, b.placed) << i;
    ASSERT_EQ(a.delivered, b.delivered) << i;
    ASSERT_EQ(a.reply, b.reply) << i;
    ASSERT_EQ(a.sack.cum, b.sack.cum) << i;
    ASSERT_EQ(a.sack.bitmap, b.sack.bitmap) << i;
    ASSERT_EQ(a.read, b.read) << i;
    ASSERT_EQ(a.duplicate, b.duplicate) << i;
    ASSERT_EQ(own.expected(), via.expected()) << i;
    ASSERT_EQ(own.holds_ahead(), via.holds_ahead()) << i;
    delivered += a.delivered;
  }
  EXPECT_EQ(own.placed(), via.placed());
  EXPECT_EQ(own.duplicates(), via.duplicates());
  EXPECT_EQ(own.out_of_order(), via.out_of_order());
  EXPECT_EQ(own.beyond_window(), via.beyond_window());
  EXPECT_GT(own.beyond_window(), 0u);
  EXPECT_GT(delivered, 5000u);
}

TEST(PsnTracker, ARudResponderAttachedAnswersAsItsOwnCode) {
  const RcConfig c = config(200, 1);
  RudResponder own(c, kFirst), via(c, kFirst);
  via.attach(make_psn_tracker_model(params(PsnTrackerMode::kRud, 200, 1)));
  Rng rng(9);
  for (int i = 0; i < 20000; ++i) {
    const uint32_t psn = draw(rng, own.expected(), 200);
    const bool trimmed = rng.below(8) == 0;
    const auto a = own.receive(psn, trimmed);
    const auto b = via.receive(psn, trimmed);
    ASSERT_EQ(a.placed, b.placed) << i;
    ASSERT_EQ(a.delivered, b.delivered) << i;
    ASSERT_EQ(a.reply, b.reply) << i;
    ASSERT_EQ(a.nack, b.nack) << i;
    ASSERT_EQ(a.sack.cum, b.sack.cum) << i;
    ASSERT_EQ(a.sack.block, b.sack.block) << i;
    ASSERT_EQ(a.sack.bitmap, b.sack.bitmap) << i;
    ASSERT_EQ(own.expected(), via.expected()) << i;
  }
  EXPECT_EQ(own.placed(), via.placed());
  EXPECT_EQ(own.duplicates(), via.duplicates());
  EXPECT_EQ(own.trimmed(), via.trimmed());
  EXPECT_GT(own.trimmed(), 1000u);
}

TEST(PsnTracker, ParametersATrackerCannotHoldAreRefused) {
  EXPECT_THROW(make_psn_tracker_model(params(PsnTrackerMode::kSelective, 257, 1)),
               std::invalid_argument);
  EXPECT_THROW(make_psn_tracker_model(params(PsnTrackerMode::kRud, 0, 1)), std::invalid_argument);
  EXPECT_THROW(make_psn_tracker_model(params(PsnTrackerMode::kGoBackN, 1, 0)),
               std::invalid_argument);
  EXPECT_EQ(PsnTrackerRegistry::global().names(), std::vector<std::string>{"model"});
}

}  // namespace
}  // namespace fabricsim::nic
