// Congestion control `none`: the QP sends at line rate whatever comes back (lossless fabrics
// with PFC or credits alone, or a baseline to compare the others with).
#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

namespace {

struct NoConfig : config::Configurable {
  void visit(config::Visitor&) override {}
};

class NoCc : public CongestionControl {
 public:
  explicit NoCc(BitRate line) : line_(line) {}
  BitRate rate() const override { return line_; }

 private:
  BitRate line_;
};

}  // namespace

FABRICSIM_REGISTER_CC(none) {
  registry.add("none", CcEntry{"no congestion control: line rate always",
                               [] { return std::make_unique<NoConfig>(); },
                               [](const config::Configurable&, BitRate line) {
                                 return std::make_unique<NoCc>(line);
                               },
                               nullptr});
}

}  // namespace fabricsim::nic
