// Bring your own RTL, the run half: the pipe to the built executable (RtlProcess), adapters that
// put it behind the RTL interfaces the CRC-32 and DCQCN benches drive, and run_byo() (byo.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/common/error.h"
#include "rtl/crc32_rtl.h"
#include "rtl/dcqcn_rp_rtl.h"
#include "testbenches/cosim/benches.h"
#include "testbenches/cosim/byo.h"

namespace fabricsim::cosim {
namespace {

// The built block as a child process, one request per cycle (protocol: byo_driver.cpp).
class RtlProcess {
 public:
  RtlProcess(const ByoBuild& b) : out_(b.outputs.size()) {
    signal(SIGPIPE, SIG_IGN);  // a dead child shows as a write error, not a signal
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0) throw std::runtime_error("pipe() failed");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork() failed");
    if (pid_ == 0) {
      dup2(to[0], 0);
      dup2(from[1], 1);
      close(to[0]), close(to[1]), close(from[0]), close(from[1]);
      execl(b.exe.c_str(), b.exe.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to[0]);
    close(from[1]);
    fcntl(to[1], F_SETFD, FD_CLOEXEC);  // later children must not hold this pipe open
    fcntl(from[0], F_SETFD, FD_CLOEXEC);
    to_ = fdopen(to[1], "w");
    from_ = fdopen(from[0], "r");
    exe_ = b.exe;
  }
  ~RtlProcess() {
    if (to_) {
      std::fputc('Q', to_);
      std::fclose(to_);
    }
    if (from_) std::fclose(from_);
    int st = 0;
    waitpid(pid_, &st, 0);
  }
  RtlProcess(const RtlProcess&) = delete;
  RtlProcess& operator=(const RtlProcess&) = delete;

  const std::vector<uint64_t>& begin(bool rst, const std::vector<uint64_t>& in) {
    const uint8_t r = rst;
    std::fputc('B', to_);
    send(&r, 1);
    send(in.data(), in.size() * sizeof(uint64_t));
    std::fflush(to_);
    recv(out_.data(), out_.size() * sizeof(uint64_t));
    return out_;
  }
  void finish(const std::vector<uint64_t>& exp, bool mismatch) {
    const uint8_t m = mismatch;
    std::fputc('F', to_);  // buffered: goes out with the next cycle's request
    send(exp.data(), exp.size() * sizeof(uint64_t));
    send(&m, 1);
    ++cycle_;
  }
  const std::vector<uint64_t>& after_edge() {
    std::fputc('O', to_);
    std::fflush(to_);
    recv(out_.data(), out_.size() * sizeof(uint64_t));
    return out_;
  }
  void open_trace(const std::string& path) {
    const uint32_t n = static_cast<uint32_t>(path.size());
    std::fputc('T', to_);
    send(&n, 4);
    send(path.data(), n);
    if (!ack()) throw std::runtime_error("cannot open waveform file " + path);
  }
  void close_trace() {
    std::fputc('X', to_);
    ack();
  }
  uint64_t cycle() const { return cycle_; }

 private:
  void send(const void* p, size_t n) {
    if (std::fwrite(p, 1, n, to_) != n) died();
  }
  void recv(void* p, size_t n) {
    if (std::fflush(to_) != 0 || std::fread(p, 1, n, from_) != n) died();
  }
  bool ack() {
    char ok = 0;
    recv(&ok, 1);
    return ok == 1;
  }
  [[noreturn]] void died() {
    throw std::runtime_error(
        fmt::format("the RTL process {} stopped at cycle {} (a $fatal or "
                    "$finish in the RTL, or a crash)",
                    exe_, cycle_));
  }
  pid_t pid_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
  std::string exe_;
  std::vector<uint64_t> out_;
  uint64_t cycle_ = 0;
};

size_t index_of(const std::vector<ByoSignal>& s, const char* name) {
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i].name == name) return i;
  throw std::logic_error(std::string("byo: no signal ") + name);
}

class ByoCrc32 final : public rtl::Crc32Rtl {
 public:
  explicit ByoCrc32(const ByoBuild& b)
      : p_(b), w_(b.crc_bytes), in_(b.inputs.size()), exp_(b.outputs.size()) {
    for (const char* n : {"in_valid", "in_sof", "in_eof", "in_data", "in_nbytes"})
      ii_.push_back(index_of(b.inputs, n));
    for (const char* n : {"fcs_valid", "fcs", "crc_state"}) oi_.push_back(index_of(b.outputs, n));
    reset();
  }
  void reset() override {
    std::fill(in_.begin(), in_.end(), 0);
    state_ = p_.begin(true, in_)[oi_[2]];
    p_.finish(exp_, false);
  }
  uint32_t state() const override { return state_; }
  int bytes_per_cycle() const override { return w_; }
  link::Crc32BeatOut begin(const link::Crc32BeatIn& in) override {
    uint64_t d = 0;
    for (int b = 0; b < w_; ++b) d |= static_cast<uint64_t>(in.data[b]) << (8 * b);
    in_[ii_[0]] = in.valid, in_[ii_[1]] = in.sof, in_[ii_[2]] = in.eof;
    in_[ii_[3]] = d;
    in_[ii_[4]] = static_cast<uint64_t>(in.nbytes);
    const auto& o = p_.begin(false, in_);
    state_ = static_cast<uint32_t>(o[oi_[2]]);
    link::Crc32BeatOut r;
    r.fcs_valid = o[oi_[0]] != 0;
    r.fcs = static_cast<uint32_t>(o[oi_[1]]);
    return r;
  }
  void finish() override {
    p_.finish(exp_, mismatch_);
    std::fill(exp_.begin(), exp_.end(), 0);
    mismatch_ = false;
  }
  void set_expected(const link::Crc32BeatOut& o, uint32_t state, bool mismatch) override {
    exp_[oi_[0]] = o.fcs_valid, exp_[oi_[1]] = o.fcs, exp_[oi_[2]] = state;
    mismatch_ = mismatch;
  }
  void open_trace(const std::string& path) override { p_.open_trace(path); }
  void close_trace() override { p_.close_trace(); }
  uint64_t cycle() const override { return p_.cycle(); }

 private:
  RtlProcess p_;
  int w_;
  std::vector<uint64_t> in_, exp_;
  std::vector<size_t> ii_, oi_;
  uint32_t state_ = 0;
  bool mismatch_ = false;
};

class ByoDcqcn final : public rtl::DcqcnRpRtl {
 public:
  static constexpr const char* kIn[] = {
      "line_rate",   "ai_rate",      "hai_rate", "min_rate", "alpha_period", "decrease_period",
      "rate_period", "check_offset", "f_steps",  "g_shift",  "cnp",          "timer",
      "now"};
  static constexpr const char* kOut[] = {
      "state", "started", "alpha_cnp", "check_armed", "rate_armed", "rc",       "rt",
      "alpha", "stage",   "tnow",      "alpha_next",  "check_at",   "rate_next"};
  ByoDcqcn(const ByoBuild& b, const nic::DcqcnRpParams& p)
      : p_(b), in_(b.inputs.size()), exp_(b.outputs.size()) {
    for (const char* n : kIn) ii_.push_back(index_of(b.inputs, n));
    for (const char* n : kOut) oi_.push_back(index_of(b.outputs, n));
    reset(p);
  }
  void reset(const nic::DcqcnRpParams& p) override {
    nic::DcqcnRpModel::check(p);
    const uint64_t v[] = {p.line,
                          p.ai,
                          p.hai,
                          p.min,
                          p.alpha_period,
                          p.decrease_period,
                          p.rate_period,
                          p.check_offset,
                          p.f,
                          p.g_shift,
                          0,
                          0,
                          0};
    for (size_t k = 0; k < ii_.size(); ++k) in_[ii_[k]] = v[k];
    p_.begin(true, in_);
    p_.finish(exp_, false);
    stale_ = true;
  }
  const nic::DcqcnRpRegs& regs() const override {
    if (stale_) cur_ = read(p_.after_edge());  // registers after the last edge
    stale_ = false;
    return cur_;
  }
  nic::DcqcnRpRegs begin(const nic::DcqcnRpIn& in) override {
    in_[ii_[10]] = in.cnp, in_[ii_[11]] = in.timer, in_[ii_[12]] = in.now;
    return read(p_.begin(false, in_));
  }
  void finish() override {
    p_.finish(exp_, mismatch_);
    std::fill(exp_.begin(), exp_.end(), 0);
    mismatch_ = false;
    stale_ = true;
  }
  void set_expected(const nic::DcqcnRpRegs& e, bool mismatch) override {
    const uint64_t v[] = {static_cast<uint64_t>(e.state),
                          e.started,
                          e.alpha_cnp,
                          e.check_armed,
                          e.rate_armed,
                          e.rc,
                          e.rt,
                          e.alpha,
                          e.stage,
                          e.tnow,
                          e.alpha_next,
                          e.check_at,
                          e.rate_next};
    for (size_t k = 0; k < oi_.size(); ++k) exp_[oi_[k]] = v[k];
    mismatch_ = mismatch;
  }
  void open_trace(const std::string& path) override { p_.open_trace(path); }
  void close_trace() override { p_.close_trace(); }
  uint64_t cycle() const override { return p_.cycle(); }

 private:
  nic::DcqcnRpRegs read(const std::vector<uint64_t>& o) const {
    nic::DcqcnRpRegs r;
    r.state = static_cast<nic::DcqcnRpState>(o[oi_[0]]);
    r.started = o[oi_[1]], r.alpha_cnp = o[oi_[2]];
    r.check_armed = o[oi_[3]], r.rate_armed = o[oi_[4]];
    r.rc = static_cast<uint32_t>(o[oi_[5]]), r.rt = static_cast<uint32_t>(o[oi_[6]]);
    r.alpha = static_cast<uint32_t>(o[oi_[7]]), r.stage = static_cast<uint8_t>(o[oi_[8]]);
    r.tnow = o[oi_[9]], r.alpha_next = o[oi_[10]];
    r.check_at = o[oi_[11]], r.rate_next = o[oi_[12]];
    return r;
  }
  mutable RtlProcess p_;
  std::vector<uint64_t> in_, exp_;
  std::vector<size_t> ii_, oi_;
  mutable nic::DcqcnRpRegs cur_;
  mutable bool stale_ = true;
  bool mismatch_ = false;
};

}  // namespace

int run_byo(const ByoOptions& opt, std::ostream& out) {
  namespace fs = std::filesystem;
  for (const auto& f : opt.rtl)
    if (!fs::is_regular_file(f)) throw InputError("--rtl " + f + ": no such file");
  ByoBuild b = byo_build(opt, out);
  const std::string dir =
      opt.out.empty() ? fmt::format("cosim-out/{}-seed{}", opt.top, opt.base.seed) : opt.out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("--out {}: cannot create: {}", dir, ec.message()));
  Options o = opt.base;
  o.mutant = false;
  o.mismatch_trace = dir + "/mismatch.fst";
  fs::remove(o.mismatch_trace, ec);  // never leave a stale window from an earlier run
  Block blk;
  blk.name = opt.top + " (bound to " + opt.bind + ")";
  if (opt.bind == "crc32")
    blk.run = [&b](const Options& x, const TraceSpec& t, Checker& ck, Coverage& cov) {
      return run_crc32_on([&b](bool) { return std::make_unique<ByoCrc32>(b); }, x, t, ck, cov);
    };
  else
    blk.run = [&b](const Options& x, const TraceSpec& t, Checker& ck, Coverage& cov) {
      return run_dcqcn_on(
          [&b](const nic::DcqcnRpParams& p, bool) { return std::make_unique<ByoDcqcn>(b, p); }, x,
          t, ck, cov);
    };
  for (const auto& u : b.unmapped) out << "not compared (no port in the map): " << u << "\n";
  const Result r = run_cosim(blk, o, out, [&b](Checker& ck) {
    for (const auto& u : b.unmapped) ck.ignore(u);
  });
  std::ofstream rep(dir + "/report.txt");
  rep << r.report << r.verdict << "\n";
  out << "report: " << dir << "/report.txt\n";
  return r.mismatches ? 1 : 0;
}

}  // namespace fabricsim::cosim
