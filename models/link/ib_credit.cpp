#include "models/link/ib_credit.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::link {

void IbCreditConfig::visit(config::Visitor& v) {
  // Choices from the registry: the model and the implementations registered at start-up.
  const CreditUnitRegistry& impls = CreditUnitRegistry::global();
  v.choice("impl", impl, CreditUnitRegistry::kModel, impls.names(), impls.doc());
  v.choice("protocol", protocol, "ib", {"ib", "uec_cbfc"},
           "ib: InfiniBand link-level credits (IBTA Vol 1 7.9.4 [R]): 64 B blocks, an FC packet "
           "per VL of link.ib_fc_packet_bytes. uec_cbfc: Ultra Ethernet's credit-based flow "
           "control (UEC 1.0) on Ethernet links: credits of `unit` bytes per virtual channel "
           "(the data_vls), returned in credit-update frames of a minimum Ethernet frame (64 B) "
           "[S: the update's format and the credit size are not public here; "
           "docs/hardware-facts.md]. The same counters, resynchronisation and arbitration as ib.");
  v.param("unit", unit, Bytes(64), Bytes(32), Bytes(4096),
          "Bytes a credit stands for: 64 with protocol ib [R]; a power of two with uec_cbfc [S].");
  v.param("data_vls", data_vls, 8, 1, 15, "VLs",
          "Data virtual lanes VL0..n-1 (VL15 is management).");
  v.param("buffer_per_vl", buffer_per_vl, Bytes(65536), Bytes(64), Bytes(1ull << 30),
          "Receive buffer per data VL (whole 64 B blocks); no public figure, sweep it.");
  v.param("fc_period", fc_period, Time::ps(4096000), Time::ns(1), Time::us(1000),
          "Flow-control packet period per VL (Mellanox OMNeT++ IB model: 4.096 us [V]; IBTA: at "
          "least every 65,536 symbol times [R]).");
  v.param("fc_release_blocks", fc_release_blocks, 64, 0, 1 << 20, "blocks",
          "Also send an FC packet once this many blocks were freed since the last one; 0 = only "
          "periodic.");
  v.list("sl2vl", sl2vl, {}, 0, 14, "VL",
         "VL of each of the 16 service levels; empty: SL i -> VL i mod data_vls.");
  v.begin_section("vl_arbitration", "IBTA VL arbitration tables (weights in 64 B units).");
  v.list("high_vls", high_vls, {}, 0, 14, "VL", "VL of each high-priority table entry.");
  v.list("high_weights", high_weights, {}, 0, 255, "x64 B", "Weight of each high-priority entry.");
  v.list("low_vls", low_vls, {}, 0, 14, "VL",
         "VL of each low-priority entry; with both tables empty every data VL gets one entry of "
         "weight 64 (4 KB).");
  v.list("low_weights", low_weights, {}, 0, 255, "x64 B", "Weight of each low-priority entry.");
  v.param("high_limit", high_limit, 255, 0, 255, "x4096 B",
          "Bytes the high table may send while low-priority packets wait (0: one packet, 255: "
          "unlimited).");
  v.end_section();
}

void IbCreditConfig::validate(const config::Checker& c) const {
  const uint64_t u = unit.count();
  c.require(cbfc() || u == 64, "unit",
            "InfiniBand credits are 64 B blocks (IBTA Vol 1 7.9.4); got " + unit.str() +
                " (other sizes need protocol: uec_cbfc)");
  c.require((u & (u - 1)) == 0, "unit", "must be a power of two bytes, got " + unit.str());
  c.require(buffer_per_vl.count() >= u, "buffer_per_vl",
            "holds less than one credit (" + unit.str() + ")");
  c.require(sl2vl.empty() || sl2vl.size() == 16, "sl2vl", "needs 16 entries (or none)");
  for (double x : sl2vl)
    c.require(x == std::floor(x) && x < data_vls, "sl2vl",
              "entries must be whole VL numbers below data_vls");
  c.require(high_vls.size() == high_weights.size(), "vl_arbitration.high_weights",
            "needs one weight per entry of high_vls");
  c.require(low_vls.size() == low_weights.size(), "vl_arbitration.low_weights",
            "needs one weight per entry of low_vls");
  c.require(high_vls.size() <= 64 && low_vls.size() <= 64, "vl_arbitration",
            "tables hold at most 64 entries");
  for (const auto* l : {&high_vls, &low_vls})
    for (double x : *l)
      c.require(x == std::floor(x) && x < data_vls, "vl_arbitration",
                "table VLs must be whole numbers below data_vls");
  for (const auto* l : {&high_weights, &low_weights})
    for (double x : *l)
      c.require(x == std::floor(x), "vl_arbitration", "weights must be whole numbers");
  // With tables given, every VL that a service level maps to must be served, or its packets
  // would wait for ever.
  if (!high_vls.empty() || !low_vls.empty()) {
    for (int sl = 0; sl < 16; ++sl) {
      const int vl = sl2vl.empty() ? sl % static_cast<int>(data_vls) : static_cast<int>(sl2vl[sl]);
      bool served = false;
      for (size_t k = 0; k < high_vls.size(); ++k)
        served = served || (static_cast<int>(high_vls[k]) == vl && high_weights[k] > 0);
      for (size_t k = 0; k < low_vls.size(); ++k)
        served = served || (static_cast<int>(low_vls[k]) == vl && low_weights[k] > 0);
      c.require(served, "vl_arbitration",
                "VL " + std::to_string(vl) + " (service level " + std::to_string(sl) +
                    ") has no entry with a non-zero weight in either table");
    }
  }
}

SlToVl::SlToVl(const IbCreditConfig& cfg) {
  for (int sl = 0; sl < 16; ++sl)
    map_[sl] = static_cast<uint8_t>(cfg.sl2vl.empty() ? sl % cfg.data_vls : cfg.sl2vl[sl]);
}

namespace {
std::vector<VlArbiter::Entry> entries(const std::vector<double>& vls,
                                      const std::vector<double>& w) {
  std::vector<VlArbiter::Entry> e;
  for (size_t i = 0; i < vls.size() && i < w.size(); ++i)
    e.push_back({static_cast<uint8_t>(vls[i]), static_cast<uint8_t>(w[i])});
  return e;
}
std::vector<VlArbiter::Entry> default_low(const IbCreditConfig& cfg) {
  std::vector<VlArbiter::Entry> e;
  for (int v = 0; v < cfg.data_vls; ++v) e.push_back({static_cast<uint8_t>(v), 64});
  return e;
}
}  // namespace

VlArbiter::VlArbiter(const IbCreditConfig& cfg)
    : VlArbiter(entries(cfg.high_vls, cfg.high_weights),
                cfg.high_vls.empty() && cfg.low_vls.empty() ? default_low(cfg)
                                                            : entries(cfg.low_vls, cfg.low_weights),
                static_cast<int>(cfg.high_limit)) {}

VlArbiter::VlArbiter(const std::vector<Entry>& high, const std::vector<Entry>& low, int high_limit)
    : limit_(high_limit) {
  for (auto [t, src] : {std::pair{&high_, &high}, std::pair{&low_, &low}}) {
    for (const Entry& e : *src) {
      if (t->n == kMaxEntries) break;
      t->e[t->n++] = e;
      if (e.weight) t->vls |= 1u << e.vl;
    }
    t->left = t->n ? t->e[0].weight : 0;
  }
}

bool VlArbiter::serve(Table& t, uint32_t ready, const uint32_t* head_bytes, int& vl) {
  if (!(ready & t.vls)) return false;
  // Stay on the current entry while its VL is ready and has weight left; otherwise move on with a
  // fresh weight (n + 1 steps reach every entry, the current one again included).
  for (int step = 0; step <= t.n; ++step) {
    const Entry& e = t.e[t.idx];
    if (t.left > 0 && e.weight && ((ready >> e.vl) & 1)) {
      vl = e.vl;
      t.left -= static_cast<int32_t>(ib_blocks(head_bytes[vl]));
      return true;
    }
    t.idx = (t.idx + 1) % t.n;
    t.left = t.e[t.idx].weight;
  }
  return false;
}

int VlArbiter::pick(uint32_t ready, const uint32_t* head_bytes) {
  const bool hi = (ready & high_.vls) != 0;
  const bool lo = (ready & low_.vls) != 0;
  if (!lo) high_bytes_ = 0;  // the limit only runs while low-priority packets wait
  int vl = -1;
  const bool yield = hi && lo && limit_ != 255 && high_bytes_ > 0 &&
                     high_bytes_ >= static_cast<uint64_t>(limit_) * 4096;
  if (hi && !yield && serve(high_, ready, head_bytes, vl)) {
    high_bytes_ += head_bytes[vl];
    return vl;
  }
  if (lo && serve(low_, ready, head_bytes, vl)) {
    high_bytes_ = 0;
    return vl;
  }
  return -1;
}

IbCreditSender::IbCreditSender(const IbCreditConfig& cfg, uint16_t initial_credits_per_vl,
                               const CreditUnitFactory& make)
    : credits_(make ? make(static_cast<int>(cfg.data_vls), initial_credits_per_vl)
                    : std::make_unique<CreditUnitModel>(static_cast<int>(cfg.data_vls),
                                                        initial_credits_per_vl)),
      vls_(static_cast<int>(cfg.data_vls)),
      arb_(cfg),
      shift_(cfg.unit_shift()) {}

void IbCreditSender::stall_stop(int vl, Time now) {
  if (!stalled_blocks_[vl]) return;
  stall_total_[vl] += now - stalled_since_[vl];
  if (now > stalled_since_[vl])
    spans_.add(stats::SpanKind::kCreditStall, port_, vl, stalled_since_[vl], now);
  stalled_blocks_[vl] = 0;
}

void IbCreditSender::flush_spans(Time now) const {
  for (int vl = 0; vl < vls(); ++vl)
    if (stalled_blocks_[vl] && now > stalled_since_[vl])
      spans_.add(stats::SpanKind::kCreditStall, port_, vl, stalled_since_[vl], now);
}

int IbCreditSender::select(Time now, const uint32_t* head_bytes) {
  uint32_t ready = 0;
  for (int vl = 0; vl < vls(); ++vl) {
    if (!head_bytes[vl]) {
      stall_stop(vl, now);
      continue;
    }
    const uint32_t blocks = credit_blocks(head_bytes[vl], shift_);
    if (blocks <= available(vl)) {
      ready |= 1u << vl;
      stall_stop(vl, now);
    } else {
      if (!stalled_blocks_[vl]) stalled_since_[vl] = now;
      stalled_blocks_[vl] = static_cast<uint16_t>(std::min<uint32_t>(blocks, 0xffff));
    }
  }
  return ready ? arb_.pick(ready, head_bytes) : -1;
}

bool IbCreditSender::send(int vl, uint32_t bytes, Time now) {
  const uint32_t blocks = credit_blocks(bytes, shift_);
  if (blocks > CreditUnitModel::kMask) return false;
  const CreditUnitOut o =
      credits_->tick({true, static_cast<uint8_t>(vl), static_cast<uint16_t>(blocks), false, 0, 0});
  if (!o.send_accept) return false;
  stall_stop(vl, now);
  ++sent_[vl];
  return true;
}

bool IbCreditSender::on_fc_packet(int vl, uint16_t fccl, Time now) {
  const CreditUnitOut o = credits_->tick({false, 0, 0, true, static_cast<uint8_t>(vl), fccl});
  if (o.upd_error) {
    ++fc_errors_;
    return false;
  }
  if (stalled_blocks_[vl] && stalled_blocks_[vl] <= available(vl)) stall_stop(vl, now);
  return true;
}

Time IbCreditSender::stall_time(int vl, Time now) const {
  return stall_total_[vl] + (stalled_blocks_[vl] ? now - stalled_since_[vl] : Time());
}

IbCreditReceiver::IbCreditReceiver(const IbCreditConfig& cfg)
    : vls_(static_cast<int>(cfg.data_vls)),
      shift_(cfg.unit_shift()),
      cap_(cfg.buffer_blocks()),
      period_(cfg.fc_period),
      release_blocks_(cfg.fc_release_blocks) {}

bool IbCreditReceiver::on_packet(int vl, uint32_t bytes, Time /*now*/) {
  const uint32_t blocks = credit_blocks(bytes, shift_);
  abr_[vl] = static_cast<uint16_t>((abr_[vl] + blocks) & CreditUnitModel::kMask);
  if (used_[vl] + blocks > cap_) {
    ++overflow_;
    // The blocks were received and discarded at once: they are free again.
    freed_since_fc_[vl] += blocks;
    return false;
  }
  used_[vl] += blocks;
  peak_[vl] = std::max(peak_[vl], used_[vl]);
  return true;
}

void IbCreditReceiver::release(int vl, uint32_t bytes, Time /*now*/) {
  const uint32_t blocks = credit_blocks(bytes, shift_);
  used_[vl] -= blocks;
  freed_since_fc_[vl] += blocks;
}

void IbCreditReceiver::on_fc_packet(int vl, uint16_t fctbs) {
  abr_[vl] = static_cast<uint16_t>(fctbs & CreditUnitModel::kMask);
}

uint16_t IbCreditReceiver::fccl(int vl) const {
  const int64_t free = cap_ - used_[vl];
  const int64_t adv = std::min<int64_t>(std::max<int64_t>(free, 0), CreditUnitModel::kMaxAhead);
  return static_cast<uint16_t>((abr_[vl] + adv) & CreditUnitModel::kMask);
}

uint32_t IbCreditReceiver::fc_due(Time now) const {
  uint32_t due = 0;
  for (int vl = 0; vl < vls_; ++vl)
    if (now >= last_fc_[vl] + period_ ||
        (release_blocks_ > 0 && freed_since_fc_[vl] >= release_blocks_))
      due |= 1u << vl;
  return due;
}

void IbCreditReceiver::fc_sent(int vl, Time now) {
  last_fc_[vl] = now;
  freed_since_fc_[vl] = 0;
  ++fc_sent_;
}

Time IbCreditReceiver::next_fc_timer() const {
  Time t = Time::max();
  for (int vl = 0; vl < vls_; ++vl) t = std::min(t, last_fc_[vl] + period_);
  return t;
}

void check_credit_conservation(const IbCreditSender& tx, const IbCreditReceiver& rx,
                               const int64_t* in_flight_blocks, const int64_t* lost_blocks,
                               std::vector<std::string>& violations) {
  const int64_t cap = rx.capacity_blocks();
  for (int vl = 0; vl < rx.vls(); ++vl) {
    const int64_t avail = tx.available(vl);
    const int64_t pending = (rx.fccl(vl) - tx.fccl(vl)) & CreditUnitModel::kMask;
    const int64_t used = rx.used_blocks(vl);
    const int64_t free = cap - used;
    const int64_t withheld = free - std::min<int64_t>(free, CreditUnitModel::kMaxAhead);
    const int64_t sum = avail + in_flight_blocks[vl] + lost_blocks[vl] + used + pending + withheld;
    if (sum != cap || free < 0)
      violations.push_back(
          "VL" + std::to_string(vl) + ": credits " + std::to_string(sum) + " != capacity " +
          std::to_string(cap) + " (available " + std::to_string(avail) + ", in flight " +
          std::to_string(in_flight_blocks[vl]) + ", lost " + std::to_string(lost_blocks[vl]) +
          ", buffered " + std::to_string(used) + ", unadvertised " + std::to_string(pending) +
          ", withheld " + std::to_string(withheld) + ")");
  }
}

}  // namespace fabricsim::link
