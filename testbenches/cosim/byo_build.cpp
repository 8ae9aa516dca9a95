// Bring your own RTL, the build half: the bindable blocks' interfaces, the port map's checks
// against the ports Verilator finds in the user's top, the generated wrapper and driver, and the
// Verilator build into the cache (byo.h).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/common/error.h"
#include "testbenches/cosim/byo.h"

namespace fs = std::filesystem;

namespace fabricsim::cosim {
namespace {

// Bump when the generated wrapper or driver changes: old cache entries are then not reused.
constexpr const char* kGenVersion = "byo-3";

struct UserPort {
  int width = 0;
  bool output = false;
  bool array = false;
};

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(fmt::format("{} {}: cannot read", what, path));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// FNV-1a, 64 bits: a cache key, not a security boundary.
uint64_t fnv(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;  // a separator, so ("ab","c") != ("a","bc")
}

// Runs argv (PATH search), stdout and stderr to `log`; returns the exit status (-1: no start).
int run_logged(const std::vector<std::string>& argv, const std::string& log) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    std::FILE* f = std::fopen(log.c_str(), "w");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string verilator_version(const std::string& dir) {
  const std::string log = dir + "/verilator-version.txt";
  if (run_logged({"verilator", "--version"}, log) != 0)
    throw std::runtime_error("cannot run `verilator --version` (is Verilator installed?)");
  std::string v = read_file(log, "file");
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

// The last lines of a log, for an error message.
std::string tail(const std::string& log, size_t lines) {
  std::ifstream f(log);
  std::vector<std::string> all;
  for (std::string l; std::getline(f, l);) all.push_back(l);
  std::string r;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    r += "\n  " + all[i];
  return r;
}

std::vector<ByoSignal> signals_of(const std::string& bind, int crc_bytes) {
  if (bind == "crc32") {
    int nbw = 0;
    while ((1 << nbw) < crc_bytes + 1) ++nbw;  // $clog2(W + 1)
    return {{"in_valid", 1},    {"in_sof", 1},
            {"in_eof", 1},      {"in_data", 8 * crc_bytes},
            {"in_nbytes", nbw}, {"fcs_valid", 1, true},
            {"fcs", 32, true},  {"crc_state", 32, true, false}};
  }
  // dcqcn: rtl/dcqcn_rp.sv's ports; state, rates and alpha are the block, the rest optional.
  std::vector<ByoSignal> s = {{"line_rate", 24},   {"ai_rate", 24},      {"hai_rate", 24},
                              {"min_rate", 24},    {"alpha_period", 64}, {"decrease_period", 64},
                              {"rate_period", 64}, {"check_offset", 64}, {"f_steps", 8},
                              {"g_shift", 5},      {"cnp", 1},           {"timer", 1},
                              {"now", 64}};
  s.push_back({"state", 3, true});
  for (const char* n : {"started", "alpha_cnp", "check_armed", "rate_armed"})
    s.push_back({n, 1, true, false});
  s.push_back({"rc", 24, true});
  s.push_back({"rt", 24, true});
  s.push_back({"alpha", 25, true});
  s.push_back({"stage", 8, true, false});
  for (const char* n : {"tnow", "alpha_next", "check_at", "rate_next"})
    s.push_back({n, 64, true, false});
  return s;
}

// The port map: model signal -> the user's port, in file order.
std::vector<std::pair<std::string, std::string>> load_map(const std::string& path) {
  const std::string text = read_file(path, "--ports");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: line {}: not YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap())
    throw InputError(path + ": must be a map of model signal: your port name (docs/cosim.md)");
  std::vector<std::pair<std::string, std::string>> m;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (!kv.second.IsScalar() || kv.second.Scalar().empty())
      throw InputError(fmt::format("{}: key '{}': value must be a port name", path, key));
    m.emplace_back(key, kv.second.Scalar());
  }
  return m;
}

// The ports of the user's top as Verilator sees them (VL_IN8(&name,msb,lsb) lines of its header).
std::map<std::string, UserPort> probe_ports(const ByoOptions& opt, const std::string& dir) {
  const std::string hdr = dir + "/Vprobe.h";
  if (!fs::exists(hdr)) {
    const std::string tmp = dir + ".tmp" + std::to_string(getpid());
    fs::create_directories(tmp);
    std::vector<std::string> argv = {"verilator",    "--cc",  "-Wno-fatal",
                                     "--top-module", opt.top, "--prefix",
                                     "Vprobe",       "-Mdir", tmp};
    for (const auto& f : opt.rtl) argv.push_back(fs::absolute(f).string());
    const std::string log = tmp + "/probe.log";
    if (run_logged(argv, log) != 0) {
      const std::string why = tail(log, 12);
      fs::remove_all(tmp);
      throw InputError(fmt::format("--rtl {} --top {}: Verilator cannot elaborate it:{}",
                                   opt.rtl.front(), opt.top, why));
    }
    std::error_code ec;
    fs::rename(tmp, dir, ec);  // another process may have won the race: either copy will do
    if (ec) fs::remove_all(tmp);
  }
  const std::string h = read_file(hdr, "file");
  static const std::regex re(
      R"(VL_(IN|OUT|INOUT)(8|16|64|W)?\(\(?&(\w+)\)?(\[\d+\])?,(\d+),(\d+))");
  std::map<std::string, UserPort> ports;
  for (std::sregex_iterator it(h.begin(), h.end(), re), end; it != end; ++it) {
    UserPort p;
    p.output = (*it)[1] != "IN";
    p.array = (*it)[4].matched;
    p.width = std::stoi((*it)[5]) - std::stoi((*it)[6]) + 1;
    ports[(*it)[3]] = p;
  }
  return ports;
}

std::string port_list(const std::map<std::string, UserPort>& ports) {
  std::string s;
  for (const auto& [n, p] : ports)
    s += fmt::format("{}{} {}[{}]", s.empty() ? "" : ", ", p.output ? "output" : "input", n,
                     p.width);
  return s;
}

// Checks the map (every key a model signal, every value a port of the right direction and
// width, every input driven, every required output there); fills b.inputs/outputs/unmapped.
void check_map(const ByoOptions& opt, const std::vector<std::pair<std::string, std::string>>& map,
               const std::map<std::string, UserPort>& ports, ByoBuild& b) {
  const std::string& f = opt.ports;
  const auto find = [&](const std::string& key) -> const std::string* {
    for (const auto& [k, v] : map)
      if (k == key) return &v;
    return nullptr;
  };
  const auto port = [&](const std::string& key, const std::string& name) -> const UserPort& {
    const auto it = ports.find(name);
    if (it == ports.end())
      throw InputError(fmt::format("{}: key '{}': module {} has no port '{}' (its ports: {})", f,
                                   key, opt.top, name, port_list(ports)));
    if (it->second.array)
      throw InputError(fmt::format("{}: key '{}': port '{}' is an unpacked array (not supported)",
                                   f, key, name));
    return it->second;
  };
  std::string names = "clk, rst_n (or rst, active high)";
  for (const auto& s : signals_of(opt.bind, 8)) names += ", " + s.name;
  for (const auto& [key, name] : map)
    if (key != "clk" && key != "rst_n" && key != "rst" &&
        (names + ",").find(", " + key + ",") == std::string::npos)
      throw InputError(fmt::format("{}: key '{}': not a signal of block {} (its signals: {})", f,
                                   key, opt.bind, names));
  b.crc_bytes = 0;
  if (opt.bind == "crc32") {
    const std::string* d = find("in_data");
    if (!d) throw InputError(f + ": missing key 'in_data' (the beat's data port, 8*W bits)");
    const int w = port("in_data", *d).width;
    if (w % 8 || w < 8 || w > 64)
      throw InputError(
          fmt::format("{}: key 'in_data': port '{}' is {} bits; the CRC-32 model "
                      "takes 8*W bits for W = 1..8 bytes per cycle",
                      f, *d, w));
    b.crc_bytes = w / 8;
  }
  const std::vector<ByoSignal> sig = signals_of(opt.bind, b.crc_bytes);
  std::map<std::string, std::string> used;  // user port -> key
  for (const auto& [key, name] : map) {
    const auto s =
        std::find_if(sig.begin(), sig.end(), [&](const auto& x) { return x.name == key; });
    const bool clock = key == "clk" || key == "rst_n" || key == "rst";
    if (s == sig.end() && !clock)
      throw InputError(fmt::format("{}: key '{}': not a signal of block {} (its signals: {})", f,
                                   key, opt.bind, names));
    const UserPort& p = port(key, name);
    const bool out = s != sig.end() && s->output;
    const int w = s != sig.end() ? s->width : 1;
    if (p.output != out)
      throw InputError(
          fmt::format("{}: key '{}': the model's {} is an {}, port '{}' of {} is an {}", f, key,
                      key, out ? "output" : "input", name, opt.top, p.output ? "output" : "input"));
    if (p.width != w)
      throw InputError(
          fmt::format("{}: key '{}': the model's {} is {} bit(s) wide, port '{}' of {} "
                      "is {}",
                      f, key, key, w, name, opt.top, p.width));
    if (!used.emplace(name, key).second)
      throw InputError(fmt::format("{}: port '{}' is mapped twice (keys '{}' and '{}')", f, name,
                                   used[name], key));
  }
  if (!find("clk")) throw InputError(f + ": missing key 'clk' (the clock port)");
  if (!find("rst_n") == !find("rst"))
    throw InputError(f + ": give exactly one of 'rst_n' (active-low reset) or 'rst' (active high)");
  for (const auto& s : sig) {
    if (find(s.name)) {
      (s.output ? b.outputs : b.inputs).push_back(s);
    } else if (!s.output || s.required) {
      throw InputError(fmt::format("{}: missing key '{}' (the model's {}, {} bits)", f, s.name,
                                   s.output ? "output" : "input", s.width));
    } else {
      b.outputs.push_back(s);
      b.unmapped.push_back(s.name);
    }
  }
  for (const auto& [n, p] : ports)
    if (!p.output && !used.count(n))
      throw InputError(
          fmt::format("{}: input port '{}' of {} is not in the map: every input must "
                      "be driven (model signals: {})",
                      f, n, opt.top, names));
}

std::string range(int w) {
  return w > 1 ? fmt::format("[{}:0] ", w - 1) : "";
}

// The wrapper: the model's port names, exp_* and mismatch for the waveform, the user's top inside.
std::string wrapper_sv(const ByoOptions& opt, const ByoBuild& b,
                       const std::vector<std::pair<std::string, std::string>>& map) {
  std::string s = fmt::format(
      "// Generated by fabricsim cosim --rtl (do not edit): {} bound to model block {}.\n"
      "/* verilator lint_off UNUSEDSIGNAL */\n"
      "module fabricsim_byo_top (\n  input logic clk,\n  input logic rst_n",
      opt.top, opt.bind);
  for (const auto& i : b.inputs) s += fmt::format(",\n  input logic {}{}", range(i.width), i.name);
  for (const auto& o : b.outputs)
    s += fmt::format(",\n  output logic {}{},\n  input logic {}exp_{}", range(o.width), o.name,
                     range(o.width), o.name);
  s += ",\n  input logic mismatch\n);\n";
  for (const auto& u : b.unmapped) s += fmt::format("  assign {} = '0;  // not in the map\n", u);
  s += fmt::format("  {} dut (", opt.top);
  bool first = true;
  for (const auto& [key, port] : map) {
    const std::string net = key == "rst" ? "!rst_n" : key;
    s += fmt::format("{}\n    .{}({})", first ? "" : ",", port, net);
    first = false;
  }
  return s + "\n  );\nendmodule\n";
}

}  // namespace

std::vector<std::string> byo_blocks() {
  return {"crc32", "dcqcn"};
}

ByoBuild byo_build(const ByoOptions& opt, std::ostream& out) {
  const auto blocks = byo_blocks();
  if (std::find(blocks.begin(), blocks.end(), opt.bind) == blocks.end())
    throw InputError(
        fmt::format("--bind {}: not a bindable block (bindable: crc32, dcqcn)", opt.bind));
  std::string cache = opt.cache;
  if (cache.empty() && std::getenv("FABRICSIM_COSIM_CACHE"))
    cache = std::getenv("FABRICSIM_COSIM_CACHE");
  if (cache.empty() && std::getenv("XDG_CACHE_HOME"))
    cache = std::string(std::getenv("XDG_CACHE_HOME")) + "/fabricsim/cosim";
  if (cache.empty())
    cache =
        std::string(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") + "/.cache/fabricsim/cosim";
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) throw InputError(fmt::format("--cache {}: cannot create: {}", cache, ec.message()));
  cache = fs::absolute(cache).string();

  uint64_t src = fnv(14695981039346656037ull, verilator_version(cache));
  src = fnv(src, opt.top);
  for (const auto& f : opt.rtl) src = fnv(src, read_file(f, "--rtl"));
  const auto map = load_map(opt.ports);
  const auto ports = probe_ports(opt, fmt::format("{}/probe-{:016x}", cache, src));
  ByoBuild b;
  check_map(opt, map, ports, b);

  const uint64_t key = fnv(fnv(fnv(src, read_file(opt.ports, "--ports")), opt.bind), kGenVersion);
  b.dir = fmt::format("{}/{}-{:016x}", cache, opt.top, key);
  b.exe = b.dir + "/byo_sim";
  if (fs::exists(b.exe)) {
    b.reused = true;
    out << "RTL cache: " << b.dir << " (reused: same sources, port map and Verilator)\n";
    return b;
  }
  const std::string tmp = b.dir + ".tmp" + std::to_string(getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  {
    std::ofstream(tmp + "/wrapper.sv") << wrapper_sv(opt, b, map);
    std::ofstream(tmp + "/driver.cpp") << driver_cpp(b);
  }
  out << "RTL cache: " << b.dir << " (building with Verilator...)\n" << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> argv = {"verilator",        "--cc",         "--exe",
                                   "--build",          "-j",           "2",
                                   "--trace-fst",      "--timescale",  "1ns/1ps",
                                   "-Wno-fatal",       "--top-module", "fabricsim_byo_top",
                                   "--prefix",         "Vbyo",         "-Mdir",
                                   tmp + "/obj",       "-o",           "byo_sim",
                                   tmp + "/wrapper.sv"};
  for (const auto& f : opt.rtl) argv.push_back(fs::absolute(f).string());
  argv.push_back(tmp + "/driver.cpp");
  const std::string log = tmp + "/build.log";
  if (run_logged(argv, log) != 0)
    throw std::runtime_error(
        fmt::format("Verilator could not build {} (log: {}):{}", opt.top, log, tail(log, 15)));
  fs::rename(tmp + "/obj/byo_sim", tmp + "/byo_sim");
  fs::remove_all(tmp + "/obj");  // the objects: tens of MB, never used again
  fs::rename(tmp, b.dir, ec);
  if (ec) fs::remove_all(tmp);  // a concurrent run built the same key first
  b.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out << fmt::format("built in {:.1f} s (Verilator log: {}/build.log)\n", b.build_seconds, b.dir);
  return b;
}

}  // namespace fabricsim::cosim
