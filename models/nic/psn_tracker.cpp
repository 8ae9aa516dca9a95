#include "models/nic/psn_tracker.h"

#include <stdexcept>
#include <string>
#include <variant>

#include "models/nic/rc_selective.h"
#include "models/nic/rc_transport.h"
#include "models/nic/rud_transport.h"

namespace fabricsim::nic {

bool PsnTrackerOut::operator==(const PsnTrackerOut& o) const {
  return reply == o.reply && psn == o.psn && placed == o.placed && read == o.read &&
         duplicate == o.duplicate && beyond == o.beyond && out_of_order == o.out_of_order &&
         trimmed == o.trimmed && delivered == o.delivered && cum == o.cum && bitmap == o.bitmap &&
         block == o.block;
}

PsnTrackerIf::~PsnTrackerIf() = default;

void check_psn_tracker_params(const PsnTrackerParams& p) {
  if (p.mode != PsnTrackerMode::kGoBackN && p.mode != PsnTrackerMode::kSelective &&
      p.mode != PsnTrackerMode::kRud)
    throw std::invalid_argument("receive tracker: unknown mode");
  if (p.range < 1 || p.range > PsnTrackerIf::kMaxRange)
    throw std::invalid_argument("receive tracker: range " + std::to_string(p.range) +
                                " is not in [1, " + std::to_string(PsnTrackerIf::kMaxRange) + "]");
  if (p.ack_every < 1 || p.ack_every > (1u << 20))
    throw std::invalid_argument("receive tracker: ack_every is not in [1, 2^20]");
}

namespace {

// The responders of rc_transport.h, rc_selective.h and rud_transport.h, one packet per tick.
class PsnTrackerModel final : public PsnTrackerIf {
 public:
  explicit PsnTrackerModel(const PsnTrackerParams& p) { reset(p); }

  void reset(const PsnTrackerParams& p) override {
    check_psn_tracker_params(p);
    p_ = p;
    RcConfig rc;
    rc.window = p.range;
    rc.ack_every = p.ack_every;
    switch (p.mode) {
      case PsnTrackerMode::kGoBackN:
        r_.emplace<RcResponder>(rc, p.first_psn);
        break;
      case PsnTrackerMode::kSelective:
        r_.emplace<SrResponder>(rc, p.first_psn);
        break;
      case PsnTrackerMode::kRud:
        r_.emplace<RudResponder>(rc, p.first_psn);
        break;
    }
  }

  PsnTrackerOut tick(const PsnTrackerIn& in) override {
    PsnTrackerOut out;
    if (!in.valid) return out;
    if (auto* r = std::get_if<RcResponder>(&r_)) {
      const uint64_t a = r->accepted(), d = r->duplicates(), x = r->out_of_order();
      const RcResponder::Outcome o =
          in.read ? r->receive_read(in.psn, in.psns) : r->receive(in.psn, in.flag);
      out.reply = static_cast<uint8_t>(o.reply);
      out.psn = o.psn;
      out.placed = r->accepted() != a;
      out.read = in.read && o.accepted;
      out.duplicate = r->duplicates() != d;
      out.out_of_order = r->out_of_order() != x;
    } else if (auto* s = std::get_if<SrResponder>(&r_)) {
      const uint64_t a = s->placed(), d = s->duplicates(), x = s->out_of_order(),
                     b = s->beyond_window();
      const SrResponder::Outcome o =
          in.read ? s->receive_read(in.psn, in.psns) : s->receive(in.psn, in.flag);
      out.reply = static_cast<uint8_t>(o.reply);
      out.placed = s->placed() != a;
      out.read = o.read;
      out.duplicate = s->duplicates() != d;
      out.out_of_order = s->out_of_order() != x;
      out.beyond = s->beyond_window() != b;
      out.delivered = o.delivered;
      out.cum = o.sack.cum;
      out.bitmap = o.sack.bitmap;
    } else {
      auto& u = std::get<RudResponder>(r_);
      const uint64_t a = u.placed(), d = u.duplicates(), x = u.out_of_order(), t = u.trimmed();
      const RudResponder::Outcome o = u.receive(in.psn, in.flag);  // RUD carries no READ
      out.reply = o.reply ? (o.nack ? 2 : 1) : 0;
      out.placed = u.placed() != a;
      out.duplicate = u.duplicates() != d;
      out.out_of_order = u.out_of_order() != x;
      out.trimmed = u.trimmed() != t;
      out.beyond = o.reply == false && !out.placed;
      out.delivered = o.delivered;
      out.cum = o.sack.cum;
      out.block = o.sack.block;
      out.bitmap = o.sack.bitmap;
    }
    return out;
  }

  uint32_t expected() const override {
    return std::visit(
        [](const auto& r) -> uint32_t {
          if constexpr (std::is_same_v<std::decay_t<decltype(r)>, std::monostate>)
            return 0;
          else
            return r.expected();
        },
        r_);
  }
  uint64_t ahead(int word) const override {
    const std::vector<uint64_t>* bits = nullptr;
    if (const auto* s = std::get_if<SrResponder>(&r_)) bits = &s->ahead_bits();
    if (const auto* u = std::get_if<RudResponder>(&r_)) bits = &u->ahead_bits();
    return bits && static_cast<size_t>(word) < bits->size() ? (*bits)[static_cast<size_t>(word)]
                                                            : 0;
  }
  uint32_t unacked() const override {
    if (const auto* r = std::get_if<RcResponder>(&r_)) return static_cast<uint32_t>(r->unacked());
    if (const auto* s = std::get_if<SrResponder>(&r_)) return static_cast<uint32_t>(s->unacked());
    return 0;
  }
  bool nak_sent() const override {
    const auto* r = std::get_if<RcResponder>(&r_);
    return r && r->nak_sent();
  }

 private:
  PsnTrackerParams p_;
  std::variant<std::monostate, RcResponder, SrResponder, RudResponder> r_;
};

}  // namespace

std::unique_ptr<PsnTrackerIf> make_psn_tracker_model(const PsnTrackerParams& p) {
  return std::make_unique<PsnTrackerModel>(p);
}

PsnTrackerRegistry::PsnTrackerRegistry() {
  add(kModel, PsnTrackerImpl{make_psn_tracker_model,
                             "the responders' own code (rc_transport.h, rc_selective.h, "
                             "rud_transport.h)"});
}

PsnTrackerRegistry& PsnTrackerRegistry::global() {
  static PsnTrackerRegistry registry;
  return registry;
}

std::string PsnTrackerRegistry::doc() const {
  std::string doc = "The responders' receive tracker (expected PSN, placement bitmap, ACK/NAK).";
  for (const auto& name : names()) doc += " " + name + ": " + at(name).doc + ".";
  return doc;
}

}  // namespace fabricsim::nic
