// Fuzz target: the run configuration loader, sim::RunConfig::load (models/sim/run_config.h over
// models/config/config.h): a YAML file plus `--set key=value` overrides, then every cross-field
// check. Bad input must end in config::ConfigError (an InputError, exit code 2 in the CLI) and
// nothing else: an abort, a sanitizer report, a hang or any other exception is a finding.
//
// Input: the YAML text, then optionally a line `#--set` after which every line is one override:
//
//   switch:
//     ports: 8
//   #--set
//   traffic.load=0.5
//
// An input that starts with the `#--set` line has no file (defaults plus overrides, like a run
// without a config file). A configuration that loads is also written back out (YAML and JSON, as
// every run's config.yaml and summary.json carry it), and the YAML it writes must load again to
// the same text: a run's config.yaml is meant to reproduce the run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/common/error.h"
#include "models/sim/run_config.h"
#include "testbenches/fuzz/fuzz_input.h"

namespace {

using fabricsim::InputError;
using fabricsim::sim::RunConfig;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "config_fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fabricsim::fuzz::MemFile file;
  static fabricsim::fuzz::MemFile written;
  const std::string input(reinterpret_cast<const char*>(data), size);

  static const std::string kMarker = "#--set\n";
  size_t cut = std::string::npos;
  if (input.compare(0, kMarker.size(), kMarker) == 0) {
    cut = 0;
  } else {
    const size_t at = input.find("\n" + kMarker);
    if (at != std::string::npos) cut = at + 1;
  }
  const std::string yaml = input.substr(0, cut);
  std::vector<std::string> overrides;
  if (cut != std::string::npos) {
    for (size_t b = cut + kMarker.size(); b < input.size();) {
      size_t e = input.find('\n', b);
      if (e == std::string::npos) e = input.size();
      overrides.push_back(input.substr(b, e - b));
      b = e + 1;
    }
  }

  RunConfig cfg;
  try {
    const std::string path = cut == 0 ? std::string() : file.write(yaml.data(), yaml.size());
    cfg = RunConfig::load(path, overrides);
  } catch (const InputError&) {
    return 0;  // refused with a message: what bad input must get
  }

  // Accepted: what a run derives and writes from it must not fail either.
  const std::string out = fabricsim::config::to_yaml(cfg);
  (void)fabricsim::config::to_json(cfg).dump();
  (void)cfg.packet_limit();
  for (const int k : cfg.used_chips()) (void)cfg.pfc_headroom(cfg.chip(k));

  RunConfig again;
  try {
    again = RunConfig::load(written.write(out.data(), out.size()), {});
  } catch (const InputError& e) {
    finding(std::string("the configuration it writes out does not load again: ") + e.what() +
            "\n--- written ---\n" + out);
  }
  if (fabricsim::config::to_yaml(again) != out)
    finding("the configuration it writes out loads to a different one\n--- written ---\n" + out +
            "--- reloaded ---\n" + fabricsim::config::to_yaml(again));
  return 0;
}
