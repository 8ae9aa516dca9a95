// End-of-run checks: the conservation laws of a run (packets, buffer cells, credits), each
// registered by the block that owns the quantity when the block is elaborated, and run once when
// the simulation ends. A violated law fails the run (exit 3).
//
// A check appends one message per violation, naming the block and the numbers that disagree.
// Checks run in registration order, so a run's verdict lists its violations deterministically.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::sim {

class Checks {
 public:
  using Check = std::function<void(std::vector<std::string>& violations)>;

  // `what` names the check (for docs and tests: what it guards); `check` appends violations.
  void add(std::string what, Check check) {
    checks_.push_back({std::move(what), std::move(check)});
  }
  std::vector<std::string> run() const {
    std::vector<std::string> v;
    for (const auto& c : checks_) c.check(v);
    return v;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& c : checks_) n.push_back(c.what);
    return n;
  }

 private:
  struct Entry {
    std::string what;
    Check check;
  };
  std::vector<Entry> checks_;
};

}  // namespace fabricsim::sim
