// The fabric's side of MPI runs (docs/architecture.md, "MPI"), without MPI itself: which
// switches this process runs, and what a rank reports of them to rank 0 (models/sim/
// mpi_partition.cpp sends it). Built with or without MPI.
#include <fmt/format.h>

#include "models/common/error.h"
#include "models/sim/fabric.h"

namespace fabricsim::sim {

int Fabric::mpi_sides(int64_t asked) const {
  // Every rank beside 0 runs switches of its own: unlike threads (clamped), a job of more ranks
  // than that is a mistake in the job's request, refused before any rank waits for another.
  if (asked > switch_count() + 1)
    throw InputError(fmt::format(
        "MPI with {} ranks: this fabric has {} switch{}: at most {} ranks (rank 0 runs the hosts, "
        "every other rank at least one switch); run mpirun with -np {} or fewer",
        asked, switch_count(), switch_count() == 1 ? "" : "es", switch_count() + 1,
        switch_count() + 1));
  return static_cast<int>(asked);
}

void Fabric::set_mpi(const std::vector<int>& side) {
  my_side_ = g_mpi_world.rank;
  here_.assign(static_cast<size_t>(switch_count()), 0);
  for (int s = 0; s < switch_count(); ++s) here_[s] = side[s] == my_side_;
  if (my_side_ != 0) return;  // (served: mpi_partition.cpp runs its windows)
  if (!g_make_remote_fabric) throw std::logic_error("MPI: no stand-in for the other ranks");
  remote_ = g_make_remote_fabric(*this);
  for (int s = 0; s < switch_count(); ++s)
    if (!here_[s]) switches_[s]->set_elsewhere();
  for (int r = 1; r < sides_; ++r) switch_schedulers_[0]->set_remote(r, remote_->side(r));
}

const link::LinkModule::Counters& Fabric::wire_counters(int wire, int dir) const {
  if (remote_)
    if (const auto* c = remote_->link_counters(wire, dir)) return *c;
  const FabricWire& w = wires_[static_cast<size_t>(wire)];
  return dir == 0 ? w.module->a_to_b() : w.module->b_to_a();
}

uint64_t Fabric::cross_side_calls() const {
  uint64_t n = 0;
  for (const auto& d : switch_schedulers_) n += d->cross_side_calls();
  return n;
}

SwitchCounts Fabric::local_counts() const {
  SwitchCounts c;
  for (int s = 0; s < switch_count(); ++s) {
    if (!switch_here(s)) continue;
    const auto& core = switches_[s]->core();
    c.dropped += core.dropped();
    c.in_flight += core.in_flight();
    c.win_dropped += core.win_dropped();
    c.win_in_flight += core.measured_in_flight();
    c.received += core.received();
    c.departed += core.departed();
    c.active_cycles += switches_[s]->active_cycles();
  }
  // A switch-to-switch direction runs on its sender's side (a switch's frames to a host go
  // through rank 0's link, at the join).
  for (const FabricWire& w : wires_) {
    if (!w.module || w.a.kind != WireEnd::Kind::kSwitch || w.b.kind != WireEnd::Kind::kSwitch)
      continue;
    for (int dir = 0; dir < 2; ++dir) {
      if (!switch_here(dir == 0 ? w.a.index : w.b.index)) continue;
      const auto& n = dir == 0 ? w.module->a_to_b() : w.module->b_to_a();
      c.link_frames += n.frames;
      c.link_lost += n.lost;
      c.link_win_lost += n.win_lost;
    }
  }
  return c;
}

nlohmann::json Fabric::local_counters(Time now) {
  stats::Registry r(now, per_port_counters());
  for (int s = 0; s < topology_.switches(); ++s)
    if (switch_here(s)) switches_[s]->core().register_stats(r, topology_.switch_names[s]);
  if (r.per_port())
    for (const FabricWire& w : wires_)
      if (w.module && w.a.kind == WireEnd::Kind::kSwitch && w.b.kind == WireEnd::Kind::kSwitch &&
          (switch_here(w.a.index) || switch_here(w.b.index)))
        w.module->register_stats(r, w.module->basename());
  nlohmann::json j = r.to_json();
  // Only the directions this rank's switches send on.
  for (const FabricWire& w : wires_) {
    if (!w.module || w.a.kind != WireEnd::Kind::kSwitch || w.b.kind != WireEnd::Kind::kSwitch)
      continue;
    const std::string name = w.module->basename();
    if (!j.contains(name)) continue;
    if (!switch_here(w.a.index)) j[name].erase("a_to_b");
    if (!switch_here(w.b.index)) j[name].erase("b_to_a");
  }
  return j;
}

std::vector<std::string> Fabric::switch_violations(int s, int which) const {
  if (!switch_here(s) && remote_) return remote_->violations(s, which);
  const sw::SwitchCore& core = switches_[s]->core();
  if (which == 0) return core.check_invariants();
  if (which == 1) return core.check_progress();
  std::vector<std::string> w, v;
  core.flow_control().check_invariants(w);
  for (auto& m : w) v.push_back(core.name() + ": " + m);
  return v;
}

void Fabric::flush_local_spans(Time now) {
  if (cfg_.stats.flow_events == 0) return;
  for (int s = 0; s < switch_count(); ++s)
    if (switch_here(s)) switches_[s]->core().flow_control().flush_spans(now);
}

nlohmann::json Fabric::counters_json(Time now) {
  nlohmann::json j = collect_stats(now).to_json();
  if (remote_) remote_->merge_counters(j);
  return j;
}

}  // namespace fabricsim::sim
