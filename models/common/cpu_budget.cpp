#include "models/common/cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

namespace fabricsim {

namespace {

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<long long> to_int(std::string_view s) {
  s = trim(s);
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// `dir` and each of its ancestors up to `root`, deepest first: a parent's quota caps its children.
std::vector<std::string> dirs_up_to(const std::string& root, std::string_view path) {
  std::vector<std::string> out;
  std::string p(trim(path));
  while (!p.empty() && p != "/") {
    out.push_back(root + p);
    p.erase(p.rfind('/'));
  }
  out.push_back(root);
  return out;
}

void take_min(std::optional<double>& best, std::optional<double> q) {
  if (q && (!best || *q < *best)) best = q;
}

}  // namespace

std::optional<double> parse_cpu_max(std::string_view text) {
  text = trim(text);
  const auto sp = text.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  const auto quota = to_int(text.substr(0, sp));  // "max" (no quota) does not parse
  const auto period = to_int(text.substr(sp + 1));
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<double> parse_cfs_quota(std::string_view quota, std::string_view period) {
  const auto q = to_int(quota), p = to_int(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;  // -1: no quota
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<double> cgroup_cpu_quota(const std::string& root, std::string_view proc_self_cgroup) {
  std::optional<double> best;
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    // "hierarchy-id:controllers:path"; v2 is "0::path".
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string_view path = std::string_view(line).substr(c2 + 1);
    if (controllers.empty()) {
      for (const auto& d : dirs_up_to(root, path))
        if (const auto t = read_file(d + "/cpu.max")) take_min(best, parse_cpu_max(*t));
      continue;
    }
    std::istringstream names(controllers);
    bool cpu = false;
    for (std::string n; std::getline(names, n, ',');) cpu = cpu || n == "cpu";
    if (!cpu) continue;
    // v1 mounts the cpu controller as cpu,cpuacct (with cpu/ a link to it) or as cpu alone.
    for (const std::string& mount : {root + "/" + controllers, root + "/cpu"})
      for (const auto& d : dirs_up_to(mount, path)) {
        const auto q = read_file(d + "/cpu.cfs_quota_us"), p = read_file(d + "/cpu.cfs_period_us");
        if (q && p) take_min(best, parse_cfs_quota(*q, *p));
      }
  }
  return best;
}

int usable_cpus() {
  int cpus = 1;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
  if (const auto cg = read_file("/proc/self/cgroup"))
    if (const auto q = cgroup_cpu_quota("/sys/fs/cgroup", *cg))
      cpus = std::min(cpus, std::max(1, static_cast<int>(std::floor(*q))));
  return cpus;
}

}  // namespace fabricsim
