// fabricsim: the command line.
//
//   fabricsim run CONFIG.yaml [--set KEY=VALUE]... [--out DIR] [--seed N]
//   fabricsim check CONFIG.yaml [--set KEY=VALUE]...
//   fabricsim config-docs [--out FILE]
//
// Exit codes (a contract for scripts and regressions): 0 success; 2 bad input (config, override,
// trace); 3 a conservation invariant failed; 1 anything else (including an interrupted run, whose
// partial results are still written).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <systemc>

#include "fabricsim_version.h"
#include "models/common/error.h"
#include "models/sim/results.h"
#include "models/sim/run_config.h"
#include "models/sim/simulation.h"

namespace {

constexpr int kOk = 0, kOther = 1, kBadInput = 2, kInvariant = 3;

int cmd_run(const std::string& path, const std::vector<std::string>& sets, std::string out,
            const std::vector<int64_t>& seed) {
  using namespace fabricsim;
  std::vector<std::string> overrides = sets;
  if (!seed.empty()) overrides.push_back("sim.seed=" + std::to_string(seed.front()));
  const auto cfg = sim::RunConfig::load(path, overrides);
  const std::string name = std::filesystem::path(path).stem().string();
  if (out.empty()) out = "out/" + name;
  sim::RunOptions opt;
  opt.progress = true;
  const auto report = sim::run_simulation(cfg, name, opt);
  sim::write_results(report, cfg.sw.cycle(), out);
  std::cout << sim::format_summary(report) << "  results       " << out << "/\n";
  if (!report.violations.empty()) return kInvariant;
  if (report.interrupted) {
    std::cerr << "fabricsim: interrupted; partial results written to " << out << "\n";
    return kOther;
  }
  return kOk;
}

int cmd_check(const std::string& path, const std::vector<std::string>& sets) {
  auto cfg = fabricsim::sim::RunConfig::load(path, sets);
  std::cout << "# " << path << ": valid. Resolved configuration:\n"
            << fabricsim::config::to_yaml(cfg);
  return kOk;
}

int cmd_config_docs(const std::string& out) {
  fabricsim::sim::RunConfig cfg;
  const std::string md = fabricsim::config::to_markdown(cfg, "FabricSim configuration reference");
  if (out.empty()) {
    std::cout << md;
    return kOk;
  }
  std::ofstream f(out);
  f << md;
  return f ? kOk : kOther;
}

}  // namespace

int sc_main(int argc, char** argv) {
  CLI::App app{"FabricSim: cycle-accurate SystemC models of AI-cluster network silicon"};
  app.set_version_flag("--version", std::string("fabricsim ") + FABRICSIM_VERSION);
  app.require_subcommand(1);

  std::string path, out, docs_out;
  std::vector<std::string> sets;
  std::vector<int64_t> seed;

  auto* run = app.add_subcommand("run", "Run one simulation and write results to --out");
  run->add_option("config", path, "Configuration file (YAML)")->required();
  run->add_option("--set", sets, "Override a key: --set switch.scheduler.iterations=4")
      ->type_name("KEY=VALUE")
      ->take_all();
  run->add_option("--out", out, "Output directory (default out/<config name>)");
  run->add_option("--seed", seed, "Run seed (same as --set sim.seed=N)")->expected(1);

  auto* check = app.add_subcommand("check", "Validate a configuration and print it resolved");
  check->add_option("config", path, "Configuration file (YAML)")->required();
  check->add_option("--set", sets, "Override a key")->type_name("KEY=VALUE")->take_all();

  auto* docs = app.add_subcommand("config-docs", "Print the configuration reference (Markdown)");
  docs->add_option("--out", docs_out, "Write to this file instead of stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }

  try {
    if (*run) return cmd_run(path, sets, out, seed);
    if (*check) return cmd_check(path, sets);
    if (*docs) return cmd_config_docs(docs_out);
  } catch (const fabricsim::InputError& e) {
    std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kBadInput;
  } catch (const fabricsim::InvariantError& e) {
    std::cerr << "fabricsim: invariant violated: " << e.what() << "\n";
    return kInvariant;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: " << e.what() << "\n";
    return kOther;
  }
  return kOther;
}

int main(int argc, char** argv) {
  // The SystemC banner would pollute the summary on stdout.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
