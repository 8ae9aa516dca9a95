// The Verilated iSLIP scheduler (rtl/islip_sched.sv) for C++: IslipRtl drives its pins cycle by
// cycle (the co-simulation harness), RtlIslipScheduler puts it behind sw::VoqScheduler so that the
// switch model can run with the RTL in the loop (switch.scheduler.impl: rtl).
//
// Two Verilated instances exist, MAX_N = 64 (also as a mutant, for the checker's self-test) and
// MAX_N = 128; create() picks the smallest that fits and drives the port count and the iteration
// count as run-time inputs (latched in reset), so pointers wrap at the run-time N.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/port_set.h"
#include "models/switch/voq_scheduler.h"

namespace fabricsim::rtl {

// The outputs of islip_sched in one cycle (what the harness writes into the exp_* ports).
struct IslipPins {
  bool busy = false;
  bool done = false;
  std::vector<int> match;       // per input: its output, or -1 (match_valid low)
  std::vector<int> grant_ptr;   // per output
  std::vector<int> accept_ptr;  // per input
};

class IslipRtl {
 public:
  static constexpr int kMaxPorts = 128;
  static constexpr int kMaxMutantPorts = 64;
  static constexpr int kMaxIterations = 127;

  // ports in [1, kMaxPorts] (kMaxMutantPorts for the mutant), iterations in [1, kMaxIterations];
  // std::invalid_argument otherwise. Starts in reset (call reset() before use).
  static std::unique_ptr<IslipRtl> create(int ports, int iterations, bool mutant = false,
                                          bool traceable = false);
  virtual ~IslipRtl() = default;

  int ports() const { return n_; }
  int iterations() const { return k_; }
  virtual int max_ports() const = 0;  // MAX_N of the instance

  // One cycle with rst_n low (the port and iteration counts are latched), ending with an edge.
  virtual void reset() = 0;
  // New run-time port and iteration counts (same limits as create()), then reset().
  virtual void configure(int ports, int iterations) = 0;
  // Phase 1 of a cycle: the inputs with clk low. cols[j] (ports() wide): the inputs that request
  // output j; ignored unless start is taken (start while busy is ignored by the RTL).
  virtual void eval_low(bool start, const std::vector<PortSet>& cols, const PortSet& out_ready) = 0;
  // Phase 2: the rising edge.
  virtual void edge() = 0;
  virtual uint64_t cycle() const = 0;

  // Outputs, valid after eval_low() (and after edge(), for the next cycle).
  virtual bool busy() const = 0;
  virtual bool done() const = 0;
  virtual int match(int input) const = 0;  // -1 unless match_valid
  virtual int grant_ptr(int output) const = 0;
  virtual int accept_ptr(int input) const = 0;

  // Harness only: the model's view of this cycle for the exp_* ports, set before edge().
  virtual void set_expected(const IslipPins& exp, bool mismatch) = 0;
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;

 protected:
  IslipRtl(int ports, int iterations) : n_(ports), k_(iterations) {}
  int n_, k_;
};

// iSLIP with the RTL in the loop. In the switch (switch.scheduler.cycles_per_iteration 1) the
// core calls begin() in the cycle of its requests, which raises start for that cycle's edge, and
// then poll() in every following cycle, which clocks one edge per model cycle until the RTL
// raises done (after its `iterations` edges) and reads the match: the block takes exactly the
// cycles it takes, and the switch waits for its grant. schedule() (the unit comparisons with the
// model, rtl_test) instead clocks it until done inside one call. Same matches and pointers as
// IslipScheduler.
class RtlIslipScheduler final : public sw::VoqScheduler {
 public:
  RtlIslipScheduler(int ports, int iterations, bool mutant = false);
  ~RtlIslipScheduler() override;

  const char* name() const override { return "islip"; }
  void schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                std::vector<int>& match) override;
  void reset() override;
  void begin(const std::vector<PortSet>& requests, const PortSet& output_ready,
             std::vector<int>& match, int64_t c, int64_t cycles) override;
  bool poll(int64_t c, std::vector<int>& match) override;
  int64_t grant_cycle(int64_t next) const override {
    return done_ && ready_ > next ? ready_ : next;
  }
  bool clocking() const override { return running_ && !done_; }

  int ports() const { return rtl_->ports(); }
  int iterations() const { return rtl_->iterations(); }
  int grant_pointer(int output) const { return rtl_->grant_ptr(output); }
  int accept_pointer(int input) const { return rtl_->accept_ptr(input); }
  uint64_t rtl_cycles() const { return rtl_->cycle(); }

 private:
  std::unique_ptr<IslipRtl> rtl_;
  std::vector<PortSet> cols_;  // requests, transposed: one set of inputs per output
  PortSet out_ready_;          // begin()'s, held on the pins while the matching runs
  // begin()'s matching: running, the model cycle whose edge was clocked last, done seen, and the
  // cycle from which its match is on the outputs.
  bool running_ = false, done_ = false;
  int64_t clocked_ = 0, ready_ = 0;
  void read_match(std::vector<int>& match);
};

}  // namespace fabricsim::rtl
