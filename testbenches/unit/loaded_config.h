// For tests: a configuration section loaded from its defaults and `key=value` overrides, as
// config::load does for a file (every check runs; a bad value throws config's error).
#pragma once

#include <string>
#include <vector>

#include "models/config/config.h"

namespace fabricsim::test {

template <class T>
T loaded(const std::vector<std::string>& overrides = {}) {
  T c;
  config::load(c, "", overrides);
  return c;
}

}  // namespace fabricsim::test
