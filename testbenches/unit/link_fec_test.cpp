// FEC error model: symbol/codeword/frame loss probabilities against an independent direct
// computation and an independent bit-level Monte Carlo of the RS(544,514) decoder's decision.
#include "models/link/fec_error_model.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim::link {
namespace {

// P(X > t) for X ~ Bin(n, p) as 1 - P(X <= t), summed directly in long double with the binomial
// coefficient built by products: independent of the model's lgamma/log-sum-exp form.
long double direct_tail(int n, int t, long double p) {
  long double cdf = 0, coef = 1;  // C(n, 0)
  for (int i = 0; i <= t; ++i) {
    if (i > 0) coef = coef * (n - i + 1) / i;
    cdf += coef * std::pow(p, static_cast<long double>(i)) *
           std::pow(1 - p, static_cast<long double>(n - i));
  }
  return 1 - cdf;
}

TEST(FecErrorModel, SymbolAndCodewordProbabilitiesMatchDirectSum) {
  for (double ber : {1e-3, 2e-3, 3e-3, 5e-3}) {
    const FecErrorModel m(FecType::kRs544, ber);
    const long double ps = 1 - std::pow(1 - static_cast<long double>(ber), 10.0L);
    EXPECT_NEAR(m.symbol_error_prob(), static_cast<double>(ps), 1e-15);
    const double direct = static_cast<double>(direct_tail(544, 15, ps));
    EXPECT_NEAR(m.codeword_loss() / direct, 1.0, 1e-9) << "ber " << ber;
  }
  // RS(528,514): t = 7.
  const FecErrorModel kr4(FecType::kRs528, 1e-3);
  const long double ps = 1 - std::pow(1 - 1e-3L, 10.0L);
  EXPECT_NEAR(kr4.codeword_loss() / static_cast<double>(direct_tail(528, 7, ps)), 1.0, 1e-9);
}

TEST(FecErrorModel, LowBerTailIsStable) {
  // Where 1 - CDF cancels catastrophically, the tail is dominated by its first term:
  // P_cw ~= C(544,16) p^16 (1-p)^528 x (1 + O(n p / 17)).
  for (double ber : {1e-5, 1e-6, 2.4e-4}) {
    const FecErrorModel m(FecType::kRs544, ber);
    const double p = m.symbol_error_prob();
    const double log_first = std::lgamma(545.0) - std::lgamma(17.0) - std::lgamma(529.0) +
                             16 * std::log(p) + 528 * std::log1p(-p);
    // Next-to-first term ratio is (528/17) p/(1-p); the sum of the tail is within a geometric
    // bound of the first term.
    const double r = 528.0 / 17.0 * p / (1 - p);
    EXPECT_GE(m.log_codeword_loss(), log_first);
    EXPECT_LE(m.log_codeword_loss(), log_first - std::log1p(-r) + 1e-12);
    EXPECT_GT(m.codeword_loss(), 0.0);
  }
  // At the 802.3 KP4 pre-FEC threshold region (2.4e-4) codeword loss is far below 1e-10.
  EXPECT_LT(FecErrorModel(FecType::kRs544, 2.4e-4).codeword_loss(), 1e-10);
  EXPECT_EQ(FecErrorModel(FecType::kRs544, 0).codeword_loss(), 0.0);
}

TEST(FecErrorModel, CodewordsSpanned) {
  const FecErrorModel m(FecType::kRs544, 1e-3);
  EXPECT_EQ(m.codewords_spanned(0, 640), 1u);
  EXPECT_EQ(m.codewords_spanned(1, 640), 2u);
  EXPECT_EQ(m.codewords_spanned(639, 1), 1u);
  EXPECT_EQ(m.codewords_spanned(639, 2), 2u);
  EXPECT_EQ(m.codewords_spanned(640 * 7 + 100, 1500), 3u);  // bytes 100..1599
  EXPECT_EQ(m.codewords_spanned(0, 9216 + 8), 15u);
  // Frame loss for c codewords.
  const double pcw = m.codeword_loss();
  EXPECT_NEAR(m.frame_loss(3), 1 - std::pow(1 - pcw, 3), 1e-12);
}

// Bit-level Monte Carlo: errors at rate ber on each bit of a stream of codewords (10-bit symbols,
// 544 per codeword); a codeword fails with more than 15 errored symbols; frames are laid back to
// back over the stream's 640-byte codeword payloads and fail if any codeword they touch fails.
TEST(FecErrorModel, MonteCarloAgreesWithClosedForm) {
  const double ber = 2.4e-3;  // ~13 symbol errors per codeword on average: losses are frequent
  const FecErrorModel m(FecType::kRs544, ber);
  ASSERT_GT(m.codeword_loss(), 0.05);
  ASSERT_LT(m.codeword_loss(), 0.5);
  constexpr int kCodewords = 60000;
  Rng rng(2024);
  std::vector<bool> failed(kCodewords);
  const double scale = Rng::geometric_scale(ber);
  uint64_t bit = rng.geometric_scaled(scale);  // next errored bit
  int fails = 0;
  for (int c = 0; c < kCodewords; ++c) {
    const uint64_t end = static_cast<uint64_t>(c + 1) * 5440;
    int symbols = 0;
    int64_t last_symbol = -1;
    for (; bit < end; bit += 1 + rng.geometric_scaled(scale)) {
      const int64_t s = static_cast<int64_t>(bit / 10);
      if (s != last_symbol) ++symbols, last_symbol = s;
    }
    failed[c] = symbols > 15;
    fails += failed[c];
  }
  const double pcw = m.codeword_loss();
  const double sigma_cw = std::sqrt(pcw * (1 - pcw) / kCodewords);
  EXPECT_NEAR(static_cast<double>(fails) / kCodewords, pcw, 4 * sigma_cw);

  // Frames of 1508 stream bytes (1500 B + preamble) starting at pseudo-random offsets.
  for (uint32_t bytes : {72u, 1508u, 4104u}) {
    Rng pos(bytes);
    int frames = 0, lost = 0;
    double expected = 0;
    for (uint64_t off = 0; off + bytes < uint64_t{kCodewords} * 640;
         off += bytes + 12 + pos.below(640)) {
      const uint64_t first = off / 640, last = (off + bytes - 1) / 640;
      bool any = false;
      for (uint64_t c = first; c <= last; ++c) any = any || failed[c];
      lost += any;
      ++frames;
      expected += m.frame_loss_at(off, bytes);
    }
    // Frames share codewords, so the counts are positively correlated; a 5-sigma binomial band
    // around the model's expected count is still far tighter than any modelling error of note.
    const double mean = expected / frames;
    const double sigma = std::sqrt(mean * (1 - mean) / frames) * std::sqrt(2.0);
    EXPECT_NEAR(static_cast<double>(lost) / frames, mean, 5 * sigma) << bytes << " B";
  }
}

TEST(FecErrorModel, SamplerFollowsFrameLoss) {
  const FecErrorModel m(FecType::kRs544, 2.0e-3);
  Rng rng(99);
  for (uint32_t bytes : {100u, 1508u, 9224u}) {
    constexpr int kN = 200000;
    int lost = 0;
    for (int i = 0; i < kN; ++i) lost += m.sample_loss(300, bytes, rng);
    const double p = m.frame_loss_at(300, bytes);
    EXPECT_NEAR(static_cast<double>(lost) / kN, p, 4 * std::sqrt(p * (1 - p) / kN) + 1e-9);
  }
  // No FEC: any bit error loses the frame.
  const FecErrorModel none(FecType::kNone, 1e-5);
  EXPECT_NEAR(none.frame_loss_at(0, 1500), 1 - std::pow(1 - 1e-5, 12000), 1e-12);
  // BER 0 never loses and never draws.
  const FecErrorModel clean(FecType::kRs544, 0);
  Rng a(5), b(5);
  EXPECT_FALSE(clean.sample_loss(0, 9000, a));
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

}  // namespace
}  // namespace fabricsim::link
