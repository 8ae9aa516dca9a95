// fabricsim: the command line.
//
//   fabricsim run CONFIG.yaml [--set KEY=VALUE]... [--out DIR] [--seed N] [--strict]
//   fabricsim check CONFIG.yaml [--set KEY=VALUE]... [--strict]
//   fabricsim config-docs [--out FILE]
//   fabricsim cosim BLOCK [--cycles N] [--seed S] [--trace FILE.fst] [--mutant] ...
//   fabricsim regress SUITE.yaml [--update-goldens] [--junit FILE] [--case NAME]... [-j N] ...
//
// Exit codes (a contract for scripts and regressions): 0 success; 2 bad input (config, override,
// trace, an unwritable --out, one another run holds, or a disk too small for what the run will
// surely write); 3 a conservation invariant failed; 1 anything else (including a run stopped by
// SIGINT/SIGTERM/SIGHUP, whose partial results are still written, an output that cannot be
// written, standard output included, and an RTL co-simulation mismatch).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <systemc>

#include "fabricsim_version.h"
#include "models/common/error.h"
#include "models/common/huge_pages.h"
#include "models/sim/mpi_partition.h"
#include "models/sim/output_dir.h"
#include "models/sim/results.h"
#include "models/sim/run_config.h"
#include "models/sim/simulation.h"
#include "rtl/register.h"
#include "testbenches/cosim/byo.h"
#include "testbenches/cosim/cosim.h"
#include "testbenches/fabricsim/regress.h"

namespace {

constexpr int kOk = 0, kOther = 1, kBadInput = 2, kInvariant = 3;

// The config argument: a path that names something (an empty one would quietly mean "defaults").
void require_config_path(const std::string& path) {
  if (path.empty()) throw fabricsim::InputError("no configuration file given (the path is empty)");
}

// --seed N: strictly a whole number in sim.seed's range, like --set sim.seed=N (no clamping, no
// hex, no sign; `cosim --seed` the same).
int64_t parse_seed(const std::string& text) {
  int64_t v = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0)
    throw fabricsim::InputError("--seed '" + text + "': expected a whole number in [0, " +
                                std::to_string(INT64_MAX) + "]");
  return v;
}

// run --seed: applied after every --set, so it wins over --set sim.seed.
std::string seed_override(const std::string& text) {
  parse_seed(text);
  return "sim.seed=" + text;
}

// A file the command will write (config-docs --out, cosim --trace): its folder must exist, as
// run --out's parent may not be a file; found before any work, and bad input (exit 2).
void require_output_folder(const std::string& flag, const std::string& path) {
  if (path.empty()) throw fabricsim::InputError(flag + " '': no file given (the path is empty)");
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw fabricsim::InputError(
        flag + " " + path + ": the folder " + parent.string() +
        (std::filesystem::exists(parent, ec) ? " is not a directory" : " does not exist"));
}

// Keys the file or a --set gives that cannot act in the resolved configuration: a warning each on
// standard error, or with --strict the configuration refused (bad input, exit 2).
void report_inert_keys(const fabricsim::sim::RunConfig& cfg, bool strict) {
  const std::vector<fabricsim::sim::InertKey> inert = cfg.inert_given();
  if (inert.empty()) return;
  std::string lines;
  for (const auto& k : inert)
    lines += fmt::format("{}{}: {}: cannot act here: it applies only when {} ({})\n",
                         strict ? "" : "fabricsim: warning: ", k.where, k.key, k.when, k.now);
  if (strict)
    throw fabricsim::InputError(fmt::format("--strict: {} key{} given that cannot act:\n{}",
                                            inert.size(), inert.size() == 1 ? "" : "s",
                                            lines.substr(0, lines.size() - 1)));
  std::cerr << lines;
}

int cmd_run(const std::string& path, const std::vector<std::string>& sets, bool out_given,
            std::string out, const std::vector<std::string>& seed, bool strict) {
  using namespace fabricsim;
  require_config_path(path);
  std::vector<std::string> overrides = sets;
  if (!seed.empty()) overrides.push_back(seed_override(seed.front()));
  const auto cfg = sim::RunConfig::load(path, overrides);
  // MPI: the other ranks run their sides of the same fabric for rank 0, which writes the results
  // (and reports what is wrong with the input: they find the same).
#ifdef FABRICSIM_MPI
  if (fabricsim::sim::g_mpi_world.rank > 0) return fabricsim::sim::mpi_serve(cfg);
#endif
  report_inert_keys(cfg, strict);
  const std::string name = std::filesystem::path(path).stem().string();
  if (out_given && out.empty())
    throw InputError("--out '': no output directory given (the path is empty)");
  if (!out_given) out = "out/" + name;
  // Before the run: a bad --out, a folder another run is writing, or a disk too small for what the
  // run will surely write fail at once, not after the simulation.
  std::unique_ptr<sim::OutputDir> dir;
  try {
    dir = std::make_unique<sim::OutputDir>(out);
  } catch (const std::runtime_error& e) {
    throw InputError(std::string("--out: ") + e.what());
  }
  const uint64_t need = sim::occupancy_min_bytes(cfg), free = dir->free_bytes();
  if (need > free)
    throw InputError(fmt::format(
        "--out {}: its file system has {:.1f} MB free, but occupancy.csv alone will take at least "
        "{:.1f} MB (stats.occupancy_interval={} over sim.duration={}); free some space, choose "
        "another --out or sample less often",
        out, static_cast<double>(free) / 1e6, static_cast<double>(need) / 1e6,
        cfg.stats.occupancy_interval.str(), cfg.sim.duration.str()));
  sim::RunOptions opt;
  opt.progress = true;
  opt.out_dir = dir->staging();  // occupancy.csv is written there during the run
  // From here to the last file written, a stop signal ends the run with its results kept.
  const sim::InterruptGuard guard;
  sim::RunReport report;
  try {
    report = sim::run_simulation(cfg, name, opt);
    sim::write_results(report, cfg.sw.cycle(), dir->staging());
    dir->publish();
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(
        std::string(e.what()) + "; the results were not published: " + out +
        (dir->had_previous() ? " keeps the previous run's results" : " was not created"));
  }
  std::cout << sim::format_summary(report) << "  results       " << out << "/\n";
  if (!report.violations.empty()) return kInvariant;
  if (report.interrupted) {
    const int sig = sim::InterruptGuard::signal_received();
    std::cerr << "fabricsim: interrupted by " << (sig ? strsignal(sig) : "a signal")
              << "; partial results written to " << out << "\n";
    return kOther;
  }
  return kOk;
}

int cmd_check(const std::string& path, const std::vector<std::string>& sets, bool strict) {
  require_config_path(path);
  auto cfg = fabricsim::sim::RunConfig::load(path, sets);
  report_inert_keys(cfg, strict);  // where run reports them: before the inputs are read
  fabricsim::sim::check_inputs(cfg);
  std::cout << "# " << path << ": valid.\n"
            << fabricsim::sim::topology_summary(cfg) << "# Resolved configuration:\n"
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
  require_output_folder("--out", out);
  std::ofstream f(out);
  if (!f) {
    const int err = errno;
    throw fabricsim::InputError("--out " + out + ": cannot write: " + std::strerror(err));
  }
  f << md;
  if (!f.flush()) throw std::runtime_error("config-docs: cannot write " + out);
  return kOk;
}

int cmd_cosim(const std::string& block, const fabricsim::cosim::Options& opt,
              const std::vector<std::string>& seed) {
  fabricsim::cosim::Options o = opt;
  if (!seed.empty()) o.seed = static_cast<uint64_t>(parse_seed(seed.front()));
  if (block.empty())
    throw fabricsim::InputError(
        "cosim: give a BLOCK (built-in RTL) or --rtl FILE.sv --top NAME "
        "--bind BLOCK --ports MAP.yaml (your own RTL)");
  if (!o.trace.empty()) require_output_folder("--trace", o.trace);
  if (!o.mismatch_trace.empty()) require_output_folder("--mismatch-trace", o.mismatch_trace);
  try {
    const auto r = fabricsim::cosim::run_cosim(block, o, std::cout);
    return r.mismatches ? kOther : kOk;
  } catch (const std::invalid_argument& e) {  // unknown block, unsupported option combination
    throw fabricsim::InputError(e.what());
  }
}

// Your own RTL (testbenches/cosim/byo.h): the same options, plus the files, top, block and map.
int cmd_cosim_byo(fabricsim::cosim::ByoOptions opt, const std::vector<std::string>& seed,
                  bool cycles_given) {
  if (!seed.empty()) opt.base.seed = static_cast<uint64_t>(parse_seed(seed.front()));
  if (!cycles_given) opt.base.cycles = 200000;  // lockstep over a pipe: ~1 s per 10^5 cycles
  for (const char* o : {"--top", "--bind", "--ports"}) {
    const std::string& v = o[2] == 't' ? opt.top : o[2] == 'b' ? opt.bind : opt.ports;
    if (v.empty()) throw fabricsim::InputError(std::string("cosim --rtl: ") + o + " is required");
  }
  try {
    return fabricsim::cosim::run_byo(opt, std::cout) ? kOther : kOk;
  } catch (const std::invalid_argument& e) {  // e.g. a window option the bench refuses
    throw fabricsim::InputError(e.what());
  }
}

// The suite's cases run as `fabricsim run` processes of this same executable; their configurations
// are resolved here, with the loader every run uses.
int cmd_regress(const fabricsim::regress::Options& opt) {
  fabricsim::regress::Hooks hooks;
  std::error_code ec;
  hooks.fabricsim = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw std::runtime_error("regress: cannot find this executable: " + ec.message());
  hooks.version = FABRICSIM_VERSION;
  hooks.resolve = [](const std::string& path, const std::vector<std::string>& sets) {
    require_config_path(path);
    auto cfg = fabricsim::sim::RunConfig::load(path, sets);
    return fabricsim::config::to_yaml(cfg);
  };
  // A case that sets a key that cannot act watches nothing it means to: refused, as --strict.
  hooks.strict = [](const std::string& path, const std::vector<std::string>& sets) {
    report_inert_keys(fabricsim::sim::RunConfig::load(path, sets), true);
  };
  return fabricsim::regress::run(opt, hooks);
}

}  // namespace

int sc_main(int argc, char** argv) {
  // The Verilated blocks join the model's registries before any configuration is loaded or
  // documented: switch.scheduler.impl and flow_control.credit.impl offer rtl from here on.
  fabricsim::rtl::register_implementations();
  CLI::App app{"FabricSim: cycle-accurate SystemC models of AI-cluster network silicon"};
  app.set_version_flag("--version", std::string("fabricsim ") + FABRICSIM_VERSION);
  app.require_subcommand(1);

  std::string path, out, docs_out;
  std::vector<std::string> sets;
  std::vector<std::string> seed;
  bool strict = false;
  const std::string strict_help =
      "Refuse (exit 2) a configuration that gives a key which cannot act in it (without: a "
      "warning per key on standard error)";

  auto* run = app.add_subcommand("run", "Run one simulation and write results to --out");
  run->footer(
      "Writes into --out (docs/results.md): summary.json, perf.json, ports.csv, links.csv,\n"
      "occupancy.csv, flow_events.csv; with NICs fct.csv (and qp_rates.csv); with a workload\n"
      "collectives.csv, steps.csv, ranks.csv.\n"
      "Exit codes: 0 the run did what was asked; 2 bad input (config, override, trace: the\n"
      "message names the file, line or key; with --strict, a key given that cannot act);\n"
      "3 an invariant failed or the work was not done (a message failed or left in flight, a\n"
      "collective unfinished, a trace not sent whole);\n"
      "1 anything else, an interrupted run included (its partial results are written).");
  run->add_option("config", path, "Configuration file (YAML)")->required();
  run->add_option("--set", sets, "Override a key: --set traffic.load=0.8 (repeatable)")
      ->type_name("KEY=VALUE")
      ->take_all();
  auto* out_opt = run->add_option("--out", out, "Output directory (default out/<config name>)");
  run->add_option("--seed", seed, "Run seed (same as --set sim.seed=N, applied last)")
      ->type_name("N")
      ->expected(1);
  run->add_flag("--strict", strict, strict_help);

  auto* check = app.add_subcommand("check", "Validate a configuration and print it resolved");
  check->add_option("config", path, "Configuration file (YAML)")->required();
  check->add_option("--set", sets, "Override a key")->type_name("KEY=VALUE")->take_all();
  check->add_flag("--strict", strict, strict_help);

  auto* docs = app.add_subcommand("config-docs", "Print the configuration reference (Markdown)");
  docs->add_option("--out", docs_out, "Write to this file instead of stdout");

  std::string block;
  fabricsim::cosim::Options cosim_opt;
  bool no_window = false;
  std::string block_list;
  for (const auto& b : fabricsim::cosim::blocks())
    block_list += "\n  " + b.name + std::string(12 - std::min<size_t>(11, b.name.size()), ' ') +
                  b.description;
  auto* cosim = app.add_subcommand(
      "cosim",
      "Co-simulate an RTL block against its C++ model, cycle by cycle. Blocks:" + block_list);
  cosim->add_option("block", block, "Block to co-simulate (or --rtl: your own)");
  auto* cycles_opt = cosim
                         ->add_option("--cycles", cosim_opt.cycles,
                                      "Clock cycles to run (default 1000000; with --rtl 200000)")
                         ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  fabricsim::cosim::ByoOptions byo;
  cosim->add_option("--rtl", byo.rtl, "Your block's SystemVerilog file (repeatable)")
      ->type_name("FILE.sv")
      ->take_all();
  cosim->add_option("--top", byo.top, "With --rtl: your top module");
  cosim->add_option("--bind", byo.bind, "With --rtl: the model block it implements (crc32, dcqcn)");
  cosim->add_option("--ports", byo.ports,
                    "With --rtl: port map YAML, model signal: your port (docs/cosim.md)");
  cosim->add_option("--out", byo.out,
                    "With --rtl: folder for report.txt, mismatch.fst, mismatch.gtkw "
                    "(default cosim-out/TOP-seedS)");
  cosim->add_option("--cache", byo.cache,
                    "With --rtl: build cache (default $FABRICSIM_COSIM_CACHE, else "
                    "~/.cache/fabricsim/cosim)");
  cosim->add_option("--fst-window", cosim_opt.window,
                    "Cycles before and after the first mismatch in the FST (as --window)");
  std::vector<std::string> cosim_seed;
  cosim->add_option("--seed", cosim_seed, "Stimulus seed (default 1)")->type_name("N")->expected(1);
  cosim->add_option("--trace", cosim_opt.trace,
                    "Dump the whole run (RTL + exp_* model values) to this FST file");
  cosim->add_option("--mismatch-trace", cosim_opt.mismatch_trace,
                    "FST file for the window around the first mismatch "
                    "(default cosim-BLOCK-seedS-mismatch.fst)");
  cosim->add_option("--window", cosim_opt.window,
                    "Cycles before and after the first mismatch in that file (default 50)");
  cosim->add_flag("--no-mismatch-trace", no_window, "Do not write the mismatch window");
  cosim->add_flag("--mutant", cosim_opt.mutant,
                  "Co-simulate the block's deliberately broken RTL (checker self-test: must fail)");
  cosim
      ->add_option("--variant", cosim_opt.variant,
                   "With --mutant: which of the block's mutants (default 1; dcqcn and psn have 4)")
      ->check(CLI::Range(1, 64));

  fabricsim::regress::Options regress_opt;
  auto* regress = app.add_subcommand(
      "regress",
      "Run a regression suite against its goldens: table, JUnit XML, exit 1 on any regression "
      "(docs/regressions.md)");
  regress
      ->add_option("suite", regress_opt.suite,
                   "Suite file (YAML), e.g. testbenches/regress/short.yaml")
      ->required();
  regress->add_flag(
      "--update-goldens", regress_opt.update,
      "Run the cases and write their goldens (next to the suite) instead of comparing");
  regress->add_flag("--check-configs", regress_opt.check_configs,
                    "Run nothing: check that every case's resolved configuration matches the one "
                    "its golden records (exit 1 and the differences when a default changed)");
  regress->add_flag("--update-configs", regress_opt.update_configs,
                    "Run nothing: rewrite the configuration record of every golden whose case "
                    "resolves differently now (a new key, a changed default), keeping its "
                    "figures, speed references and instruction counts");
  regress->add_option("--junit", regress_opt.junit, "Also write JUnit XML to this file");
  regress->add_option("--json", regress_opt.json,
                      "Also write every row and each run's wall, CPU and reference times (JSON)");
  regress->add_option("--case", regress_opt.cases, "Only this case (repeatable)")
      ->type_name("NAME")
      ->take_all();
  regress->add_option("--set", regress_opt.sets, "Override a key in every case, after its own")
      ->type_name("KEY=VALUE")
      ->take_all();
  regress->add_option("--work", regress_opt.work,
                      "Keep the runs' output here (default: a temporary directory, removed "
                      "unless a check fails)");
  regress
      ->add_option("-j,--jobs", regress_opt.jobs,
                   "Cases run side by side (default 1; speed cases always run alone)")
      ->check(CLI::Range(1, 256));

  // CLI11 would answer an unknown command with "A subcommand is required".
  const auto known = [&](const std::string& a) {
    for (const CLI::App* sub : {run, check, docs, cosim, regress})
      if (sub->get_name() == a) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "fabricsim: error: unknown command '" << argv[1]
              << "'; expected run, check, config-docs, cosim or regress (see fabricsim --help)\n";
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }

  try {
    if (fabricsim::sim::g_mpi_world.size > 1 && !*run)
      throw fabricsim::InputError(
          "only `fabricsim run` runs as MPI ranks (mpirun, srun); run the other commands alone");
    if (*run) return cmd_run(path, sets, out_opt->count() > 0, out, seed, strict);
    if (*check) return cmd_check(path, sets, strict);
    if (*docs) return cmd_config_docs(docs_out);
    if (*regress) return cmd_regress(regress_opt);
    if (*cosim) {
      cosim_opt.window_trace = !no_window;
      if (!byo.rtl.empty()) {
        if (!block.empty() || cosim_opt.mutant || !cosim_opt.trace.empty())
          throw fabricsim::InputError(
              "cosim --rtl: no BLOCK argument, --mutant or --trace (the block is --bind)");
        byo.base = cosim_opt;
        return cmd_cosim_byo(byo, cosim_seed, cycles_opt->count() > 0);
      }
      return cmd_cosim(block, cosim_opt, cosim_seed);
    }
  } catch (const fabricsim::InputError& e) {
    // (MPI: every rank finds the same bad input; rank 0 says so.)
    if (fabricsim::sim::g_mpi_world.rank == 0)
      std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kBadInput;
  } catch (const fabricsim::InvariantError& e) {
    std::cerr << "fabricsim: invariant violated: " << e.what() << "\n";
    return kInvariant;
  } catch (const std::bad_alloc&) {
    std::cerr << "fabricsim: out of memory: the configuration needs more memory than this machine "
                 "has (a very large buffer or topology?)\n";
    return kOther;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: " << e.what() << "\n";
    return kOther;
  }
  return kOther;
}

int main(int argc, char** argv) {
  // The commands that simulate: their heap in 2 MB pages (models/common/huge_pages.h).
  if (argc > 1 && (std::strcmp(argv[1], "run") == 0 || std::strcmp(argv[1], "sweep") == 0 ||
                   std::strcmp(argv[1], "regress") == 0))
    fabricsim::restart_with_huge_pages(argv);
  // The SystemC banner would pollute the summary on stdout.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // Into a file or a pipe, standard output goes out in one block at the end (what the commands
  // print is far smaller), so that a failed write is seen there with its reason.
  static char stdout_buffer[1 << 20];
  if (!isatty(fileno(stdout))) std::setvbuf(stdout, stdout_buffer, _IOFBF, sizeof stdout_buffer);
  // One of several MPI ranks (mpirun, srun): docs/architecture.md, "MPI".
  const int ranks = fabricsim::sim::launched_ranks();
#ifdef FABRICSIM_MPI
  if (ranks > 1) fabricsim::sim::mpi_start(&argc, &argv);
#else
  if (ranks > 1) {
    const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = std::getenv("PMI_RANK");
    if (!r || std::atoi(r) == 0)
      std::fprintf(stderr,
                   "fabricsim: error: started as one of %d MPI ranks, but this fabricsim was built "
                   "without MPI support (install an MPI, e.g. libopenmpi-dev, and configure the "
                   "build again), or run it alone\n",
                   ranks);
    return kBadInput;
  }
#endif
  const int rc = sc_core::sc_elab_and_sim(argc, argv);
#ifdef FABRICSIM_MPI
  if (ranks > 1) {
    // A rank that failed ends the job (every rank exits with its code), unless rank 0 has what
    // it needs of the others already (they are ending normally): its exit code is the job's.
    const bool rank0 = fabricsim::sim::g_mpi_world.rank == 0;
    if (rc != kOk && !(rank0 && fabricsim::sim::mpi_finished())) {
      if (!rank0 && rc == kBadInput) sleep(5);  // rank 0 reports the same input and ends the job
      fabricsim::sim::mpi_abort(rc);
    }
    fabricsim::sim::mpi_end();
  }
#endif
  // What went to standard output (a summary, a resolved configuration, the reference) must have
  // arrived: `fabricsim check ... > /dev/full` is not a success.
  errno = 0;
  std::cout.flush();  // (through stdout's buffer: sync_with_stdio)
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (!flushed || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr, "fabricsim: error: cannot write standard output%s%s\n", err ? ": " : "",
                 err ? std::strerror(err) : "");
    return rc == kOk ? kOther : rc;
  }
  return rc;
}
