// Co-simulation of the CRC-32 datapath: link::Crc32Block against the Verilated crc32_stream
// (W = rtl::Crc32Rtl::kBytes). Directed frames first ("123456789", whose FCS must be the
// published check value 0xCBF43926, and every length 1 .. 3W), then random and constrained-random
// traffic: Ethernet-sized, tiny and jumbo frames, back to back or with idle gaps, and aborted
// frames (a new sof mid-frame). Every FCS is also checked against the byte-wise crc32() of the
// frame's bytes, an independent computation.
#include <algorithm>
#include <memory>
#include <vector>

#include "models/link/crc32.h"
#include "rtl/crc32_rtl.h"
#include "testbenches/cosim/benches.h"

namespace fabricsim::cosim {

RunStats run_crc32(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov) {
  const int mutant = opt.mutant ? opt.variant : 0;
  return run_crc32_on([mutant](bool traceable) { return rtl::Crc32Rtl::create(mutant, traceable); },
                      opt, trace, ck, cov);
}

RunStats run_crc32_on(const Crc32Factory& make, const Options& opt, const TraceSpec& trace,
                      Checker& ck, Coverage& cov) {
  Rng rng = Rng::derive(opt.seed, "cosim.crc32");
  TraceWindow tw(trace);
  auto rtl = make(tw.enabled());
  const int w = rtl->bytes_per_cycle();
  link::Crc32Block model(w);

  std::vector<int> b_last(static_cast<size_t>(w));
  for (int n = 1; n <= w; ++n)
    b_last[n - 1] = cov.add("last beat with " + std::to_string(n) + " bytes");
  const int b_single = cov.add("single-beat frame");
  const int b_multi = cov.add("multi-beat frame");
  const int b_b2b = cov.add("sof right after eof (back to back)");
  const int b_gap = cov.add("idle cycle inside a frame");
  const int b_abort = cov.add("frame aborted by a new sof");
  const int b_eth = cov.add("Ethernet-sized frame (60..1514 B)");
  const int b_jumbo = cov.add("jumbo frame (> 1514 B)");
  const int b_check = cov.add("check value: FCS(\"123456789\") = 0xCBF43926");

  // Frame currently being sent, and the expected FCS of the last completed frame.
  std::vector<uint8_t> frame;
  size_t pos = 0;
  bool in_frame = false;
  bool prev_eof = false;
  bool directed_check = false;
  std::vector<uint8_t> done_bytes;  // bytes of the frame whose eof was the previous cycle
  bool pending_fcs = false;
  int directed_left = 1 + 3 * w;  // "123456789", then lengths 1 .. 3W
  int gap8 = 0, abort_pct = 0;
  uint64_t mode_end = 0;
  RunStats st;

  auto new_frame = [&]() {
    size_t len;
    if (directed_left > 0) {
      if (directed_left == 1 + 3 * w) {
        const char* s = "123456789";
        frame.assign(s, s + 9);
        directed_check = true;
        --directed_left;
        return;
      }
      len = static_cast<size_t>(3 * w - directed_left + 1);
      --directed_left;
    } else {
      const uint64_t r = rng.below(10);
      len = r < 4   ? 60 + rng.below(1455)                         // Ethernet
            : r < 8 ? 1 + rng.below(static_cast<uint64_t>(3 * w))  // tiny
            : r < 9 ? 1515 + rng.below(8000)                       // jumbo
                    : 1 + rng.below(300);
    }
    frame.resize(len);
    for (auto& b : frame) b = static_cast<uint8_t>(rng.next_u64());
    directed_check = false;
  };

  while (rtl->cycle() < opt.cycles) {
    const uint64_t c = rtl->cycle();
    tw.at(c, *rtl);
    if (c >= mode_end) {  // constrained-random modes: gaps and aborts come and go
      gap8 = rng.bernoulli(0.4) ? 0 : static_cast<int>(rng.below(5));
      abort_pct = rng.bernoulli(0.7) ? 0 : 1 + static_cast<int>(rng.below(3));
      mode_end = c + 1000 + rng.below(20000);
    }
    link::Crc32BeatIn in;
    const bool idle = static_cast<int>(rng.below(8)) < gap8;
    if (!idle) {
      if (in_frame && abort_pct && static_cast<int>(rng.below(100)) < abort_pct) {
        cov.hit(b_abort);
        in_frame = false;
      }
      if (!in_frame) {
        new_frame();
        pos = 0;
        in_frame = true;
        in.sof = true;
        if (prev_eof) cov.hit(b_b2b);
      }
      in.valid = true;
      const size_t n = std::min(frame.size() - pos, static_cast<size_t>(w));
      for (size_t b = 0; b < static_cast<size_t>(w); ++b)
        in.data[b] = b < n ? frame[pos + b] : static_cast<uint8_t>(rng.next_u64());  // junk tail
      pos += n;
      if (pos == frame.size()) {
        in.eof = true;
        in.nbytes = static_cast<int>(n);
        in_frame = false;
      } else {
        in.nbytes = w;
      }
    } else if (in_frame) {
      cov.hit(b_gap);
    }
    prev_eof = in.valid && in.eof;
    ck.input(c, "in_valid", in.valid);
    ck.input(c, "in_sof", in.sof);
    ck.input(c, "in_eof", in.eof);
    ck.input(c, "in_nbytes", static_cast<uint64_t>(in.nbytes));
    uint64_t data = 0;  // bytes 0..7 of the beat, byte b in bits 8b+7:8b (as the port)
    for (int b = 0; b < std::min(w, 8); ++b) data |= static_cast<uint64_t>(in.data[b]) << (8 * b);
    ck.input(c, "in_data", data);

    const uint32_t exp_state = model.state();
    const link::Crc32BeatOut exp = model.tick(in);
    const link::Crc32BeatOut got = rtl->begin(in);
    bool bad = false;
    bad |= !ck.check(c, "fcs_valid", -1, exp.fcs_valid, got.fcs_valid);
    bad |= !ck.check(c, "fcs", -1, exp.fcs, got.fcs);
    bad |= !ck.check(c, "crc_state", -1, exp_state, rtl->state());
    if (exp.fcs_valid) {
      // The model against the byte-wise reference over the frame's bytes.
      bad |= !ck.check(c, "model_fcs_vs_bytewise", -1,
                       link::crc32(done_bytes.data(), done_bytes.size()), exp.fcs);
      if (pending_fcs) {
        bad |= !ck.check(c, "fcs_check_value", -1, 0xCBF43926u, exp.fcs);
        if (exp.fcs == 0xCBF43926u && got.fcs == 0xCBF43926u) cov.hit(b_check);
      }
      ++st.transactions;
    }
    if (tw.open()) rtl->set_expected(exp, exp_state, bad);
    rtl->finish();

    pending_fcs = false;
    if (in.valid && in.eof) {
      done_bytes = frame;
      pending_fcs = directed_check;
      const size_t len = frame.size();
      cov.hit(b_last[static_cast<size_t>(in.nbytes - 1)]);
      cov.hit(len <= static_cast<size_t>(w) ? b_single : b_multi);
      if (len >= 60 && len <= 1514) cov.hit(b_eth);
      if (len > 1514) cov.hit(b_jumbo);
    }
  }
  st.cycles = rtl->cycle();
  return st;
}

}  // namespace fabricsim::cosim
