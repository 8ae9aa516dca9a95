#include "testbenches/cosim/cosim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>

#include "gtkwave/fstapi.h"

#include "testbenches/cosim/benches.h"

namespace fabricsim::cosim {

void Checker::record(uint64_t cycle, const char* signal, int index, uint64_t expected,
                     uint64_t got) {
  if (count_++ == 0) {
    first_cycle_ = cycle;
    // The ring holds the last kHistory cycles that logged inputs; keep those up to this one.
    for (size_t k = 1; k <= kHistory; ++k) {
      const Slot& s = ring_[(head_ + k) % kHistory];
      if (!s.used || s.cycle > cycle || s.cycle + kHistory <= cycle) continue;
      InputCycle ic;
      ic.cycle = s.cycle;
      for (const auto& [name, v] : s.values) ic.values.emplace_back(name, v);
      first_inputs_.push_back(std::move(ic));
    }
    std::sort(first_inputs_.begin(), first_inputs_.end(),
              [](const InputCycle& a, const InputCycle& b) { return a.cycle < b.cycle; });
  }
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
  return run_cosim(*it, opt, out);
}

Result run_cosim(const Block& block, const Options& opt, std::ostream& out,
                 const std::function<void(Checker&)>& setup) {
  if (opt.variant < 1 || opt.variant > block.mutants)
    throw std::invalid_argument(fmt::format("block {} has mutant variants 1..{}, not {}",
                                            block.name, block.mutants, opt.variant));
  out << fmt::format("co-simulating {}{}: {} cycles, seed {}\n", block.name,
                     opt.mutant ? fmt::format(" (MUTANT RTL {})", opt.variant) : "", opt.cycles,
                     opt.seed);

  Checker ck(opt.seed);
  if (setup) setup(ck);
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
  if (ck.count()) {
    r.report = mismatch_report(ck);
    out << r.report;
  }
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
    if (setup) setup(ck2);
    Coverage cov2;
    block.run(again, w, ck2, cov2);
    r.window_trace = w.path;
    out << fmt::format("waveform around the first mismatch (cycles {}..{}, exp_* = model): {}\n",
                       w.from, w.to - 1, w.path);
    const std::filesystem::path gtkw = std::filesystem::path(w.path).replace_extension(".gtkw");
    try {
      write_gtkw(gtkw.string(), w.path, w.from, w.to, r.first_mismatch);
      r.window_gtkw = gtkw.string();
      out << fmt::format("open it at the mismatch (marker at cycle {}): gtkwave {} {}\n",
                         r.first_mismatch, w.path, gtkw.string());
    } catch (const std::runtime_error& e) {
      out << "no GTKWave save file: " << e.what() << "\n";
    }
  }

  out << fmt::format("coverage ({} of {} bins hit):\n", cov.bins().size() - cov.missed(),
                     cov.bins().size());
  for (const auto& b : cov.bins())
    out << fmt::format("  {:<44} {:>10}{}\n", b.name, b.count, b.count ? "" : "  <- MISSED");
  std::string never;
  for (const auto& b : cov.bins())
    if (!b.count) never += (never.empty() ? "" : "; ") + b.name;
  out << "bins never hit: " << (never.empty() ? "none" : never) << "\n";
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

std::string mismatch_report(const Checker& ck) {
  if (ck.count() == 0) return "";
  const uint64_t c = ck.first_cycle();
  std::string r =
      fmt::format("first mismatch at cycle {} (seed {}); outputs that differ:\n", c, ck.seed());
  for (const auto& m : ck.kept())
    if (m.cycle == c)
      r += fmt::format("  {:<24} expected 0x{:x} got 0x{:x}\n", m.signal, m.expected, m.got);
  const auto& in = ck.first_inputs();
  if (in.empty()) return r + "  (this bench logs no inputs)\n";
  // One row per input (in the order the bench logged them), one column per cycle.
  std::vector<std::string> names;
  std::vector<std::map<uint64_t, uint64_t>> vals;
  for (const auto& ic : in)
    for (const auto& [name, v] : ic.values) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        names.push_back(name);
        vals.emplace_back();
        it = names.end() - 1;
      }
      vals[static_cast<size_t>(it - names.begin())][ic.cycle] = v;
    }
  size_t w = 6;
  for (const auto& n : names) w = std::max(w, n.size());
  std::vector<size_t> cw(in.size(), 0);
  for (size_t k = 0; k < in.size(); ++k) {
    cw[k] = std::to_string(in[k].cycle).size() + 2;
    for (const auto& v : vals)
      if (auto f = v.find(in[k].cycle); f != v.end())
        cw[k] = std::max(cw[k], fmt::format("0x{:x}", f->second).size() + 1);
  }
  r += fmt::format("inputs of cycles {}..{} (the mismatch's cycle last):\n", in.front().cycle,
                   in.back().cycle);
  r += fmt::format("  {:<{}}", "cycle", w);
  for (size_t k = 0; k < in.size(); ++k) r += fmt::format("{:>{}}", in[k].cycle, cw[k]);
  r += "\n";
  for (size_t i = 0; i < names.size(); ++i) {
    r += fmt::format("  {:<{}}", names[i], w);
    for (size_t k = 0; k < in.size(); ++k) {
      const auto f = vals[i].find(in[k].cycle);
      r +=
          fmt::format("{:>{}}", f == vals[i].end() ? "-" : fmt::format("0x{:x}", f->second), cw[k]);
    }
    r += "\n";
  }
  return r;
}

void write_gtkw(const std::string& gtkw, const std::string& fst, uint64_t from, uint64_t to,
                uint64_t mark) {
  void* ctx = fstReaderOpen(fst.c_str());
  if (!ctx) throw std::runtime_error("cannot read " + fst);
  // The top scope's variables (ports of the Verilated top: inputs, outputs, exp_*, mismatch).
  struct Var {
    std::string name;
    uint32_t len;
  };
  std::vector<Var> vars;
  std::string top;
  int depth = 0;
  while (fstHier* h = fstReaderIterateHier(ctx)) {
    if (h->htyp == FST_HT_SCOPE && depth++ == 0) top = h->u.scope.name;
    if (h->htyp == FST_HT_UPSCOPE) --depth;
    if (h->htyp == FST_HT_VAR && depth == 1) vars.push_back({h->u.var.name, h->u.var.length});
  }
  fstReaderClose(ctx);
  const auto ref = [&](const Var& v) {
    std::string n = top + "." + v.name.substr(0, v.name.find(' '));
    if (v.len > 1 && n.find('[') == std::string::npos) n += fmt::format("[{}:0]", v.len - 1);
    return fmt::format("@{}\n{}\n", v.len > 1 ? 22 : 28, n);  // 22: hex, 28: binary
  };
  std::string sig;
  for (const auto& v : vars)
    if (v.name == "clk" || v.name == "mismatch") sig += ref(v);
  for (const auto& v : vars) {
    if (v.name == "clk" || v.name == "mismatch" || v.name.rfind("exp_", 0) == 0) continue;
    sig += ref(v);
    for (const auto& e : vars)  // the model's value right under the RTL's
      if (e.name.rfind("exp_", 0) == 0 && e.name.substr(4) == v.name) sig += ref(e);
  }
  // Times in ps (a cycle is 1 ns); zoom = -log2(ps per pixel) for about 1200 pixels; the star
  // line is the zoom, the primary marker, then the named markers A..Z (-1: unset).
  const double span = static_cast<double>(to - from) * 1000.0;
  const double zoom = -std::log2(std::max(1.0, span / 1200.0));
  std::string star = fmt::format("*{:.6f} {} {}", zoom, mark * 1000 + 500, mark * 1000 + 500);
  for (int k = 1; k < 26; ++k) star += " -1";
  std::ofstream f(gtkw);
  f << "[*] written by fabricsim cosim: the window around the first mismatch\n"
    << "[dumpfile] \"" << std::filesystem::absolute(fst).string() << "\"\n"
    << "[timestart] " << from * 1000 << "\n[size] 1400 800\n"
    << star << "\n[treeopen] " << top << ".\n[signals_width] 240\n"
    << sig;
  if (!f.flush()) throw std::runtime_error("cannot write " + gtkw);
}

}  // namespace fabricsim::cosim
