#include "models/nic/dcqcn_rp.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim::nic {

bool DcqcnRpRegs::operator==(const DcqcnRpRegs& o) const {
  return state == o.state && started == o.started && alpha_cnp == o.alpha_cnp &&
         check_armed == o.check_armed && rate_armed == o.rate_armed && rc == o.rc && rt == o.rt &&
         alpha == o.alpha && stage == o.stage && tnow == o.tnow && alpha_next == o.alpha_next &&
         check_at == o.check_at && rate_next == o.rate_next;
}

DcqcnRpIf::~DcqcnRpIf() = default;

void DcqcnRpModel::check(const DcqcnRpParams& p) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("DCQCN reaction point: " + what);
  };
  if (p.line < 1 || p.line > kRateMax)
    fail("line rate " + std::to_string(p.line) + " Mb/s is not in [1, " + std::to_string(kRateMax) +
         "] (24-bit Mb/s)");
  if (p.min < 1 || p.min > p.line) fail("min rate must be in [1 Mb/s, line rate]");
  if (p.ai > p.line || p.hai > p.line) fail("ai and hai must not exceed the line rate");
  if (p.alpha_period == 0 || p.decrease_period == 0 || p.rate_period == 0)
    fail("periods must be positive");
  if (p.f < 1 || p.f > 254) fail("fast-recovery steps must be in [1, 254]");
  if (p.g_shift < 1 || p.g_shift > 16) fail("g_shift must be in [1, 16]");
}

DcqcnRpModel::DcqcnRpModel(const DcqcnRpParams& p) {
  reset(p);
}

void DcqcnRpModel::reset(const DcqcnRpParams& p) {
  check(p);
  p_ = p;
  r_ = DcqcnRpRegs{};
  r_.rc = r_.rt = p.line;
  r_.alpha = kOne;
}

uint32_t DcqcnRpModel::alpha_step(uint32_t a, bool cnp, int g_shift) {
  return a - ((a + (1u << (g_shift - 1))) >> g_shift) + (cnp ? kOne >> g_shift : 0u);
}

void DcqcnRpModel::increase() {
  if (r_.stage >= p_.f) r_.rt = std::min(p_.line, r_.rt + (r_.stage == p_.f ? p_.ai : p_.hai));
  r_.rc = (r_.rc + r_.rt + 1) >> 1;
  if (r_.stage < 255) ++r_.stage;
  if (r_.rc >= p_.line && r_.rt >= p_.line)
    r_.rate_armed = false;
  else
    r_.rate_next += p_.rate_period;
}

void DcqcnRpModel::decrease() {
  r_.check_armed = false;  // check_at keeps the time of this check
  if (r_.stage != 0) r_.rt = r_.rc;
  const uint64_t cut =
      (static_cast<uint64_t>(r_.rc) * r_.alpha + (1ull << kAlphaFrac)) >> (kAlphaFrac + 1);
  r_.rc = std::max<uint32_t>(p_.min, r_.rc - static_cast<uint32_t>(cut));
  r_.stage = 0;
  r_.rate_next = r_.check_at + p_.rate_period;
  r_.rate_armed = true;
}

DcqcnRpRegs DcqcnRpModel::tick(const DcqcnRpIn& in) {
  const DcqcnRpRegs before = r_;
  switch (r_.state) {
    case DcqcnRpState::kIdle:
      if (in.cnp) {
        r_.tnow = in.now;
        if (r_.started) {
          r_.state = DcqcnRpState::kCnpAlpha;
        } else {
          r_.started = true;
          r_.alpha = kOne;
          r_.alpha_next = in.now + p_.alpha_period;
          r_.check_at = in.now + p_.check_offset + p_.decrease_period;
          r_.check_armed = true;
        }
      } else if (in.timer) {
        r_.tnow = in.now;
        r_.state = DcqcnRpState::kTimer;
      }
      break;
    case DcqcnRpState::kCnpAlpha:
      if (r_.alpha_next <= r_.tnow) {
        r_.alpha = alpha_step(r_.alpha, r_.alpha_cnp, p_.g_shift);
        r_.alpha_cnp = false;
        r_.alpha_next += p_.alpha_period;
      } else {
        r_.alpha_cnp = true;
        r_.state = r_.check_armed ? DcqcnRpState::kIdle : DcqcnRpState::kCnpCheck;
      }
      break;
    case DcqcnRpState::kCnpCheck:
      if (r_.check_at <= r_.tnow) {
        r_.check_at += p_.decrease_period;
      } else {
        r_.check_armed = true;
        r_.state = DcqcnRpState::kIdle;
      }
      break;
    case DcqcnRpState::kTimer: {
      const bool rate_due = r_.rate_armed && r_.rate_next <= r_.tnow;
      const bool check_due = r_.check_armed && r_.check_at <= r_.tnow;
      // At a tie the rate timer goes first (cc_dcqcn.cpp: rdma-hw.cc scheduled it earlier).
      if (rate_due && (!check_due || r_.rate_next <= r_.check_at))
        increase();
      else if (check_due)
        r_.state = DcqcnRpState::kDecAlpha;
      else
        r_.state = DcqcnRpState::kIdle;
      break;
    }
    case DcqcnRpState::kDecAlpha:
      if (r_.alpha_next <= r_.check_at) {
        r_.alpha = alpha_step(r_.alpha, r_.alpha_cnp, p_.g_shift);
        r_.alpha_cnp = false;
        r_.alpha_next += p_.alpha_period;
      } else {
        decrease();
        r_.state = DcqcnRpState::kTimer;
      }
      break;
  }
  return before;
}

DcqcnRpRegistry::DcqcnRpRegistry() {
  add(kModel, DcqcnRpImpl{[](const DcqcnRpParams& p) -> std::unique_ptr<DcqcnRpIf> {
                            return std::make_unique<DcqcnRpModel>(p);
                          },
                          "the C++ model (models/nic/dcqcn_rp.h)"});
}

DcqcnRpRegistry& DcqcnRpRegistry::global() {
  static DcqcnRpRegistry registry;
  return registry;
}

std::string DcqcnRpRegistry::doc() const {
  std::string doc =
      "With arithmetic: fixed, which implementation of the fixed-point reaction point runs each "
      "QP.";
  for (const auto& name : names()) doc += " " + name + ": " + at(name).doc + ".";
  return doc;
}

}  // namespace fabricsim::nic
