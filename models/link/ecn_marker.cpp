#include "models/link/ecn_marker.h"

namespace fabricsim::link {

void EcnConfig::visit(config::Visitor& v) {
  v.param("enabled", enabled, true, "Mark ECT packets (DCQCN congestion point).");
  for (const char* key : {"kmin", "kmax", "pmax", "mark_on"})
    v.applies_when(key, "{enabled}: true", [this] { return enabled; });
  v.param("kmin", kmin, Bytes(10000), Bytes(0), Bytes(1ull << 36),
          "Queue depth where marking starts (DCQCN validation setup 10 KB [V]; HPCC-lineage "
          "400G configs 800 KB [V]).");
  v.param("kmax", kmax, Bytes(100000), Bytes(1), Bytes(1ull << 36),
          "Depth where the probability reaches pmax; above it every packet is marked (100 KB "
          "[V]; 400G: 3200 KB [V]).");
  v.param("pmax", pmax, 0.01, 0.0, 1.0, "probability",
          "Marking probability at kmax (DCQCN 1% [V]; HPCC-lineage 0.2 [V]).");
  v.choice("mark_on", mark_on, "enqueue", {"enqueue", "dequeue"},
           "Mark against the depth a packet finds on enqueue or leaves behind on dequeue.");
}

void EcnConfig::validate(const config::Checker& c) const {
  c.require(kmin < kmax, "kmin", "must be below kmax");
}

EcnMarker::EcnMarker(const EcnConfig& cfg, int queues)
    : on_enqueue_(cfg.mark_on != "dequeue"),
      q_(static_cast<size_t>(queues),
         Queue{Curve{static_cast<int64_t>(cfg.kmin.count()), static_cast<int64_t>(cfg.kmax.count()),
                     cfg.pmax, cfg.enabled}}) {}

void EcnMarker::set_curve(int queue, const Curve& c) {
  q_[queue].curve = c;
}

double EcnMarker::probability(int queue, int64_t depth) const {
  const Curve& c = q_[queue].curve;
  if (!c.enabled || depth < c.kmin) return 0;
  if (depth > c.kmax) return 1;
  if (c.kmax == c.kmin) return c.pmax;
  return c.pmax * static_cast<double>(depth - c.kmin) / static_cast<double>(c.kmax - c.kmin);
}

bool EcnMarker::mark(int queue, int64_t depth, Rng& rng) {
  ++q_[queue].seen;
  const double p = probability(queue, depth);
  const bool m = p >= 1 || (p > 0 && rng.bernoulli(p));
  q_[queue].marked += m;
  return m;
}

}  // namespace fabricsim::link
