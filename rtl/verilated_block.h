// Clocking and FST tracing shared by the adapters that put a Verilated block (--cc) behind the
// C++ interface of its model. A cycle has two phases: eval_low() applies the inputs with clk low
// and evaluates, after which the cycle's outputs can be read (registered outputs show the state
// before the edge, combinational ones follow the inputs, as the models' tick() returns them);
// edge() raises clk. In the waveform a cycle is 1 ns: clk low at c ns, high at c + 0.5 ns.
// Internal to fabricsim_rtl (includes Verilator headers).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <verilated.h>
#include <verilated_fst_c.h>

namespace fabricsim::rtl {

template <class V>
class VerilatedBlock {
 public:
  // `traceable`: tracing costs a little on every eval even when no file is open, so only the
  // co-simulation harness asks for it.
  explicit VerilatedBlock(bool traceable) : ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->traceEverOn(traceable);
    ctx_->debug(0);
    top_ = std::make_unique<V>(ctx_.get(), "top");
    traceable_ = traceable;
  }
  ~VerilatedBlock() {
    close_trace();
    top_->final();
  }
  VerilatedBlock(const VerilatedBlock&) = delete;
  VerilatedBlock& operator=(const VerilatedBlock&) = delete;

  V& top() { return *top_; }
  const V& top() const { return *top_; }
  uint64_t cycle() const { return cycle_; }

  void eval_low() {
    top_->clk = 0;
    top_->eval();
    if (tfp_) tfp_->dump(cycle_ * 1000);
  }
  void edge() {
    top_->clk = 1;
    top_->eval();
    if (tfp_) tfp_->dump(cycle_ * 1000 + 500);
    ++cycle_;
  }

  // One reset cycle: rst_n low through a clock edge, with the other inputs as the caller set them
  // (idle), then rst_n high again for the next cycle.
  void reset_cycle() {
    top_->rst_n = 0;
    eval_low();
    edge();
    top_->rst_n = 1;
  }

  void open_trace(const std::string& path) {
    if (!traceable_) throw std::logic_error("tracing was not enabled for this RTL instance");
    close_trace();
    tfp_ = std::make_unique<VerilatedFstC>();
    top_->trace(tfp_.get(), 99);
    tfp_->open(path.c_str());
    if (!tfp_->isOpen()) {
      tfp_.reset();
      throw std::runtime_error("cannot open waveform file " + path);
    }
  }
  void close_trace() {
    if (!tfp_) return;
    tfp_->close();
    tfp_.reset();
  }
  bool tracing() const { return tfp_ != nullptr; }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
  std::unique_ptr<VerilatedFstC> tfp_;
  uint64_t cycle_ = 0;
  bool traceable_ = false;
};

// What every adapter only forwards to its VerilatedBlock: tracing and the cycle count. `Iface` is
// the block's RTL interface (declaring open_trace, close_trace and cycle); `args` go to it.
template <class Iface, class V>
class VerilatedAdapter : public Iface {
 public:
  template <class... Args>
  explicit VerilatedAdapter(bool traceable, Args&&... args)
      : Iface(std::forward<Args>(args)...), b_(traceable) {}
  void open_trace(const std::string& path) override { b_.open_trace(path); }
  void close_trace() override { b_.close_trace(); }
  uint64_t cycle() const override { return b_.cycle(); }

 protected:
  VerilatedBlock<V> b_;
};

}  // namespace fabricsim::rtl
