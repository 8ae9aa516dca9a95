#include "testbenches/cosim/cosim.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>

#include "testbenches/cosim/benches.h"

namespace fabricsim::cosim {

void Checker::record(uint64_t cycle, const char* signal, int index, uint64_t expected,
                     uint64_t got) {
  if (count_++ == 0) first_cycle_ = cycle;
  if (kept_.size() < kKeep)
    kept_.push_back({cycle, index < 0 ? std::string(signal) : fmt::format("{}[{}]", signal, index),
                     expected, got});
}

const std::vector<Block>& blocks() {
  static const std::vector<Block> b = {
      {"islip", "N x N iSLIP crossbar scheduler (rtl/islip_sched.sv)", run_islip},
      {"cell_alloc", "shared-buffer cell allocator (rtl/cell_alloc.sv)", run_cell_alloc},
      {"crc32", "Ethernet FCS datapath, W bytes/cycle (rtl/crc32_stream.sv)", run_crc32, 3},
      {"credit", "InfiniBand link credit unit (rtl/credit_unit.sv)", run_credit},
      {"dcqcn", "NIC DCQCN reaction point, fixed point (rtl/dcqcn_rp.sv)", run_dcqcn, 4},
      {"psn", "NIC receive tracker: expected PSN, SACK bitmap, ACK/NAK (rtl/psn_tracker.sv)",
       run_psn, 4},
  };
  return b;
}

Result run_cosim(const std::string& name, const Options& opt, std::ostream& out) {
  const auto& all = blocks();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const Block& b) { return b.name == name; });
  if (it == all.end()) {
    std::string valid;
    for (const auto& b : all) valid += (valid.empty() ? "" : ", ") + b.name;
    throw std::invalid_argument("unknown co-simulation block '" + name + "' (valid: " + valid +
                                ")");
  }
  const Block& block = *it;
  if (opt.variant < 1 || opt.variant > block.mutants)
    throw std::invalid_argument(fmt::format("block {} has mutant variants 1..{}, not {}",
                                            block.name, block.mutants, opt.variant));
  out << fmt::format("co-simulating {}{}: {} cycles, seed {}\n", block.name,
                     opt.mutant ? fmt::format(" (MUTANT RTL {})", opt.variant) : "", opt.cycles,
                     opt.seed);

  Checker ck(opt.seed);
  Coverage cov;
  TraceSpec full;
  full.path = opt.trace;
  const auto t0 = std::chrono::steady_clock::now();
  Result r;
  r.stats = block.run(opt, full, ck, cov);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.mismatches = ck.count();
  r.first_mismatch = ck.first_cycle();
  r.coverage_missed = cov.missed();

  for (const auto& m : ck.kept())
    out << fmt::format("MISMATCH cycle {} signal {} expected 0x{:x} got 0x{:x} (seed {})\n",
                       m.cycle, m.signal, m.expected, m.got, opt.seed);
  if (ck.count() > ck.kept().size())
    out << fmt::format("... {} more mismatches not shown\n", ck.count() - ck.kept().size());
  if (!opt.trace.empty()) out << "waveform (whole run): " << opt.trace << "\n";

  // The stimulus is a pure function of the seed: re-run it with the waveform on around the first
  // mismatch (a window that stops there, not a whole-run dump).
  if (ck.count() && opt.trace.empty() && opt.window_trace) {
    TraceSpec w;
    w.path = opt.mismatch_trace.empty()
                 ? fmt::format("cosim-{}-seed{}-mismatch.fst", block.name, opt.seed)
                 : opt.mismatch_trace;
    w.from = r.first_mismatch > opt.window ? r.first_mismatch - opt.window : 0;
    w.to = r.first_mismatch + opt.window + 1;
    Options again = opt;
    again.cycles = std::min(opt.cycles, w.to);
    Checker ck2(opt.seed);
    Coverage cov2;
    block.run(again, w, ck2, cov2);
    r.window_trace = w.path;
    out << fmt::format("waveform around the first mismatch (cycles {}..{}, exp_* = model): {}\n",
                       w.from, w.to - 1, w.path);
  }

  out << fmt::format("coverage ({} of {} bins hit):\n", cov.bins().size() - cov.missed(),
                     cov.bins().size());
  for (const auto& b : cov.bins())
    out << fmt::format("  {:<44} {:>10}{}\n", b.name, b.count, b.count ? "" : "  <- MISSED");
  out << fmt::format("speed: {:.0f} cycles/s ({:.2f} s)\n", wall > 0 ? r.stats.cycles / wall : 0.0,
                     wall);
  r.verdict =
      ck.count() == 0
          ? fmt::format("co-simulation matched {} cycles ({} transactions)", r.stats.cycles,
                        r.stats.transactions)
          : fmt::format("co-simulation FAILED: {} mismatches in {} cycles (first at cycle {})",
                        ck.count(), r.stats.cycles, r.first_mismatch);
  out << r.verdict << "\n";
  return r;
}

}  // namespace fabricsim::cosim
