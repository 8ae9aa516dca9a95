// Co-simulation of the NIC's receive tracker: the responders (rc_transport.h, rc_selective.h,
// rud_transport.h) behind nic::PsnTrackerIf against the Verilated psn_tracker, every output and
// the state (expected PSN, the 256-bit bitmap, unacked, the NAK flag) compared every cycle. Each
// phase resets both with a mode, a range, ack_every and a first PSN (often just below the 24-bit
// wrap). Packets are drawn relative to the expected PSN: in order, ahead within the range (often
// the slots still free, so the bitmap fills), at the range's end, beyond it, behind it
// (duplicates), far away; READ requests (go-back-N, selective) of 1 PSN to past the range;
// AckReq (RUD: trimmed) now and then. Directed phases first: each mode with the whole range
// placed before the gap fills, near the wrap.
#include <algorithm>
#include <bitset>
#include <memory>

#include "models/nic/psn_tracker.h"
#include "rtl/psn_tracker_rtl.h"
#include "testbenches/cosim/benches.h"

namespace fabricsim::cosim {
namespace {

using nic::PsnTrackerIf;
using nic::PsnTrackerIn;
using nic::PsnTrackerMode;
using nic::PsnTrackerOut;
using nic::PsnTrackerParams;

constexpr uint32_t kMask = 0xFFFFFF;

struct Phase {
  PsnTrackerParams p;
  double valid, in_order, fill, behind, beyond, far, read, flag;
  uint64_t cycles;
};

Phase directed(int i) {
  Phase ph{};
  ph.p.mode = static_cast<PsnTrackerMode>(i % 3);
  ph.p.range = 256;
  ph.p.ack_every = 16;
  ph.p.first_psn = kMask - 300;  // wraps within the phase
  ph.valid = 0.9;
  ph.in_order = 0.02;  // mostly filling the range before the gap closes
  ph.fill = 0.9;
  ph.behind = 0.02;
  ph.beyond = 0.02;
  ph.far = 0.001;
  ph.read = i % 3 == 2 ? 0 : 0.01;
  ph.flag = 0.05;
  ph.cycles = 20000;
  return ph;
}
constexpr int kDirected = 3;

Phase random_phase(Rng& rng) {
  Phase ph{};
  ph.p.mode = static_cast<PsnTrackerMode>(rng.below(3));
  const uint64_t r = rng.below(4);
  ph.p.range = r == 0   ? 256
               : r == 1 ? 1 + static_cast<uint32_t>(rng.below(8))
                        : 1 + static_cast<uint32_t>(rng.below(256));
  ph.p.ack_every = rng.bernoulli(0.3) ? 1 : 1 + static_cast<uint32_t>(rng.below(40));
  ph.p.first_psn = rng.bernoulli(0.5) ? static_cast<uint32_t>(kMask - rng.below(2000))
                                      : static_cast<uint32_t>(rng.below(kMask + 1ull));
  ph.valid = 0.3 + 0.7 * rng.uniform();
  ph.in_order = 0.1 + 0.6 * rng.uniform();
  ph.fill = rng.uniform();
  ph.behind = 0.1 * rng.uniform();
  ph.beyond = 0.05 * rng.uniform();
  ph.far = 0.01 * rng.uniform();
  ph.read = ph.p.mode == PsnTrackerMode::kRud ? 0 : 0.1 * rng.uniform();
  ph.flag = 0.3 * rng.uniform();
  ph.cycles = 2000 + rng.below(20000);
  return ph;
}

struct State {
  uint32_t epsn;
  uint64_t ahead[PsnTrackerIf::kWords];
  uint32_t unacked;
  bool nak_sent;
  int placed_count() const {
    int n = 0;
    for (uint64_t w : ahead) n += static_cast<int>(std::bitset<64>(w).count());
    return n;
  }
  bool bit(uint32_t i) const { return (ahead[i / 64] >> (i % 64)) & 1; }
};
State state_of(const PsnTrackerIf& t) {
  State s{t.expected(), {}, t.unacked(), t.nak_sent()};
  for (int w = 0; w < PsnTrackerIf::kWords; ++w) s.ahead[w] = t.ahead(w);
  return s;
}

bool compare(Checker& ck, uint64_t c, const PsnTrackerOut& e, const PsnTrackerOut& g,
             const State& se, const State& sg) {
  bool ok = true;
  ok &= ck.check(c, "reply", -1, e.reply, g.reply);
  ok &= ck.check(c, "out_psn", -1, e.psn, g.psn);
  ok &= ck.check(c, "placed", -1, e.placed, g.placed);
  ok &= ck.check(c, "read_taken", -1, e.read, g.read);
  ok &= ck.check(c, "duplicate", -1, e.duplicate, g.duplicate);
  ok &= ck.check(c, "beyond", -1, e.beyond, g.beyond);
  ok &= ck.check(c, "out_of_order", -1, e.out_of_order, g.out_of_order);
  ok &= ck.check(c, "trimmed", -1, e.trimmed, g.trimmed);
  ok &= ck.check(c, "delivered", -1, e.delivered, g.delivered);
  ok &= ck.check(c, "cum", -1, e.cum, g.cum);
  ok &= ck.check(c, "bitmap", -1, e.bitmap, g.bitmap);
  ok &= ck.check(c, "block", -1, e.block, g.block);
  ok &= ck.check(c, "epsn", -1, se.epsn, sg.epsn);
  for (int w = 0; w < PsnTrackerIf::kWords; ++w)
    ok &= ck.check(c, "ahead", w, se.ahead[w], sg.ahead[w]);
  ok &= ck.check(c, "unacked", -1, se.unacked, sg.unacked);
  ok &= ck.check(c, "nak_sent", -1, se.nak_sent, sg.nak_sent);
  return ok;
}

// A packet for the tracker in state `s`.
PsnTrackerIn draw(Rng& rng, const Phase& ph, const State& s) {
  PsnTrackerIn in;
  if (!rng.bernoulli(ph.valid)) return in;
  in.valid = true;
  const uint32_t range = ph.p.range;
  int64_t off;
  const double u = rng.uniform();
  if (u < ph.far) {
    off = static_cast<int64_t>(rng.below(kMask + 1ull));  // anywhere (half of it "behind")
  } else if (u < ph.far + ph.behind) {
    off = -1 - static_cast<int64_t>(rng.below(rng.bernoulli(0.9) ? 64 : 4000000));
  } else if (u < ph.far + ph.behind + ph.beyond) {
    off = range + 1 + static_cast<int64_t>(rng.below(rng.bernoulli(0.8) ? 4 : 4000000));
  } else if (u < ph.far + ph.behind + ph.beyond + ph.in_order) {
    off = 0;
  } else {
    off = 1 + static_cast<int64_t>(rng.below(range));
    if (rng.bernoulli(ph.fill) && s.placed_count() < static_cast<int>(range)) {
      // The next free slot from a random start: the bitmap fills up.
      uint32_t i = static_cast<uint32_t>(off - 1);
      while (s.bit(i)) i = (i + 1) % range;
      off = i + 1;
    }
    if (rng.below(20) == 0) off = range;  // the range's last slot
  }
  in.psn = static_cast<uint32_t>((s.epsn + static_cast<uint64_t>(off)) & kMask);
  in.flag = rng.bernoulli(ph.flag);
  if (rng.bernoulli(ph.read)) {
    in.read = true;
    in.flag = false;
    const uint64_t k = rng.below(4);
    in.psns = static_cast<uint32_t>(k == 0   ? 1
                                    : k == 1 ? 1 + rng.below(8)
                                    : k == 2 ? 1 + rng.below(range + 8)
                                             : 1 + rng.below(1u << 20));
  }
  return in;
}

}  // namespace

RunStats run_psn(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov) {
  Rng rng = Rng::derive(opt.seed, "cosim.psn");
  TraceWindow tw(trace);
  auto rtl =
      rtl::PsnTrackerRtl::create(PsnTrackerParams{}, opt.mutant ? opt.variant : 0, tw.enabled());
  const char* mode_name[] = {"go-back-N", "selective", "RUD"};
  int b_mode[3];
  for (int m = 0; m < 3; ++m) b_mode[m] = cov.add(std::string(mode_name[m]) + ": in order");
  const int b_wrap = cov.add("expected PSN wrapped (2^24)");
  const int b_full = cov.add("window full (every PSN of the range placed)");
  const int b_end = cov.add("placed at the range's last PSN");
  const int b_beyond = cov.add("beyond the range (dropped)");
  const int b_dup_behind = cov.add("duplicate behind the expected PSN");
  const int b_dup_ahead = cov.add("duplicate of a PSN placed ahead");
  const int b_run = cov.add("in order, then >= 1 placed PSN delivered");
  const int b_run_max = cov.add("in order with the whole range behind it (256 + 1)");
  const int b_ack_count = cov.add("ACK by count (ack_every)");
  const int b_ack_req = cov.add("ACK asked (AckReq) before the count");
  const int b_ack_ahead = cov.add("selective: ACK because PSNs remain ahead");
  const int b_nak = cov.add("go-back-N: NAK of a gap");
  const int b_nak_quiet = cov.add("go-back-N: later packets of a gap, no NAK");
  const int b_sr_nak = cov.add("selective: NAK with SACK bitmap");
  const int b_read = cov.add("READ taken in order");
  const int b_read_dup = cov.add("READ duplicate");
  const int b_read_ooo = cov.add("READ out of order");
  const int b_read_run = cov.add("selective: READ, then placed PSNs delivered");
  const int b_trim = cov.add("RUD: trimmed packet NACKed");
  const int b_block = cov.add("RUD: SACK block > 0");
  // (Block 8 is the furthest: a 256-PSN range; the clamp at 31 of a 1024 window is unreachable.)
  const int b_block_max = cov.add("RUD: SACK block 8 (the range's end)");
  const int b_range1 = cov.add("range 1");
  const int b_ack1 = cov.add("ack_every 1");

  RunStats st;
  int phase_index = 0;
  while (rtl->cycle() < opt.cycles) {
    const Phase ph = phase_index < kDirected ? directed(phase_index) : random_phase(rng);
    ++phase_index;
    tw.at(rtl->cycle(), *rtl);
    rtl->reset(ph.p);
    auto model = nic::make_psn_tracker_model(ph.p);
    const uint64_t end = rtl->cycle() + ph.cycles;
    const int m = static_cast<int>(ph.p.mode);
    while (rtl->cycle() < end && rtl->cycle() < opt.cycles) {
      const uint64_t c = rtl->cycle();
      tw.at(c, *rtl);
      const State before = state_of(*model);
      const PsnTrackerIn in = draw(rng, ph, before);
      ck.input(c, "in_valid", in.valid);  // for the mismatch report
      ck.input(c, "in_read", in.read);
      ck.input(c, "in_psn", in.psn);
      ck.input(c, "in_flag", in.flag);
      ck.input(c, "in_psns", in.psns);
      const PsnTrackerOut exp = model->tick(in);
      const PsnTrackerOut got = rtl->begin(in);
      const bool ok = compare(ck, c, exp, got, before, state_of(*rtl));
      // exp_* show the model's state before this edge, as the RTL's state outputs do.
      if (tw.open())
        rtl->set_expected(exp, before.epsn, before.ahead, before.unacked, before.nak_sent, !ok);
      rtl->finish();
      if (!in.valid) continue;
      ++st.transactions;
      const State after = state_of(*model);
      const int32_t d = static_cast<int32_t>(((in.psn - before.epsn) & kMask) << 8) >> 8;
      if (after.epsn < before.epsn) cov.hit(b_wrap);
      if (after.placed_count() == static_cast<int>(ph.p.range) && m != 0) cov.hit(b_full);
      if (exp.placed && !in.read && d == static_cast<int32_t>(ph.p.range) && m != 0) cov.hit(b_end);
      if (exp.beyond) cov.hit(b_beyond);
      if (exp.duplicate && !in.read) cov.hit(d < 0 ? b_dup_behind : b_dup_ahead);
      if (exp.placed && d == 0 && !in.read) {
        cov.hit(b_mode[m]);
        if (exp.delivered >= 2) cov.hit(b_run);
        if (exp.delivered == 257) cov.hit(b_run_max);
        if (m != 2 && exp.reply == 1) {
          if (m == 0 ? before.unacked + 1 >= ph.p.ack_every
                     : before.unacked + exp.delivered >= ph.p.ack_every)
            cov.hit(b_ack_count);
          else if (in.flag)
            cov.hit(b_ack_req);
          else if (m == 1)
            cov.hit(b_ack_ahead);
        }
      }
      if (m == 0 && exp.out_of_order) cov.hit(exp.reply == 2 ? b_nak : b_nak_quiet);
      if (m == 1 && exp.reply == 2 && exp.bitmap) cov.hit(b_sr_nak);
      if (in.read) {
        if (exp.read) cov.hit(b_read);
        if (exp.duplicate) cov.hit(b_read_dup);
        if (exp.out_of_order) cov.hit(b_read_ooo);
        if (exp.read && exp.delivered > 0) cov.hit(b_read_run);
      }
      if (exp.trimmed) cov.hit(b_trim);
      if (m == 2 && exp.block > 0) cov.hit(b_block);
      if (m == 2 && exp.block == 8) cov.hit(b_block_max);
      if (ph.p.range == 1 && exp.placed) cov.hit(b_range1);
      if (ph.p.ack_every == 1 && exp.reply == 1) cov.hit(b_ack1);
    }
  }
  st.cycles = rtl->cycle();
  return st;
}

}  // namespace fabricsim::cosim
