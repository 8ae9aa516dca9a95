#include "models/switch/voq_scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::sw {

// fabricsim_schedulers.inc is generated from FABRICSIM_SCHEDULERS (models/switch/CMakeLists.txt):
// one FABRICSIM_SCHEDULER(name) line per scheduler file. Calling each register function by name
// makes every scheduler's object file needed, which static initialisers would not.
#define FABRICSIM_SCHEDULER(id) FABRICSIM_REGISTER_SCHEDULER(id);
#include "fabricsim_schedulers.inc"
#undef FABRICSIM_SCHEDULER

void register_model_schedulers(SchedulerRegistry& registry) {
#define FABRICSIM_SCHEDULER(id) register_scheduler_##id(registry);
#include "fabricsim_schedulers.inc"
#undef FABRICSIM_SCHEDULER
}

SchedulerRegistry& SchedulerRegistry::global() {
  static SchedulerRegistry registry = [] {
    SchedulerRegistry r;
    register_model_schedulers(r);
    return r;
  }();
  return registry;
}

void SchedulerRegistry::add(const std::string& algorithm, const std::string& description,
                            SchedulerFactory model) {
  if (!model) throw std::logic_error("scheduler algorithm '" + algorithm + "': no factory");
  Algorithm& a =
      algorithms_.add(algorithm, Algorithm{description, Registry<SchedulerImpl>("impl")});
  a.impls.add(kModel, SchedulerImpl{std::move(model), "", "", 0});
}

void SchedulerRegistry::add_impl(const std::string& algorithm, const std::string& impl,
                                 SchedulerImpl entry) {
  Algorithm* a = algorithms_.find(algorithm);
  if (!a)
    throw std::logic_error("impl '" + impl + "' registered for unknown scheduler algorithm '" +
                           algorithm + "'");
  if (!entry.make)
    throw std::logic_error("impl '" + impl + "' of scheduler algorithm '" + algorithm +
                           "': no factory");
  a->impls.add(impl, std::move(entry));
  const auto at = std::lower_bound(impl_names_.begin(), impl_names_.end(), impl);
  if (at == impl_names_.end() || *at != impl) impl_names_.insert(at, impl);
}

std::vector<std::string> SchedulerRegistry::algorithms_with(const std::string& impl) const {
  std::vector<std::string> out;
  for (const auto& name : names())
    if (algorithms_.find(name)->impls.contains(impl)) out.push_back(name);
  return out;
}

const std::string& SchedulerRegistry::description(const std::string& algorithm) const {
  return algorithms_.at(algorithm).description;
}

const SchedulerImpl& SchedulerRegistry::impl(const std::string& algorithm,
                                             const std::string& impl) const {
  // The implementation is checked first, so that a misspelt impl is reported as such whatever
  // the algorithm.
  if (!std::binary_search(impl_names_.begin(), impl_names_.end(), impl))
    throw std::invalid_argument("scheduler: unknown impl '" + impl +
                                "' (valid: " + join_names(impl_names_) + ")");
  if (impl != kModel) {
    const auto with = algorithms_with(impl);
    if (std::find(with.begin(), with.end(), algorithm) == with.end())
      throw std::invalid_argument("scheduler: impl '" + impl + "' exists only for " +
                                  join_names(with) + ", not '" + algorithm + "'");
  }
  return algorithms_.at(algorithm).impls.at(impl);
}

std::unique_ptr<VoqScheduler> SchedulerRegistry::make(const std::string& algorithm, int ports,
                                                      int iterations, Rng& rng,
                                                      const std::string& impl) const {
  if (ports < 1)
    throw std::invalid_argument("scheduler: ports must be >= 1, got " + std::to_string(ports));
  // Checked for every algorithm, even those that ignore it, so a bad config fails the same way
  // whichever scheduler it names.
  if (iterations < 1)
    throw std::invalid_argument("scheduler: iterations must be >= 1, got " +
                                std::to_string(iterations));
  const SchedulerImpl& entry = this->impl(algorithm, impl);
  if (entry.max_ports > 0 && ports > entry.max_ports)
    throw std::invalid_argument("scheduler: " + entry.title + " supports at most " +
                                std::to_string(entry.max_ports) + " ports, not " +
                                std::to_string(ports));
  return entry.make(ports, iterations, rng);
}

std::string SchedulerRegistry::algorithm_doc() const {
  std::string doc = "Matching algorithm.";
  for (const auto& name : names()) doc += " " + name + ": " + description(name) + ".";
  return doc;
}

std::string SchedulerRegistry::impl_doc() const {
  std::string doc = std::string(kModel) + ": the C++ scheduler";
  for (const auto& impl : impl_names_) {
    if (impl == kModel) continue;
    const auto with = algorithms_with(impl);
    doc += "; " + impl;
    if (with.size() < names().size()) doc += " (" + join_names(with) + " only)";
    doc += ":";
    for (size_t i = 0; i < with.size(); ++i) {
      const SchedulerImpl& e = algorithms_.find(with[i])->impls.at(impl);
      doc += (i ? ", " : " ") + (with.size() > 1 ? with[i] + " " : "") + e.doc;
      if (e.max_ports > 0) doc += ", up to " + std::to_string(e.max_ports) + " ports";
    }
  }
  return doc + ".";
}

std::unique_ptr<VoqScheduler> make_scheduler(const std::string& algorithm, int ports,
                                             int iterations, Rng& rng, const std::string& impl) {
  return SchedulerRegistry::global().make(algorithm, ports, iterations, rng, impl);
}

const std::vector<std::string>& scheduler_names() {
  return SchedulerRegistry::global().names();
}

}  // namespace fabricsim::sw
