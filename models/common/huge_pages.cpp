#include "models/common/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace fabricsim {

namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb=1";

// THP "always" or "madvise" (what malloc's madvise needs), not "never" or absent.
bool kernel_offers_thp() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s.find("[always]") != std::string::npos || s.find("[madvise]") != std::string::npos;
}

bool tunable_set() {
  const char* t = std::getenv("GLIBC_TUNABLES");
  return t && std::strstr(t, kTunable);
}

}  // namespace

void restart_with_huge_pages(char** argv) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)argv;
  return;
#else
  if (const char* e = std::getenv("FABRICSIM_HUGE_PAGES"); e && std::strcmp(e, "0") == 0) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb")) return;  // set (any value)
  if (const char* pre = std::getenv("LD_PRELOAD"); pre && std::strstr(pre, "vgpreload")) return;
  for (const char* mpi : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_ID"})
    if (std::getenv(mpi)) return;
  if (!kernel_offers_thp()) return;
  const std::string v =
      tunables && *tunables ? std::string(tunables) + ":" + kTunable : std::string(kTunable);
  if (setenv("GLIBC_TUNABLES", v.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // (exec failed: go on as we are, without the tunable in the environment of children)
  if (tunables)
    setenv("GLIBC_TUNABLES", tunables, 1);
  else
    unsetenv("GLIBC_TUNABLES");
#endif
}

bool heap_huge_pages() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;  // (their allocator, not malloc's)
#else
  static const bool on = tunable_set() && kernel_offers_thp();
  return on;
#endif
}

}  // namespace fabricsim
