// Co-simulation of the iSLIP scheduler: IslipCycleModel (sw::IslipScheduler with the RTL's
// timing) against the Verilated islip_sched (MAX_N = 64 instance, run-time N and k). The run is a
// sequence of phases, each starting with a reset that sets N and k: directed phases first (edge
// sizes, full load, permutation and hotspot patterns), then random and constrained-random ones.
#include <memory>
#include <string>
#include <vector>

#include "rtl/islip_rtl.h"
#include "testbenches/cosim/benches.h"
#include "testbenches/cosim/islip_cycle.h"

namespace fabricsim::cosim {
namespace {

// "req[i]": input i's request row (bit j: a request to output j), as the report names it.
const char* request_name(int i) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int k = 0; k < 128; ++k) v.push_back("req[" + std::to_string(k) + "]");
    return v;
  }();
  return names[static_cast<size_t>(i)].c_str();
}

enum class Pattern { kUniform, kFull, kDiagonal, kHotspot, kPermutation, kSparse };

struct Phase {
  int n = 1, k = 1;
  Pattern pattern = Pattern::kUniform;
  int density8 = 4;  // kUniform: request probability x 8
  int ready8 = 8;    // output_ready probability x 8
  int start8 = 8;    // start probability x 8 per cycle
  uint64_t cycles = 1000;
};

// Directed phases, then random draws for the rest of the run.
Phase directed(int i) {
  switch (i) {
    case 0:
      return {1, 1, Pattern::kFull, 8, 8, 8, 300};  // degenerate 1 x 1
    case 1:
      return {64, 1, Pattern::kFull, 8, 8, 8, 4000};  // full load: pointers desync
    case 2:
      return {64, 4, Pattern::kDiagonal, 8, 8, 8, 2000};  // perfect matches in 1 iteration
    case 3:
      return {2, 2, Pattern::kFull, 8, 6, 7, 1000};
    case 4:
      return {64, 8, Pattern::kHotspot, 8, 8, 8, 3000};  // contention on few outputs
    case 5:
      return {37, 3, Pattern::kPermutation, 8, 7, 8, 3000};  // non-power-of-two N
    case 6:
      return {64, 6, Pattern::kUniform, 4, 8, 8, 3000};
    default:
      return {};
  }
}
constexpr int kDirected = 7;

Phase random_phase(Rng& rng) {
  Phase p;
  // Constrained: small N more often (more pointer wraps and perfect matches per cycle).
  p.n = rng.bernoulli(0.5) ? 1 + static_cast<int>(rng.below(16))
                           : 1 + static_cast<int>(rng.below(64));
  p.k = 1 + static_cast<int>(rng.below(rng.bernoulli(0.2) ? 12 : 4));
  p.pattern = static_cast<Pattern>(rng.below(6));
  p.density8 = 1 + static_cast<int>(rng.below(8));
  p.ready8 = rng.bernoulli(0.5) ? 8 : 4 + static_cast<int>(rng.below(5));
  p.start8 = rng.bernoulli(0.7) ? 8 : 3 + static_cast<int>(rng.below(6));
  p.cycles = 2000 + rng.below(18000);
  return p;
}

void make_requests(const Phase& ph, Rng& rng, std::vector<PortSet>& rows) {
  const int n = ph.n;
  const uint64_t mask = n == 64 ? ~0ull : (1ull << n) - 1;
  for (int i = 0; i < n; ++i) {
    uint64_t w = 0;
    switch (ph.pattern) {
      case Pattern::kUniform:
        w = random_word(rng, ph.density8);
        break;
      case Pattern::kFull:
        w = ~0ull;
        break;
      case Pattern::kDiagonal:
        w = (1ull << i) | (1ull << ((i + 1) % n));
        break;
      case Pattern::kHotspot:
        w = random_word(rng, 6) & 0xF;
        break;  // outputs 0..3
      case Pattern::kPermutation:
        w = 1ull << rng.below(static_cast<uint64_t>(n));
        if (rng.bernoulli(0.5)) w |= 1ull << rng.below(static_cast<uint64_t>(n));
        break;
      case Pattern::kSparse:
        w = rng.bernoulli(0.5) ? 1ull << rng.below(static_cast<uint64_t>(n)) : 0;
        break;
    }
    rows[i].set_word(0, w & mask);
  }
}

}  // namespace

RunStats run_islip(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov) {
  Rng rng = Rng::derive(opt.seed, "cosim.islip");
  TraceWindow tw(trace);
  constexpr int kMaxN = 64;
  auto rtl = rtl::IslipRtl::create(1, 1, opt.mutant, tw.enabled());

  const int b_size0 = cov.add("match size 0");
  const int b_size1 = cov.add("match size 1");
  const int b_size2 = cov.add("match size 2-7");
  const int b_size8 = cov.add("match size 8-31");
  const int b_size32 = cov.add("match size 32-63");
  const int b_size64 = cov.add("match size 64");
  const int b_perfect = cov.add("perfect match (size N, N > 1)");
  const int b_gwrap = cov.add("grant pointer wrap (to 0)");
  const int b_awrap = cov.add("accept pointer wrap (to 0)");
  const int b_multi = cov.add("later iterations added matches");
  const int b_multi3 = cov.add("... with k >= 3 iterations");
  const int b_notready = cov.add("request to a not-ready output");
  const int b_busy_start = cov.add("start while busy (ignored)");
  const int b_b2b = cov.add("back-to-back matchings");
  const int b_abort = cov.add("reset with a matching in flight");
  const int b_n1 = cov.add("N = 1");
  const int b_nmax = cov.add("N = 64");
  const int b_nodd = cov.add("N not a power of two");

  std::vector<PortSet> rows(kMaxN, PortSet(kMaxN)), cols(kMaxN, PortSet(kMaxN));
  std::vector<PortSet> mrows;  // the model's N-port view
  PortSet ready(kMaxN);
  std::vector<int> gptr_before, aptr_before;
  RunStats st;
  int phase_index = 0;

  while (rtl->cycle() < opt.cycles) {
    const Phase ph = phase_index < kDirected ? directed(phase_index) : random_phase(rng);
    ++phase_index;
    if (rtl->busy()) cov.hit(b_abort);
    for (auto& r : rows) r.clear_all();
    tw.at(rtl->cycle(), *rtl);
    rtl->configure(ph.n, ph.k);  // one reset cycle
    IslipCycleModel model(ph.n, ph.k);
    mrows.assign(static_cast<size_t>(ph.n), PortSet(ph.n));
    PortSet mready(ph.n);
    cov.hit(b_n1, ph.n == 1);
    cov.hit(b_nmax, ph.n == 64);
    cov.hit(b_nodd, (ph.n & (ph.n - 1)) != 0);
    const uint64_t end = rtl->cycle() + ph.cycles;

    while (rtl->cycle() < end && rtl->cycle() < opt.cycles) {
      const uint64_t c = rtl->cycle();
      tw.at(c, *rtl);
      const bool start = ph.start8 >= 8 || static_cast<int>(rng.below(8)) < ph.start8;
      const rtl::IslipPins& exp = model.pins();
      // New requests when a start can be taken; sometimes also while busy, which must be ignored.
      if (!exp.busy || rng.bernoulli(0.25)) {
        make_requests(ph, rng, rows);
        const uint64_t rmask = ph.n == 64 ? ~0ull : (1ull << ph.n) - 1;
        ready.set_word(0, random_word(rng, ph.ready8) & rmask);
        for (int i = 0; i < ph.n; ++i) mrows[i].set_word(0, rows[i].word(0));
        mready.set_word(0, ready.word(0));
        transpose(rows, cols);
      }
      rtl->eval_low(start, cols, ready);
      ck.input(c, "start", start);  // for the mismatch report: the pins of this cycle
      ck.input(c, "ready", ready.word(0));
      for (int i = 0; i < ph.n; ++i) ck.input(c, request_name(i), rows[i].word(0));

      bool bad = false;
      bad |= !ck.check(c, "busy", -1, exp.busy, rtl->busy());
      bad |= !ck.check(c, "done", -1, exp.done, rtl->done());
      for (int i = 0; i < ph.n; ++i) {
        bad |= !ck.check(c, "match", i, static_cast<uint64_t>(exp.match[i]),
                         static_cast<uint64_t>(rtl->match(i)));
        bad |= !ck.check(c, "grant_ptr", i, exp.grant_ptr[i], rtl->grant_ptr(i));
        bad |= !ck.check(c, "accept_ptr", i, exp.accept_ptr[i], rtl->accept_ptr(i));
      }
      if (tw.open()) rtl->set_expected(exp, bad);

      if (start && exp.busy) cov.hit(b_busy_start);
      if (start && exp.done) cov.hit(b_b2b);
      gptr_before = exp.grant_ptr;
      aptr_before = exp.accept_ptr;
      const bool started = model.edge(start, mrows, mready);
      rtl->edge();
      if (!started) continue;
      ++st.transactions;
      int size = 0;
      for (int m : model.pending()) size += m >= 0;
      cov.hit(size == 0   ? b_size0
              : size == 1 ? b_size1
              : size < 8  ? b_size2
              : size < 32 ? b_size8
              : size < 64 ? b_size32
                          : b_size64);
      if (size == ph.n && ph.n > 1) cov.hit(b_perfect);
      if (size > model.first_iteration_size()) {
        cov.hit(b_multi);
        if (ph.k >= 3) cov.hit(b_multi3);
      }
      for (int i = 0; i < ph.n; ++i) {
        if (~mready.word(0) & mrows[i].word(0)) cov.hit(b_notready);
        if (model.pins().grant_ptr[i] == 0 && gptr_before[i] != 0) cov.hit(b_gwrap);
        if (model.pins().accept_ptr[i] == 0 && aptr_before[i] != 0) cov.hit(b_awrap);
      }
    }
  }
  st.cycles = rtl->cycle();
  return st;
}

}  // namespace fabricsim::cosim
