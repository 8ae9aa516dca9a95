#include "rtl/islip_rtl.h"

#include <stdexcept>
#include <string>

#include "Vislip128.h"
#include "Vislip64.h"
#include "Vislip64_mutant.h"
#include "rtl/verilated_block.h"

namespace fabricsim::rtl {
namespace {

// Port-set <-> Verilated vector of MAX_N bits (QData for 64, VlWide for more).
inline void put(QData& d, const PortSet& s) {
  d = s.word(0);
}
template <std::size_t N>
void put(VlWide<N>& d, const PortSet& s) {
  for (std::size_t w = 0; w < N; ++w) {
    const int sw = static_cast<int>(w / 2);
    const uint64_t x = sw < s.num_words() ? s.word(sw) : 0;
    d[w] = static_cast<EData>(w % 2 ? x >> 32 : x);
  }
}
inline void put_bits(QData& d, const std::vector<int>& v) {
  d = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] >= 0) d |= 1ull << i;
}
template <std::size_t N>
void put_bits(VlWide<N>& d, const std::vector<int>& v) {
  for (std::size_t w = 0; w < N; ++w) d[w] = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] >= 0) d[i / 32] |= 1u << (i % 32);
}
inline bool bit(QData d, int i) {
  return (d >> i) & 1;
}
template <std::size_t N>
bool bit(const VlWide<N>& d, int i) {
  return (d[static_cast<std::size_t>(i) / 32] >> (i % 32)) & 1;
}

void check_limits(int ports, int iterations, int max) {
  if (ports < 1 || ports > max)
    throw std::invalid_argument("RTL iSLIP: " + std::to_string(ports) +
                                " ports is outside the supported range [1, " + std::to_string(max) +
                                "]");
  if (iterations < 1 || iterations > IslipRtl::kMaxIterations)
    throw std::invalid_argument("RTL iSLIP: " + std::to_string(iterations) +
                                " iterations is outside the supported range [1, " +
                                std::to_string(IslipRtl::kMaxIterations) + "]");
}

template <class V, int MaxN>
class IslipRtlImpl final : public VerilatedAdapter<IslipRtl, V> {
  using VerilatedAdapter<IslipRtl, V>::b_;
  using VerilatedAdapter<IslipRtl, V>::n_;
  using VerilatedAdapter<IslipRtl, V>::k_;

 public:
  IslipRtlImpl(int ports, int iterations, bool traceable)
      : VerilatedAdapter<IslipRtl, V>(traceable, ports, iterations) {
    auto& t = b_.top();
    t.n_ports = static_cast<CData>(ports);
    t.iterations = static_cast<CData>(iterations);
    t.rst_n = 0;
    t.start = 0;
    PortSet none(MaxN);
    for (int j = 0; j < MaxN; ++j) put(t.req_col[j], none);
    put(t.out_ready, none);
  }

  int max_ports() const override { return MaxN; }

  void configure(int ports, int iterations) override {
    check_limits(ports, iterations, MaxN);
    n_ = ports;
    k_ = iterations;
    auto& t = b_.top();
    t.n_ports = static_cast<CData>(ports);
    t.iterations = static_cast<CData>(iterations);
    reset();
  }

  void reset() override {
    b_.top().start = 0;
    b_.reset_cycle();
  }

  void eval_low(bool start, const std::vector<PortSet>& cols, const PortSet& out_ready) override {
    auto& t = b_.top();
    t.start = start;
    if (start) {  // the RTL samples the requests only with start
      for (int j = 0; j < n_; ++j) put(t.req_col[j], cols[j]);
      put(t.out_ready, out_ready);
    }
    b_.eval_low();
  }
  void edge() override { b_.edge(); }

  bool busy() const override { return b_.top().busy; }
  bool done() const override { return b_.top().done; }
  int match(int input) const override {
    const auto& t = b_.top();
    return bit(t.match_valid, input) ? static_cast<int>(t.match_out[input]) : -1;
  }
  int grant_ptr(int output) const override { return b_.top().grant_ptr[output]; }
  int accept_ptr(int input) const override { return b_.top().accept_ptr[input]; }

  void set_expected(const IslipPins& e, bool mismatch) override {
    auto& t = b_.top();
    t.exp_busy = e.busy;
    t.exp_done = e.done;
    put_bits(t.exp_match_valid, e.match);
    for (int i = 0; i < n_; ++i) {
      t.exp_match_out[i] = static_cast<CData>(e.match[i] < 0 ? 0 : e.match[i]);
      t.exp_grant_ptr[i] = static_cast<CData>(e.grant_ptr[i]);
      t.exp_accept_ptr[i] = static_cast<CData>(e.accept_ptr[i]);
    }
    t.mismatch = mismatch;
  }
};

}  // namespace

std::unique_ptr<IslipRtl> IslipRtl::create(int ports, int iterations, bool mutant, bool traceable) {
  check_limits(ports, iterations, mutant ? kMaxMutantPorts : kMaxPorts);
  if (mutant)
    return std::make_unique<IslipRtlImpl<Vislip64_mutant, 64>>(ports, iterations, traceable);
  if (ports <= 64)
    return std::make_unique<IslipRtlImpl<Vislip64, 64>>(ports, iterations, traceable);
  return std::make_unique<IslipRtlImpl<Vislip128, 128>>(ports, iterations, traceable);
}

RtlIslipScheduler::RtlIslipScheduler(int ports, int iterations, bool mutant)
    : VoqScheduler(ports),
      rtl_(IslipRtl::create(ports, iterations, mutant)),
      cols_(static_cast<size_t>(ports), PortSet(ports)),
      out_ready_(ports) {
  rtl_->reset();
}

RtlIslipScheduler::~RtlIslipScheduler() = default;

void RtlIslipScheduler::reset() {
  rtl_->reset();
  running_ = done_ = false;
}

void RtlIslipScheduler::read_match(std::vector<int>& match) {
  matched_.clear_all();
  for (int i = 0; i < rtl_->ports(); ++i)
    if ((match[i] = rtl_->match(i)) >= 0) matched_.set(i);
}

void RtlIslipScheduler::begin(const std::vector<PortSet>& requests, const PortSet& output_ready,
                              std::vector<int>& match, int64_t c, int64_t /*cycles*/) {
  // Cycle c: start high with the requests, then its edge (iteration 1).
  if (running_ && !done_)
    throw std::logic_error("RTL iSLIP: begin() while a matching is still running");
  transpose(requests, cols_);
  out_ready_ = output_ready;
  rtl_->eval_low(true, cols_, out_ready_);
  rtl_->edge();
  running_ = true;
  done_ = rtl_->done();
  clocked_ = c;
  ready_ = c + 1;
  if (done_) read_match(match);
}

bool RtlIslipScheduler::poll(int64_t c, std::vector<int>& match) {
  // One edge for every model cycle since the last one clocked, up to the cycle before c (the
  // core polls every cycle while the matching runs: one edge per call). done rises after the
  // edge that ran the last iteration; the match is on the outputs from the next cycle.
  while (running_ && !done_ && clocked_ < c - 1) {
    rtl_->eval_low(false, cols_, out_ready_);
    rtl_->edge();
    ++clocked_;
    if (rtl_->done()) {
      done_ = true;
      ready_ = clocked_ + 1;
      read_match(match);
    }
  }
  return done_ && c >= ready_;
}

void RtlIslipScheduler::schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                                 std::vector<int>& match) {
  transpose(requests, cols_);
  bool start = true;
  for (int c = 0; c < rtl_->iterations(); ++c) {
    rtl_->eval_low(start, cols_, output_ready);
    rtl_->edge();
    start = false;
    if (rtl_->done()) {
      read_match(match);
      return;
    }
  }
  throw std::logic_error("RTL iSLIP: no done after " + std::to_string(rtl_->iterations()) +
                         " cycles");
}

}  // namespace fabricsim::rtl
