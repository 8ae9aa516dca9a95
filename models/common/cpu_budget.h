// How many CPUs this process may keep busy: its affinity mask (taskset, cpusets) capped by a CFS
// bandwidth quota of its cgroup (a container's `--cpus`, systemd's CPUQuota), which the mask does
// not show. The helper threads (sim.traffic_thread) are worth starting only with two or more:
// on one CPU they take the simulation thread's turns.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fabricsim {

// cgroup v2 `cpu.max` ("max 100000" or "150000 100000"): the quota in CPUs, or nullopt when there
// is none or the text is not of that form.
std::optional<double> parse_cpu_max(std::string_view text);

// cgroup v1 `cpu.cfs_quota_us` ("-1" or "150000") and `cpu.cfs_period_us` ("100000").
std::optional<double> parse_cfs_quota(std::string_view quota, std::string_view period);

// The tightest quota, in CPUs, of the cgroups named in `proc_self_cgroup` (the text of
// /proc/self/cgroup) and their ancestors, under the cgroup file systems mounted at `root`
// (/sys/fs/cgroup): v2 `cpu.max`, v1 `cpu,cpuacct/` or `cpu/` `cpu.cfs_quota_us`. Inside a
// container the paths may not exist; the root's own files still apply. nullopt: no quota.
std::optional<double> cgroup_cpu_quota(const std::string& root, std::string_view proc_self_cgroup);

// The CPUs in this process's affinity mask, capped by its cgroup quota (rounded down), at least 1.
int usable_cpus();

}  // namespace fabricsim
