// Error classes that decide the process exit code (see testbenches/fabricsim/main.cpp):
//   InputError (bad config, override or trace: names file, line/key and problem) -> exit 2
//   InvariantError (a conservation law failed at the end of a run)               -> exit 3
#pragma once

#include <stdexcept>

namespace fabricsim {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvariantError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fabricsim
