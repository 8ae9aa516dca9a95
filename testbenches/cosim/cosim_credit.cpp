// Co-simulation of the credit unit: link::CreditUnitModel against the Verilated credit_unit
// (VLS = rtl::CreditUnitRtl::kVls). Each phase resets both with an initial credit limit. The
// stimulus is a sender (send requests of a few blocks, sometimes more than any credit allows) and
// a receiving peer whose updates are mostly legal (FCCL = blocks the peer has drained + its
// buffer, i.e. at most 2048 ahead of FCTBS), sometimes stale or corrupt (protocol errors).
// Directed phases first: no credits at all, exact fits, zero-block sends, counter wrap-around.
#include <memory>
#include <vector>

#include "models/link/credit_unit.h"
#include "rtl/credit_unit_rtl.h"
#include "testbenches/cosim/benches.h"

namespace fabricsim::cosim {
namespace {

struct Phase {
  uint16_t initial;  // FCCL after reset
  int send8;         // send probability x 8
  int max_blocks;    // send sizes 0 .. max_blocks (a 4096+ size now and then)
  int upd8;          // update probability x 8
  double corrupt;    // probability that an update is random (often a protocol error)
  int vls_used;      // VLs exercised (1 .. kVls)
  uint64_t cycles;
};

Phase directed(int i) {
  switch (i) {
    case 0:
      return {0, 8, 4, 0, 0.0, 8, 300};  // no credit: every send stalls
    case 1:
      return {64, 8, 8, 2, 0.0, 1, 3000};  // one VL, small buffer: stalls and fits
    case 2:
      return {4095, 8, 4095, 8, 0.0, 2, 6000};  // big sends: FCTBS / FCCL wrap quickly
    case 3:
      return {2048, 4, 16, 4, 0.5, 8, 3000};  // many corrupt updates
    default:
      return {};
  }
}
constexpr int kDirected = 4;

Phase random_phase(Rng& rng) {
  Phase p{};
  const uint64_t r = rng.below(4);
  p.initial = static_cast<uint16_t>(r == 0 ? 0 : r == 1 ? rng.below(32) : rng.below(4096));
  p.send8 = 1 + static_cast<int>(rng.below(8));
  p.max_blocks = rng.bernoulli(0.7) ? 1 + static_cast<int>(rng.below(32)) : 4095;
  p.upd8 = static_cast<int>(rng.below(9));
  p.corrupt = rng.bernoulli(0.3) ? 0.05 : 0.0;
  p.vls_used = 1 + static_cast<int>(rng.below(rtl::CreditUnitRtl::kVls));
  p.cycles = 1000 + rng.below(20000);
  return p;
}

}  // namespace

RunStats run_credit(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov) {
  Rng rng = Rng::derive(opt.seed, "cosim.credit");
  TraceWindow tw(trace);
  constexpr int kVls = rtl::CreditUnitRtl::kVls;
  auto rtl = rtl::CreditUnitRtl::create(0, opt.mutant, tw.enabled());

  const int b_accept = cov.add("send accepted");
  const int b_zero = cov.add("zero-credit stall (available 0)");
  const int b_short = cov.add("partial-credit stall (0 < available < blocks)");
  const int b_exact = cov.add("exact fit (blocks == available)");
  const int b_zblk = cov.add("zero-block send");
  const int b_huge = cov.add("send larger than any credit (> 4095)");
  const int b_full = cov.add("maximum credit lead (available == 2048)");
  const int b_back = cov.add("all credit returned after traffic");
  const int b_upd = cov.add("update accepted");
  const int b_err = cov.add("update rejected (protocol error)");
  const int b_same = cov.add("send and update on one VL in one cycle");
  const int b_twrap = cov.add("FCTBS wrapped (mod 4096)");
  const int b_lwrap = cov.add("FCCL wrapped (mod 4096)");
  std::vector<int> b_vl(kVls);
  for (int v = 0; v < kVls; ++v) b_vl[v] = cov.add("send accepted on VL " + std::to_string(v));

  // The peer: per VL, blocks it has drained from its receive buffer (mod 4096) and buffer size.
  uint16_t drained[kVls] = {};
  RunStats st;
  int phase_index = 0;
  while (rtl->cycle() < opt.cycles) {
    const Phase ph = phase_index < kDirected ? directed(phase_index) : random_phase(rng);
    ++phase_index;
    tw.at(rtl->cycle(), *rtl);
    rtl->configure(ph.initial);
    link::CreditUnitModel model(kVls, ph.initial);
    for (auto& d : drained) d = 0;
    const uint64_t end = rtl->cycle() + ph.cycles;
    while (rtl->cycle() < end && rtl->cycle() < opt.cycles) {
      const uint64_t c = rtl->cycle();
      tw.at(c, *rtl);
      link::CreditUnitIn in{};
      in.send_valid = static_cast<int>(rng.below(8)) < ph.send8;
      in.send_vl = static_cast<uint8_t>(rng.below(static_cast<uint64_t>(ph.vls_used)));
      in.send_blocks = static_cast<uint16_t>(
          rng.below(200) == 0 ? 4096 + rng.below(60000)
                              : rng.below(static_cast<uint64_t>(ph.max_blocks) + 1));
      in.upd_valid = static_cast<int>(rng.below(8)) < ph.upd8;
      in.upd_vl = static_cast<uint8_t>(rng.below(static_cast<uint64_t>(ph.vls_used)));
      if (rng.bernoulli(ph.corrupt)) {
        in.upd_fccl = static_cast<uint16_t>(rng.below(4096));
      } else {
        // The peer drains part of what was sent and returns drained + buffer (buffer = the
        // initial credits): a legal FCCL at most initial blocks ahead of FCTBS.
        const int v = in.upd_vl;
        const uint16_t outstanding = static_cast<uint16_t>((model.fctbs(v) - drained[v]) & 0xFFF);
        drained[v] = static_cast<uint16_t>((drained[v] + rng.below(outstanding + 1u)) & 0xFFF);
        in.upd_fccl = static_cast<uint16_t>((drained[v] + std::min<int>(ph.initial, 2048)) & 0xFFF);
      }

      uint16_t fctbs_before[kVls], fccl_before[kVls];
      for (int v = 0; v < kVls; ++v) {
        fctbs_before[v] = model.fctbs(v);
        fccl_before[v] = model.fccl(v);
      }
      const uint16_t avail = model.available(in.send_vl);
      ck.input(c, "send_valid", in.send_valid);  // for the mismatch report
      ck.input(c, "send_vl", in.send_vl);
      ck.input(c, "send_blocks", in.send_blocks);
      ck.input(c, "upd_valid", in.upd_valid);
      ck.input(c, "upd_vl", in.upd_vl);
      ck.input(c, "upd_fccl", in.upd_fccl);
      const link::CreditUnitOut exp = model.tick(in);
      const link::CreditUnitOut got = rtl->begin(in);
      bool bad = false;
      bad |= !ck.check(c, "send_accept", -1, exp.send_accept, got.send_accept);
      bad |= !ck.check(c, "send_stall", -1, exp.send_stall, got.send_stall);
      bad |= !ck.check(c, "upd_error", -1, exp.upd_error, got.upd_error);
      for (int v = 0; v < kVls; ++v) {
        bad |= !ck.check(c, "fctbs", v, fctbs_before[v], rtl->fctbs(v));
        bad |= !ck.check(c, "fccl", v, fccl_before[v], rtl->fccl(v));
        bad |= !ck.check(c, "available", v, (fccl_before[v] - fctbs_before[v]) & 0xFFF,
                         rtl->available(v));
      }
      // exp_* show the model's counters before this edge, as the RTL outputs do.
      if (tw.open()) rtl->set_expected(exp, fctbs_before, fccl_before, bad);
      rtl->finish();

      if (in.send_valid) {
        if (exp.send_accept) {
          ++st.transactions;
          cov.hit(b_accept);
          cov.hit(b_vl[in.send_vl]);
          if (in.send_blocks == avail) cov.hit(b_exact);
          if (in.send_blocks == 0) cov.hit(b_zblk);
          if (model.fctbs(in.send_vl) < fctbs_before[in.send_vl]) cov.hit(b_twrap);
        } else {
          cov.hit(avail == 0 ? b_zero : b_short);
          if (in.send_blocks > 4095) cov.hit(b_huge);
        }
      }
      if (in.upd_valid) {
        ++st.transactions;
        cov.hit(exp.upd_error ? b_err : b_upd);
        if (!exp.upd_error && model.fccl(in.upd_vl) < fccl_before[in.upd_vl]) cov.hit(b_lwrap);
        if (in.send_valid && exp.send_accept && in.send_vl == in.upd_vl) cov.hit(b_same);
      }
      const uint16_t buffer = static_cast<uint16_t>(std::min<int>(ph.initial, 2048));
      for (int v = 0; v < ph.vls_used; ++v) {
        const uint16_t a = model.available(v);
        if (a == 2048) cov.hit(b_full);
        if (buffer > 0 && a == buffer && model.fctbs(v) != 0) cov.hit(b_back);
      }
    }
  }
  st.cycles = rtl->cycle();
  return st;
}

}  // namespace fabricsim::cosim
