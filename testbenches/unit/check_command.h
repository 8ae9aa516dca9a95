// Test helper: `fabricsim check CONFIG ARGS...` run as a user would, its exit code and stderr
// (the tests of exit 2 naming a key). FABRICSIM_BINARY is the binary under test.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace fabricsim::unit {

struct Command {
  int rc = -1;
  std::string err;
};

inline Command run_check(const std::string& config, const std::vector<std::string>& args) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string err = (dir / ("check_" + std::to_string(::getpid()))).string();
  std::string cmd = std::string(FABRICSIM_BINARY) + " check " + config;
  for (const std::string& a : args) cmd += " " + a;
  cmd += " > /dev/null 2> " + err;
  Command c;
  const int status = std::system(cmd.c_str());
  c.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (std::FILE* f = std::fopen(err.c_str(), "r")) {
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) c.err.append(buf, n);
    std::fclose(f);
  }
  std::filesystem::remove(err);
  return c;
}

}  // namespace fabricsim::unit
